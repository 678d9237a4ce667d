"""Where ``repro`` refuses or warns before running anything, in its own words: a manifest
whose identity differs (the hint depends on whether the manifest is this toolkit version's),
a recorded Python missing here (fatal: README "a repro refused", exit 2), a ``--source``
checkout at another commit or tree (the commit read here with real git), and a recorded
plan without steps. The bundled sample's plan made on this host is the recorded build."""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.manifests import for_plan, sample_plan
from toolkit import __version__
from toolkit.core.errors import EnvironmentProblem, UsageError
from toolkit.core.reporter import ListReporter
from toolkit.plan.layout import Layout
from toolkit.plan.model import Plan
from toolkit.run.sources import IGNORED, NO_COMMIT, tree_hash
from toolkit.verify import repro


def _sample(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Plan, Layout, dict[str, Any]]:
    plan, layout, _ = sample_plan(tmp_path, monkeypatch)
    return plan, layout, for_plan(plan, layout)


def _written(plan: Plan, layout: Layout, data: dict[str, Any]) -> Path:
    """``data`` as the build's manifest in its artifacts folder."""
    path = layout.artifacts(plan.build) / "manifest.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize(("version", "hint"), [
    ("0.0.0-elsewhere", "rebuild with the toolkit version the manifest names (0.0.0-elsewhere), "
                        "or inspect the manifest"),
    (__version__, f"this is the manifest's toolkit version ({__version__}): a local change to the "
                  "toolkit or its data (git status), or a plan that depends on the host (report "
                  "it with the manifest); compare with --dry-run"),
])
def test_an_identity_that_differs_is_refused_with_the_hint_for_the_manifests_version(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, version: str, hint: str) -> None:
    plan, layout, data = _sample(tmp_path, monkeypatch)
    data["toolkit_version"] = version
    data["targets"] = ["gfx942"]  # recorded for other targets than its identity says
    path = _written(plan, layout, data)
    with pytest.raises(UsageError) as err:
        repro.reproduce(str(path), ListReporter(), dry_run=True, workdir=str(layout.root))
    assert err.value.message.startswith("refusing: the build's identity differs from the "
                                        "manifest's: ")
    assert err.value.hint == hint and err.value.exit_code == 2


def test_a_recorded_python_missing_here_is_a_fatal_difference_naming_why() -> None:
    (diff,) = repro._interpreter_differences({"build": {"python": "3.1"}}, None)
    assert (diff.what, diff.manifest, diff.fatal) == ("Python interpreter", "3.1", True)
    assert diff.here.startswith("missing (") and "3.1" in diff.here


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True).stdout.strip()


def test_a_source_checkout_is_compared_by_commit_and_tree(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    plan, _, data = _sample(tmp_path, monkeypatch)
    repo = tmp_path / "src"
    repo.mkdir()
    (repo / "a.py").write_text("x = 1\n")
    _git(repo, "init", "-q")
    _git(repo, "add", "a.py")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "-m", "one")
    head = _git(repo, "rev-parse", "HEAD")
    tree = tree_hash(repo, IGNORED)
    here = dataclasses.replace(plan, source=str(repo))
    same = {**data, "source": {"sha": head, "tree": tree, "diff": None}}
    reporter = ListReporter()
    assert repro._tree_check(same, here, False, reporter) is True and reporter.lines == []
    # nothing recorded to compare, or no --source: nothing to check
    assert repro._tree_check({**data, "source": {"sha": head, "tree": None}}, here, False,
                             reporter) is True
    assert repro._tree_check(same, dataclasses.replace(plan, source=None), False, reporter) is True
    other = {**data, "source": {"sha": "1" * 40, "tree": "2" * 64, "diff": None}}
    with pytest.raises(UsageError) as err:
        repro._tree_check(other, here, False, reporter)
    assert err.value.message == (f"the source {repo} differs from the recorded one "
                                 f"(tree {tree[:12]}, recorded {'2' * 12}; "
                                 f"commit {head[:12]}, recorded {'1' * 12})")
    assert err.value.hint == ("restore it, or pass --force (the result is then never called "
                              "identical)")
    assert repro._tree_check(other, here, True, reporter) is False
    assert reporter.lines == [f"note: the source differs from the recorded one (tree {tree[:12]}, "
                              f"recorded {'2' * 12}; commit {head[:12]}, recorded {'1' * 12}); "
                              "going on because of --force"]
    # a recorded build of no git checkout: the all-zero commit
    with pytest.raises(UsageError) as err:
        repro._tree_check({**data, "source": {"sha": None, "tree": tree}}, here, False, reporter)
    assert f"commit {head[:12]}, recorded {NO_COMMIT[:12]}" in err.value.message
    with pytest.raises(UsageError) as err:
        repro._tree_check(same, dataclasses.replace(plan, source=str(tmp_path / "gone")), False,
                          reporter)
    assert err.value.message == f"the recorded --source {tmp_path / 'gone'} is not here"


