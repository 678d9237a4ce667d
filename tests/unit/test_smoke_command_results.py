"""`toolkit smoke` and `nox -s smoke-<py>-rocm<rocm>`: the summary a user reads, the exit code
(README "## Exit codes": 1 a smoke test failed, 4 environment problem, 9 timed out), where each
build's JUnit XML goes, and which builds of a pair are smoke-tested: hand-written manifests
and hand-counted tables."""

from __future__ import annotations

import io
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from toolkit.cli.commands import smoke as command
from toolkit.core.errors import CheckFailed, EnvironmentProblem
from toolkit.verify.smoke import Case, SmokeOutcome, SmokeTarget


def _row(out: str, build: str) -> list[str]:
    line = next(x for x in out.splitlines() if build in x and "│" in x)
    return [c.strip() for c in line.strip("│ ").split("│")]


def test_the_table_counts_errors_as_failures_and_skips_apart(capsys: pytest.CaptureFixture[str]) -> None:
    outcome = SmokeOutcome("b-1", ("gfx90a", "gfx942"), [
        Case("t.py::a", "passed"), Case("t.py::b", "failed", "\n  boom\nmore"), Case("t.py::c", "error", ""),
        Case("t.py::d", "skipped", "no GPU"), Case("t.py::e", "skipped", "no GPU"),
        Case("t.py::f", "passed")],
        junit=Path("/tmp/out.xml"))
    command.show([outcome, SmokeOutcome("b-2", ("gfx90a",), returncode=5)])
    out = capsys.readouterr().out
    assert _row(out, "b-1") == ["b-1", "gfx90a, gfx942", "2", "2", "2", "FAILED"]
    assert _row(out, "b-2") == ["b-2", "gfx90a", "0", "0", "0", "FAILED"]
    assert "  FAILED t.py::b: boom" in out and "more" not in out
    assert "  FAILED t.py::c: (no message)" in out
    assert "  skipped (2): no GPU" in out
    assert "  JUnit XML: /tmp/out.xml" in out
    assert "  b-2: no test ran (pytest exit 5)" in out
    assert "b-1: no test ran" not in out


def test_a_failed_smoke_run_is_exit_1_naming_each_build_and_test() -> None:
    good = SmokeOutcome("ok-1", ("gfx90a",), [Case("t.py::a", "passed")])
    bad = SmokeOutcome("b-1", ("gfx90a",), [Case("t.py::a", "failed"), Case("t.py::b", "error"),
                                            Case("t.py::c", "passed")])
    empty = SmokeOutcome("b-2", ("gfx90a",), returncode=4)
    with pytest.raises(CheckFailed) as err:
        command.finish([good, bad, empty])
    assert err.value.exit_code == 1
    assert err.value.message == ("smoke tests failed: b-1: t.py::a, t.py::b; "
                                 "b-2: no test ran (pytest exit 4)")
    assert command.finish([good, good]) == 0


def test_one_junit_file_per_build_when_a_pair_has_several() -> None:
    t = SmokeTarget("apex-1.9.0-cp312-rocm7.0", {"build": {}}, Path("/e"))
    assert command._junit_for(None, t, 3) is None
    assert command._junit_for("", t, 1) is None
    assert command._junit_for("ci/smoke.xml", t, 1) == Path("ci/smoke.xml")
    assert command._junit_for("ci/smoke.xml", t, 2) == Path("ci/smoke-apex-1.9.0-cp312-rocm7.0.xml")


def _manifest(workdir: Path, package: str, python: str, rocm: str, outcome: str = "ok") -> str:
    """A build's manifest as builds write it: the id made of its fields."""
    build_id = f"{package}-1.0-cp{python.replace('.', '')}-rocm{rocm}"
    path = workdir / "artifacts" / build_id / "manifest.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"build": {"id": build_id, "package": package, "version": "1.0",
                                          "python": python, "rocm": rocm, "torch": ""},
                                "outcome": outcome, "env_dir": str(workdir / "env")}))
    return build_id


