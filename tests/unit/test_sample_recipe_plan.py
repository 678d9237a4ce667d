"""The plan for the bundled HIP sample (``python -m toolkit demo``): its build command is one
pypa/build accepts, its sources are copied from the contributor's checkout, and its modules are
the ones its setup.py builds."""

from __future__ import annotations

from pathlib import Path

import pytest
from build.__main__ import main_parser as build_parser
from packaging.requirements import Requirement

from tests.unit.plan_truths import demo_plan
from toolkit.core.steps import BuildWheel, CopySources
from toolkit.plan.layout import Layout
from toolkit.plan.model import Plan
from toolkit.plan.recipes.sample import EXAMPLE, demo_build

LAYOUT = Layout(Path("/w"), Path("/c"))


def _demo(hip: tuple[str, str] | None) -> Plan:
    return demo_plan(hip)  # type: ignore[no-any-return]


@pytest.mark.parametrize("hip", [("/opt/rocm", "5.2"), None])
def test_the_samples_build_command_is_what_pypa_build_accepts(hip: tuple[str, str] | None) -> None:
    p = _demo(hip)
    action = p.step("build-wheel").action
    assert isinstance(action, BuildWheel)
    argv = action.build.argv
    assert argv[1:3] == ("-m", "build")  # `python -m build` runs pypa/build (its README)
    args = build_parser().parse_args(list(argv[3:]))  # build's own parser: unknown flags exit 2
    assert args.distributions == ["wheel"] and args.no_isolation
    assert args.outdir == action.wheelhouse == str(LAYOUT.build_dir(p.build) / "wheelhouse")
    assert args.srcdir == action.worktree
    assert action.env_dir == str(LAYOUT.env_dir(p.build))
    # the CPU variant is chosen by the environment variable the sample's setup.py reads
    setup_py = (EXAMPLE / "setup.py").read_text()
    if hip is None:
        assert dict(action.build.env)["HIP_SAMPLE_VARIANT"] == "cpu"
        assert 'os.environ.get("HIP_SAMPLE_VARIANT") == "cpu"' in setup_py
        assert p.step("build-wheel").description == "build hip_sample's CPU variant (no GPU code)"
    else:
        assert "HIP_SAMPLE_VARIANT" not in dict(action.build.env)
        assert p.step("build-wheel").description == "build hip_sample for gfx90a"
    install = p.step("install-requirements").action.argv  # type: ignore[union-attr]
    assert install[1:3] == ("pip", "install")  # `uv pip install` (uv's docs)
    names = {Requirement(r).name.lower() for r in install[5:]}
    assert names == {"build", "wheel", "setuptools"}  # what python -m build --no-isolation needs


def test_the_sample_is_copied_from_the_contributors_checkout_into_the_worktree() -> None:
    p = _demo(("/opt/rocm", "5.2"))
    get = p.step("get-sources")
    assert isinstance(get.action, CopySources)
    assert (get.action.source, get.action.worktree) == (str(EXAMPLE), str(LAYOUT.worktree(p.build)))
    # the sample has no submodules: nothing is said about them
    assert get.description == f"use the contributor's checkout {EXAMPLE} (copied, never modified)"
    wheel = p.step("build-wheel").action
    assert isinstance(wheel, BuildWheel)
    # the planner asks for LDSHARED to be cleaned: the build step says from which Python
    env_python = str(LAYOUT.env_dir(p.build) / "bin" / "python")
    assert dict(wheel.build.env)["LDSHARED"] == "{LDSHARED}" and wheel.sanitize_ldshared == env_python


def test_the_samples_modules_are_the_ones_its_setup_py_builds() -> None:
    from toolkit.plan.recipes.sample import SampleRecipe

    setup_py = (EXAMPLE / "setup.py").read_text()
    mods = SampleRecipe().expected_modules(demo_build("3.12", None).pkg_version)
    assert mods == ("hip_sample", "hip_sample._native")
    assert 'Extension("hip_sample._native"' in setup_py and (EXAMPLE / "src" / "hip_sample").is_dir()
    # a manifest's recorded build is rebuilt for the recorded ROCm
    build = SampleRecipe().standalone("hip_sample-0.1.0-cp312-rocm5.2",
                                      {"sdk": {"root": "/opt/rocm-5.2"}, "build": {"rocm": "5.2"}})
    assert build is not None and build.id == "hip_sample-0.1.0-cp312-rocm5.2"
    # a manifest without an "sdk" record (an older schema) still names the ROCm it built with
    older = SampleRecipe().standalone("hip_sample-0.1.0-cp312-rocm5.2", {"build": {"rocm": "5.2"}})
    assert older is not None and older.rocm.version == "5.2"


def test_the_copy_step_explains_the_dirty_source_rule_of_the_readme() -> None:
    """README (exit codes): a source with uncommitted changes is exit 12 unless --allow-dirty,
    which builds it named ``+…dirty``. The copy step's explanation says so in those words
    (whole words: a readable sentence, not just the substrings)."""
    import re

    text = " ".join(CopySources("/home/me/proj", "/work/src/b").explain())
    assert re.search(r"uncommitted changes .*: refused \(exit 12\) unless --allow-dirty\b", text), text
    assert re.search(r"\blearn DIFF, their sha256\b", text), text
    assert re.search(r"\(the wheel is named \+\S*dirty\)", text), text
