"""The shipped known failure (toolkit/data/known_failures.toml), from the real data.

therock-torch-2.13-no-gfx90c: TheRock's release matrix builds its torch 2.13 for no gfx90c
(ROCm/TheRock@89553ce37 and @c0f14ee2c configure_pytorch_release_matrix.py). The entry states
its scope (apex, torch 2.13, ROCm >= 7.15): the builds it selects are those of the matrix in
that scope, filtered here by hand from the builds (not by the entry's matcher), so a new ROCm
release building torch 2.13 changes no expectation. Today (apex 1.13.0 on TheRock's 7.15,
10.0 and 10.1, its Pythons 3.10-3.14; apex 1.13's 3.14t is not among them) that is 15 builds;
apex-1.13.0-cp312-rocm10.1 is one of them, and none below 7.15 or of another torch is.
"""

from __future__ import annotations

import json

import pytest
from packaging.version import Version

from toolkit.cli.main import main
from toolkit.data.matrix import load_matrix

ENTRY = "therock-torch-2.13-no-gfx90c"
BUILD = "apex-1.13.0-cp312-rocm10.1"


def _in_scope() -> set[str]:
    """apex builds on torch 2.13 from ROCm 7.15 on: the entry's scope, by hand."""
    return {b.id for b in load_matrix().builds if b.package.name == "apex"
            and b.pkg_version.torch_minor == "2.13" and Version(b.rocm.version) >= Version("7.15")}


SELECTED = _in_scope()


def test_it_selects_the_builds_worked_out_by_hand(capsys: pytest.CaptureFixture[str]) -> None:
    assert BUILD in SELECTED and "apex-1.13.0-cp312-rocm7.2" not in SELECTED
    assert main(["matrix", "--format", "json", "--package", "apex"]) == 0
    builds = json.loads(capsys.readouterr().out)
    carried = {b["id"] for b in builds if ENTRY in [k["id"] for k in b["known_failures"]]}
    assert carried == SELECTED


def test_plan_for_gfx90c_is_refused_in_one_line_with_exit_7(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", BUILD, "--gfx", "gfx90c"]) == 7
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert f"known failure {ENTRY}: step install-torch fails: " in err[0]
    assert "no amd-torch-device-gfx90c 2.13" in err[0]
    assert "ROCm/TheRock@430a8a89c build_tools/github_actions/configure_pytorch_release_matrix.py" \
        in err[0]
    assert "--include-known-failures" in err[0]


def test_other_targets_and_the_retry_are_planned(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", BUILD, "--gfx", "gfx942"]) == 0
    assert ENTRY not in capsys.readouterr().out
    assert main(["plan", BUILD, "--gfx", "gfx90c", "--include-known-failures"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"# known failure {ENTRY}:")
    # the step the entry expects to fail names the package TheRock does not build
    assert "'amd-torch-device-gfx90c>=2.13,<2.14'" in out


def test_the_ci_matrix_never_builds_it(capsys: pytest.CaptureFixture[str]) -> None:
    # gfx90c has no test runner class (ci.toml): no trigger can request it, so this entry
    # never removes a CI row; the rows for the families CI builds stay
    assert main(["matrix", "--format", "github", "--trigger", "schedule", "--package", "apex",
                 "--families", "gfx90c"]) == 2
    capsys.readouterr()
    assert main(["matrix", "--format", "github", "--trigger", "push", "--package", "apex",
                 "--rocm", "10.1"]) == 0
    rows = json.loads(capsys.readouterr().out)["include"]
    assert {r["id"] for r in rows if r["version"] == "1.13.0"} == \
        {b for b in SELECTED if b.endswith("rocm10.1")}


def test_the_torch_2_11_entry_selects_its_scope_only(capsys: pytest.CaptureFixture[str]) -> None:
    """therock-torch-2.11-no-gfx90c: apex with torch 2.11 on every ROCm from 7.15 on (each
    release read on its own line excludes gfx90c for 2.11; the 7.13 and 7.14 tags do not):
    worked out by hand from the JSON matrix, not through the entry's matcher."""
    from packaging.version import Version

    assert main(["matrix", "--format", "json", "--package", "apex"]) == 0
    builds = json.loads(capsys.readouterr().out)
    carried = {b["id"] for b in builds
               if "therock-torch-2.11-no-gfx90c" in [k["id"] for k in b["known_failures"]]}
    scope = {b["id"] for b in builds
             if b["torch"].startswith("2.11") and Version(b["rocm"]) >= Version("7.15")}
    assert scope and carried == scope
    earlier = sorted(b["id"] for b in builds
                     if b["torch"].startswith("2.11") and Version(b["rocm"]) < Version("7.15"))
    assert earlier, "torch 2.11 builds before 7.15 exist (7.13, 7.14, upstream's 7.1, 7.2)"
    some = sorted(scope)[0]
    assert main(["plan", some, "--gfx", "gfx90c"]) == 7
    assert "ROCm/TheRock@" in capsys.readouterr().err
    assert main(["plan", earlier[-1], "--gfx", "gfx90c"]) != 7  # not a known failure there
