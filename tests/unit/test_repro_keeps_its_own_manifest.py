"""What a repro run leaves beside the build's manifest: its own ``repro-manifest.json`` and
``repro.log`` (the build's ``manifest.json`` stays byte for byte as CI wrote it), the
lines it prints when stopped at ``--step``, and the exit code it records when a step breaks
with an error no toolkit code named (README "Exit codes": 5, a build step failed; 6 is
"busy"). Driven on the bundled sample's plan made on this host, running only its first steps
(``check-env``, this interpreter, and ``create-env``): no build."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fixtures.manifests import for_plan, sample_plan
from toolkit.core.errors import CheckFailed, EnvironmentProblem
from toolkit.core.reporter import ListReporter
from toolkit.core.steps import CheckEnv
from toolkit.run import executor
from toolkit.verify import repro


@pytest.fixture
def manifest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    plan, layout, build = sample_plan(tmp_path, monkeypatch)
    path = layout.artifacts(build) / "manifest.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(for_plan(plan, layout)))
    return path


def _repro(manifest: Path, reporter: ListReporter, step: str = "check-env") -> int:
    return repro.reproduce(str(manifest), reporter, step=step, force=True,
                           workdir=str(manifest.parents[2]))


def test_a_repro_stopped_at_a_step_records_its_own_manifest_and_leaves_cis(manifest: Path) -> None:
    before = manifest.read_bytes()
    reporter = ListReporter()
    assert _repro(manifest, reporter, "create-env") == 0  # the plan's second step
    art = manifest.parent
    assert f"repro manifest: {art / 'repro-manifest.json'}" in reporter.lines
    assert reporter.lines[-1] == "stopped after create-env as asked: nothing to compare"
    assert manifest.read_bytes() == before
    assert sorted(p.name for p in art.iterdir()) == ["manifest.json", "repro-manifest.json",
                                                     "repro.log"]
    again = json.loads((art / "repro-manifest.json").read_text())
    assert again["outcome"] == "ok" and again["failure"] is None
    assert [s["name"] for s in again["steps"]] == ["check-env", "create-env"]


def test_a_step_broken_by_an_unnamed_error_is_recorded_as_exit_5(
        manifest: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(step: object, run: object) -> None:
        raise RuntimeError("a bug in a step")

    monkeypatch.setitem(executor.HANDLERS, CheckEnv, broken)
    before = manifest.read_bytes()
    with pytest.raises(RuntimeError, match="a bug in a step"):
        _repro(manifest, ListReporter())
    assert manifest.read_bytes() == before
    again = json.loads((manifest.parent / "repro-manifest.json").read_text())
    assert again["outcome"] == "failed" and again["error"] == "a bug in a step"
    # no step reported it failed (only the toolkit's errors, Ctrl-C and OSError are): "-"
    assert again["failure"] == {"step": "-", "exit_code": 5, "signature": ["a bug in a step"],
                                "log": str(manifest.parent / "repro.log")}


def _failed_in_ci(manifest: Path) -> None:
    data = json.loads(manifest.read_text())
    data.update(outcome="failed", failed_step="check-env", wheel=None, wheel_sha256=None,
                error="boom", failure={"step": "check-env", "exit_code": 4,
                                       "signature": ["boom"], "log": None})
    manifest.write_text(json.dumps(data))


def test_a_failure_that_does_not_happen_here_is_not_reproduced(manifest: Path) -> None:
    _failed_in_ci(manifest)
    reporter = ListReporter()
    with pytest.raises(CheckFailed) as err:
        repro.reproduce(str(manifest), reporter, force=True, workdir=str(manifest.parents[2]))
    assert err.value.message == "not reproduced: check-env passed here (CI: exit 4)"
    assert "the manifest records a failure at check-env: running up to it" in reporter.lines
    assert reporter.lines[-2:] == ["not reproduced: check-env passed here (CI: exit 4)",
                                   "  CI: boom"]


def test_the_same_failure_here_is_reproduced_from_the_repro_manifests_record(
        manifest: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def failing(step: object, run: object) -> None:
        raise EnvironmentProblem("boom")

    monkeypatch.setitem(executor.HANDLERS, CheckEnv, failing)
    _failed_in_ci(manifest)
    reporter = ListReporter()
    assert repro.reproduce(str(manifest), reporter, force=True,
                           workdir=str(manifest.parents[2])) == 0
    again = manifest.parent / "repro-manifest.json"
    assert f"repro manifest: {again}" in reporter.lines
    recorded = json.loads(again.read_text())["failure"]
    assert (recorded["step"], recorded["exit_code"], recorded["signature"]) == \
        ("check-env", 4, ["boom"])
    assert reporter.lines[-2:] == ["reproduced: check-env failed here as in CI (exit 4)", "  boom"]


def test_a_repro_stopped_by_ctrl_c_records_it_and_still_stops(
        manifest: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C (SIGINT, Python's KeyboardInterrupt) during a step: the repro stops (the entry
    points make it exit 130) and its own manifest says it was interrupted, not "running";
    CI's manifest is untouched."""
    def pressed(step: object, run: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setitem(executor.HANDLERS, CheckEnv, pressed)
    before = manifest.read_bytes()
    with pytest.raises(KeyboardInterrupt):
        _repro(manifest, ListReporter())
    assert manifest.read_bytes() == before
    again = json.loads((manifest.parent / "repro-manifest.json").read_text())
    assert (again["outcome"], again["error"]) == ("interrupted", "interrupted")
