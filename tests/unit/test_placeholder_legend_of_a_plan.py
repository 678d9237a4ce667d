"""The legend under a rendered plan ("# placeholders filled while running:"): each placeholder
the steps show, with what it stands for and the step that learns it. Judged against the plan
itself (the step a line names is a step of that plan, at or before the first step that shows
the placeholder: a value is learned before it is used) and against the tools the values come
from: ``python -m rocm_sdk path --root/--bin/--cmake`` (the ROCm pip SDK's CLI, which
toolkit/env/rocm.py runs), Python's sysconfig variables LDSHARED and LDCXXSHARED, gcc's
``-ffile-prefix-map=OLD=NEW`` option, and the work folder's layout for the manifest."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from toolkit.data.matrix import load_matrix
from toolkit.env.host import HostFacts
from toolkit.plan.layout import Layout
from toolkit.plan.model import Options, render
from toolkit.plan.planner import plan

LAYOUT = Layout(Path("/w"), Path("/c"))
LEGEND = "\n# placeholders filled while running:\n"
# a pip-SDK build planned with two variant wheels (ROCM_*, VARIANT_WHEEL) and one that
# provides a library (TBB_LIB_DIR): together every placeholder a plan can show
BUILDS = [("apex-1.9.0-cp310-rocm7.13", Options(gfx=("gfx90a", "gfx942"), variants=True)),
          ("fbgemm_gpu-1.3.0-cp312-rocm6.4", Options(gfx=("gfx90a",)))]
LEARNER = re.compile(r"(?P<what>.+) \((?:learned by )?(?P<step>(?:each )?[a-z][a-z0-9<>-]*)(?:; [^)]*)?\)")


def _legend(build_id: str, options: Options) -> tuple[list[str], dict[str, str], str]:
    """The plan's step names in order, its legend (placeholder -> what it stands for) and the
    text of its steps."""
    m = load_matrix()
    p = plan(m, m.build(build_id), options, HostFacts(cores=16, mem_available_gib=64.0), LAYOUT)
    steps, legend = render(p).split(LEGEND)
    lines = legend.splitlines()
    assert all(line.startswith("#   {") and " = " in line for line in lines), lines
    return ([s.name for s in p.steps],
            dict(line.removeprefix("#   ").split(" = ", 1) for line in lines), steps)


def _first_use(steps_text: str, placeholder: str) -> int:
    """The index of the first rendered step ("[i/n] name ...") whose lines show it."""
    blocks = re.split(r"\n(?=\[\d+/\d+\] )", steps_text)[1:]
    return next(i for i, block in enumerate(blocks) if placeholder in block)


@pytest.mark.parametrize(("build_id", "options"), BUILDS)
def test_each_learned_value_names_a_step_of_the_plan_that_runs_before_its_use(
        build_id: str, options: Options) -> None:
    names, legend, steps = _legend(build_id, options)
    for placeholder, what in legend.items():
        if placeholder in ("{SHA8}", "{PATH}", "{MANIFEST}"):  # derived, inherited, written
            continue
        m = LEARNER.fullmatch(what)
        assert m, (placeholder, what)
        step = m["step"]
        learners = [i for i, n in enumerate(names)
                    if n == step or (step.startswith("each ") and
                                     re.fullmatch(re.escape(step[5:]).replace("<gfx>", "gfx[0-9a-z]+"), n))]
        assert learners, (placeholder, step, names)
        assert min(learners) <= _first_use(steps, placeholder), (placeholder, step)
        # each reads on from " = " as a phrase: a lower-case word, an option or a command
        assert re.match(r"[a-z-]", m["what"]), (placeholder, what)


def test_the_sdk_paths_are_what_rocm_sdk_path_prints() -> None:
    _, legend, _ = _legend(*BUILDS[0])
    for kind in ("root", "bin", "cmake"):
        assert legend[f"{{ROCM_{kind.upper()}}}"] == \
            f"python -m rocm_sdk path --{kind} (learned by install-rocm-sdk)"


def test_the_link_commands_and_the_prefix_map_name_their_sources() -> None:
    _, legend, _ = _legend(*BUILDS[0])
    for var in ("LDSHARED", "LDCXXSHARED"):  # sysconfig.get_config_var(var) of the env's Python
        m = LEARNER.fullmatch(legend[f"{{{var}}}"])
        assert m is not None and m["what"] == f"the env interpreter's {var} minus absolute -Wl,-rpath flags"
    prefix_map = LEARNER.fullmatch(legend["{PYTHON_PREFIX_MAP}"])
    assert prefix_map is not None and prefix_map["step"] == "build-wheel"
    assert prefix_map["what"].startswith("-ffile-prefix-map=<the interpreter's prefix>=/python, ")
    assert legend["{TORCH_LIB}"].startswith("the installed torch's lib/ folder (")


def test_the_short_commit_and_the_manifest_are_explained_by_what_they_are() -> None:
    _, legend, steps = _legend(*BUILDS[0])
    # the local version's git{SHA8}: the first 8 hex digits of the commit get-sources learns
    assert "git{SHA8}" in steps and re.fullmatch(r"[a-z]+ first 8 hex digits", legend["{SHA8}"])
    # a run writes its manifest as manifest.json in the build's artifacts folder (Layout), a
    # repro its own repro-manifest.json (toolkit/verify/repro.py)
    assert LAYOUT.artifacts_rel("b") == "/w/artifacts/b"
    what = legend["{MANIFEST}"]
    assert what.startswith("the manifest this run writes (artifacts/<id>/manifest.json; ")
    assert what.endswith("; a repro's repro-manifest.json)")
