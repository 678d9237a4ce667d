"""A recorded build of a project outside the matrix is made again from its source, and only
if the source is still the project the manifest recorded (name and version, as its build
backend reports them: setup.py of tests/projects/own_flat says flat-ext 0.2.0)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from build.__main__ import main_parser as build_parser
from packaging.requirements import Requirement

from toolkit.core.errors import UsageError
from toolkit.data.matrix import load_matrix
from toolkit.data.matrix import load_matrix as load_data_matrix
from toolkit.env.host import HostFacts, SystemRocm
from toolkit.plan.layout import Layout
from toolkit.plan.model import Options
from toolkit.plan.planner import plan
from toolkit.plan.recipes import REGISTRY, standalone_build
from toolkit.plan.recipes import load_matrix as load_checked_matrix
from toolkit.plan.recipes.generic import _recorded_rocm, generic_build, torch_of_pair
from toolkit.plan.recipes.sample import demo_rocm

PROJECT = Path(__file__).parent.parent / "projects" / "own_flat"


def _recorded(dist: str, version: str) -> dict[str, Any]:
    return {"recipe": "generic", "dist": dist,
            "build": {"id": f"{dist}-{version}-cp312-cpu", "version": version, "python": "3.12",
                      "rocm": "cpu", "torch": ""},
            "sdk": {"provider": "none", "root": None}}


def test_the_recorded_project_is_read_again_from_its_source(tmp_path: Path) -> None:
    build = standalone_build("flat-ext-0.2.0-cp312-cpu", _recorded("flat-ext", "0.2.0"), str(PROJECT),
                             tmp_path / "meta.log")
    assert build is not None
    assert (build.package.recipe, build.package.dist, build.version, build.python) == \
        ("generic", "flat-ext", "0.2.0", "3.12")
    assert build.rocm.version == "cpu"


def test_another_version_at_the_source_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UsageError,
                       match=re.escape("is flat-ext 0.2.0; the manifest built flat-ext 0.3.0")) as err:
        standalone_build("flat-ext-0.3.0-cp312-cpu", _recorded("flat-ext", "0.3.0"), str(PROJECT),
                         tmp_path / "meta.log")
    # the refusal names the folder read, then what it holds
    assert err.value.message.startswith(f"refusing: the project at {PROJECT} is flat-ext 0.2.0;")


def test_no_source_is_a_usage_error_naming_the_flag() -> None:
    with pytest.raises(UsageError, match="--source PATH") as err:
        standalone_build("flat-ext-0.2.0-cp312-cpu", _recorded("flat-ext", "0.2.0"))
    # why (no source for the manifest's project here), then the flag that gives one
    assert err.value.message.startswith("the manifest's project has no source here"), err.value.message
    assert err.value.message.endswith(": give --source PATH"), err.value.message


def test_a_matrix_manifest_is_no_standalone_build() -> None:
    recorded = {"recipe": "apex", "build": {"id": "apex-1.8.0-cp312-rocm7.0"}}
    assert standalone_build("apex-1.8.0-cp312-rocm7.0", recorded) is None


def test_only_matrix_packages_are_pinned_to_the_recorded_commit() -> None:
    """apex and fbgemm_gpu are checked out at the manifest's commit; the sample is the
    toolkit's own and a project outside the matrix is the folder given."""
    from toolkit.plan.recipes import load_matrix

    pinned = {name for name, r in REGISTRY.items() if r.pins_recorded_source}
    assert pinned == {p.recipe for p in load_matrix().packages.values()} >= {"apex", "fbgemm_gpu"}


LAYOUT = Layout(Path("/w"), Path("/c"))