def test_a_pairs_builds_are_those_of_its_python_rocm_and_packages(tmp_path: Path) -> None:
    from toolkit.verify.smoke import manifests

    a = _manifest(tmp_path, "apex", "3.12", "7.0")
    b = _manifest(tmp_path, "fbgemm_gpu", "3.12", "7.0")
    _manifest(tmp_path, "apex", "3.11", "7.0")
    _manifest(tmp_path, "apex", "3.12", "6.4")
    found = manifests(tmp_path)
    assert len(found) == 4
    assert sorted(t.build_id for t in command._pair_targets(found, "3.12", "7.0", set())) == sorted([a, b])
    assert [t.build_id for t in command._pair_targets(found, "3.12", "7.0", {"apex"})] == [a]
    assert command._pair_targets(found, "3.13", "7.0", set()) == []


def test_only_succeeded_builds_are_smoked_and_the_others_named(capsys: pytest.CaptureFixture[str]) -> None:
    ok = SmokeTarget("ok-1", {"outcome": "ok"}, Path("/e"))
    failed = SmokeTarget("bad-1", {"outcome": "failed"}, Path("/e"))
    odd = SmokeTarget("odd-1", {"outcome": "\x1b[2Jweird"}, Path("/e"))
    assert command._succeeded([ok, failed, odd]) == [ok]
    out = capsys.readouterr().out.splitlines()
    assert out[0] == ("smoke: bad-1 passed over: its build did not succeed (outcome failed); "
                      "smoke it with `python -m toolkit smoke --build bad-1`")
    assert "\x1b" not in out[1] and "odd-1" in out[1]


def test_a_pair_without_builds_names_the_builds_that_have_a_manifest(tmp_path: Path) -> None:
    other = _manifest(tmp_path, "apex", "3.11", "6.4")
    args = SimpleNamespace(workdir=str(tmp_path), package=[])
    with pytest.raises(EnvironmentProblem) as err:
        command._pair_builds("3.12", "7.0", args)
    assert err.value.exit_code == 4
    assert "Python 3.12 / ROCm 7.0" in err.value.message and other in err.value.message
    assert err.value.hint is not None and "nox -s build-3.12-rocm7.0" in err.value.hint
    assert "--workdir DIR" in err.value.hint
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(EnvironmentProblem) as err:
        command._pair_builds("3.12", "7.0", SimpleNamespace(workdir=str(empty), package=[]))
    assert "(builds with a manifest: none)" in err.value.message


def test_a_broken_environment_is_that_builds_error_case_only(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    target = SmokeTarget("b-1", {"build": {"id": "b-1", "package": "p"}, "targets": ["gfx90a"]},
                         tmp_path / "no-env")
    args = SimpleNamespace(junit=None, require_gpu=False, workers=None, test_timeout=None, timeout=None)
    outcome = command._smoke_or_broken(target, None, args, None)
    assert outcome.build_id == "b-1" and outcome.targets == ("gfx90a",)
    assert outcome.returncode == EnvironmentProblem.exit_code == 4
    (case,) = outcome.cases
    assert (case.name, case.outcome) == ("environment", "error") and "no-env" in case.message
    assert not outcome.ok
    capsys.readouterr()
    named = command._smoke_or_broken(target, ("gfx942",), args, None)
    assert named.targets == ("gfx942",)
    line = capsys.readouterr().out.splitlines()[0]
    assert line.startswith("smoke: b-1 in ") and line.endswith(" for gfx942")


def test_a_build_without_targets_is_told_to_give_gfx(tmp_path: Path) -> None:
    from toolkit.core.errors import UsageError

    target = SmokeTarget("b-1", {"build": {"id": "b-1", "package": "p"}}, tmp_path)
    with pytest.raises(UsageError, match="b-1 names no gfx targets; give --gfx"):
        command.smoke_one(target, None, SimpleNamespace(junit=None), out=io.StringIO())