def test_a_recorded_plan_without_steps_differs_from_the_one_planned_here(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plan, layout, data = _sample(tmp_path, monkeypatch)
    del data["plan"]["steps"]
    changes = repro.plan_differences(data, plan, layout)
    assert "the manifest's identity is not the digest of its own plan" in changes
    assert changes[-1].startswith("steps  recorded; check-env, create-env")


def test_host_differences_are_listed_and_a_fatal_one_refuses_without_force(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plan, layout, data = _sample(tmp_path, monkeypatch)
    data["sdk"] = {"provider": "system", "version": "9.9.0"}  # a ROCm release no machine has
    path = _written(plan, layout, data)
    reporter = ListReporter()
    with pytest.raises(UsageError) as err:
        repro.reproduce(str(path), reporter, dry_run=True, workdir=str(layout.root))
    assert err.value.message.startswith("refusing: reproduction would be meaningless here: "
                                        "ROCm 9.9.0 in the manifest, ")
    assert err.value.message.endswith(" here")
    assert err.value.hint == "run it on a matching machine, or pass --force"
    assert reporter.lines[0] == "host differences (never compared; the wheel's sha256 decides):"
    assert [ln for ln in reporter.lines if ln.startswith("REFUSE")] == \
        [ln for ln in reporter.lines if ln.startswith("REFUSE  ROCm: manifest 9.9.0; this machine ")]
    assert any(ln.startswith("REFUSE") for ln in reporter.lines)
    # the recorded tools were none: each one found here is a host difference, never fatal
    gcc = shutil.which("gcc")
    if gcc:
        first = subprocess.run([gcc, "--version"], capture_output=True, text=True).stdout
        assert f"  host  gcc: manifest none; this machine {first.splitlines()[0]}" in reporter.lines


def test_a_missing_system_rocm_refuses_the_repro_of_a_system_rocm_build(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A build on the system's ROCm, reproduced on a machine with no ROCm at all: a host
    difference that makes the comparison meaningless (README "Reproducing a build": it
    refuses, exit 2, one line; ``--force`` goes on). No ROCm is made real: no ROCM_PATH,
    ROCM_HOME or HIP_PATH, no hipcc on PATH, and the search's ``/opt`` played by an empty
    folder (this test's one stand-in: the machine's own /opt may hold a ROCm)."""
    from toolkit.env import rocm

    plan, layout, data = _sample(tmp_path, monkeypatch)
    for var in ("ROCM_PATH", "ROCM_HOME", "HIP_PATH"):
        monkeypatch.delenv(var, raising=False)
    (tmp_path / "opt").mkdir()
    (tmp_path / "empty-bin").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    real = rocm.find_system

    def without_opt(environ: Any = None, *, opt: Any = "/opt", want: str | None = None) -> Any:
        return real(environ, opt=tmp_path / "opt", want=want)
    monkeypatch.setattr(rocm, "find_system", without_opt)
    with pytest.raises(EnvironmentProblem, match="no system ROCm install found"):
        rocm.find_system()  # the stand-in: no ROCm here
    data["sdk"] = {"provider": "system", "version": "6.4.1"}
    path = _written(plan, layout, data)
    reporter = ListReporter()
    with pytest.raises(UsageError) as err:
        repro.reproduce(str(path), reporter, dry_run=True, workdir=str(layout.root))
    assert err.value.exit_code == 2 and "\n" not in err.value.message
    assert "ROCm" in err.value.message and "6.4.1" in err.value.message
    assert any(ln.startswith("REFUSE") and "ROCm" in ln for ln in reporter.lines), reporter.lines
    forced = ListReporter()
    assert repro.reproduce(str(path), forced, dry_run=True, workdir=str(layout.root), force=True) == 0


def test_an_interpreter_of_another_abi_is_a_fatal_difference() -> None:
    """The recorded interpreter (implementation, version, SOABI) against this one, as Python's
    own ``sys.implementation`` and ``sysconfig`` name it: the same is no difference, a debug
    build's ABI is a fatal one, named both ways."""
    import sysconfig

    major, minor = sys.version_info[:2]
    here = {"implementation": sys.implementation.name, "version": f"{major}.{minor}",
            "abi": sysconfig.get_config_var("SOABI")}
    python = here["version"]
    same = {"build": {"python": python}, "identity": {"interpreter": here}}
    assert repro._interpreter_differences(same, sys.executable) == []
    debug = {**here, "abi": "cpython-311d-x86_64-linux-gnu"}
    other = {"build": {"python": python}, "identity": {"interpreter": debug}}
    (diff,) = repro._interpreter_differences(other, sys.executable)
    assert (diff.what, diff.fatal) == ("Python", True)
    assert diff.manifest == f"{here['implementation']} {python} (cpython-311d-x86_64-linux-gnu)"
    assert diff.here == f"{here['implementation']} {python} ({here['abi']})"