def test_a_project_outside_the_matrix_installs_its_backends_requirements_but_torch() -> None:
    rocm = demo_rocm(("/opt/rocm", "5.2"))
    build = generic_build("my_ext", "my-ext", "1.2.3", "/src/my_ext", "3.12", rocm,
                          requires=("setuptools>=64", "Torch>=2", "ninja"))
    assert build.rocm is rocm and build.package.dist == "my-ext" and build.pkg_version.rocm == ("5.2",)
    host = HostFacts(cores=16, mem_available_gib=64.0, interpreters={"3.12": "/usr/bin/python3.12"},
                     system_rocm=SystemRocm("/opt/rocm", "5.2"))
    opts = Options(gfx=("gfx90a", "gfx908"), rocm_from="system", source="/src/my_ext")
    p = plan(load_matrix(), build, opts, host, LAYOUT)
    install = p.step("install-requirements")
    assert install.description == ("install what my-ext's build backend asks for (setuptools>=64, ninja), "
                                   "and the build front-end")
    # "Torch" is torch (PEP 503 names are compared lower-cased): the environment provides it
    names = [Requirement(r).name for r in install.action.argv[5:]]  # type: ignore[union-attr]
    assert names == ["build", "setuptools", "ninja"]
    wheel = p.step("build-wheel")
    assert wheel.description == "build my-ext 1.2.3 for gfx90a;gfx908"
    args = build_parser().parse_args(list(wheel.action.build.argv[3:]))  # type: ignore[union-attr]
    assert wheel.action.build.argv[1:3] == ("-m", "build") and args.no_isolation  # type: ignore[union-attr]
    assert torch_of_pair([load_matrix().build("apex-1.8.0-cp312-rocm7.0")]) == \
        load_matrix().build("apex-1.8.0-cp312-rocm7.0").pkg_version.torch


def test_the_torch_of_a_pair_is_its_newest_by_version_not_by_text() -> None:
    import dataclasses

    b = load_matrix().build("apex-1.8.0-cp312-rocm7.0")
    builds = [dataclasses.replace(b, pkg_version=dataclasses.replace(b.pkg_version, torch=t))
              for t in ("2.9", "2.10", "2.8")]
    assert torch_of_pair(builds) == "2.10" and torch_of_pair([]) == ""


def test_a_recorded_generic_build_gets_back_the_system_rocm_or_the_cpu_variant() -> None:
    rocm = _recorded_rocm({"build": {"rocm": "5.2", "python": "3.12"},
                           "sdk": {"root": "/opt/rocm-5.2"}})
    assert (rocm.version, rocm.sdk.provider, rocm.sdk.version) == ("5.2", "system", "5.2")
    # no recorded root: the default system install
    assert _recorded_rocm({"build": {"rocm": "5.2"}, "sdk": {}}).version == "5.2"
    cpu = _recorded_rocm({"build": {"rocm": "cpu"}, "sdk": {}})
    assert (cpu.version, cpu.sdk.provider) == ("cpu", "none")


def test_a_recorded_session_build_with_torch_gets_the_matrix_release() -> None:
    matrix = load_data_matrix()
    version = sorted(matrix.rocm)[-1]
    got = _recorded_rocm({"build": {"rocm": version, "torch": "2.9"}, "sdk": {}})
    assert got == matrix.rocm[version]


def test_a_generic_build_records_a_ref_git_resolves(tmp_path: Path) -> None:
    import subprocess

    from toolkit.plan.recipes.generic import generic_build

    build = generic_build("demo", "demo", "1.0", str(tmp_path), "3.12", load_checked_matrix().rocm["7.1"])
    git = ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "x"], check=True)
    # git names the checked-out commit HEAD, case-sensitively (gitrevisions(7))
    done = subprocess.run([*git, "rev-parse", "--verify", "-q", build.pkg_version.ref],
                          capture_output=True, text=True)
    assert done.returncode == 0 and len(done.stdout.strip()) == 40


def test_repro_makes_the_recorded_project_again_from_the_source_given(tmp_path: Path) -> None:
    """repro of a manifest of a project outside the matrix, --source given: the build is the
    project at that folder (its setup.py: flat-ext 0.2.0), its metadata read with a log in the
    work folder."""
    from toolkit.verify import repro

    build = repro._build(_recorded("flat-ext", "0.2.0"), str(PROJECT), tmp_path)
    assert (build.package.recipe, build.package.dist, build.version) == \
        ("generic", "flat-ext", "0.2.0")
    assert build.package.repo == str(PROJECT)  # the folder given is the source
    assert (tmp_path / "build").is_dir()  # the metadata log is written under the work folder
