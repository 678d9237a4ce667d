"""One ``report --manifests`` row per hand-written manifest: the label it is shown under, the
step a failure names (schema 5's ``failure.step`` over schema 4's ``failed_step``), and an
outcome the toolkit never writes counted as a failure, never as a pass."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from toolkit.verify.report import read_build

BID = "cfail-0.1.0-cp311-cpu"


def _manifest(tmp_path: Path, **fields: Any) -> Path:
    path = tmp_path / BID / "manifest.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"build": {"id": BID, "package": "cfail", "version": "0.1.0",
                                          "python": "3.11", "rocm": "cpu"}, **fields}))
    return path


def test_a_row_is_shown_under_its_label_else_its_path(tmp_path: Path) -> None:
    path = _manifest(tmp_path, outcome="ok")
    assert read_build(path, "cfail/manifest.json").source == "cfail/manifest.json"
    row = read_build(path)
    assert (row.kind, row.source, row.name, row.outcome) == ("build", str(path), BID, "passed")
    assert (row.reason, row.exit_code, row.signature) == (None, None, ())


def test_the_failure_objects_step_wins_over_the_schema_4_field(tmp_path: Path) -> None:
    path = _manifest(tmp_path, outcome="failed", failed_step="check",
                     failure={"step": "build-wheel", "exit_code": 5, "signature": ["e", 7]})
    row = read_build(path)
    assert (row.outcome, row.reason, row.exit_code, row.signature) == \
        ("failed", "failed at build-wheel", 5, ("e", "7"))
    old = read_build(_manifest(tmp_path, outcome="interrupted", failed_step="check"))
    assert (old.outcome, old.reason, old.exit_code) == ("failed", "interrupted at check", None)
    odd = read_build(_manifest(tmp_path, outcome="failed",
                               failure={"step": "smoke", "exit_code": "5", "signature": "x"}))
    assert (odd.reason, odd.exit_code, odd.signature) == ("failed at smoke", None, ())


def test_an_outcome_no_build_writes_is_a_failure_without_a_reason(tmp_path: Path) -> None:
    for outcome in ("exploded", None):
        row = read_build(_manifest(tmp_path, outcome=outcome))
        assert (row.outcome, row.reason) == ("failed", None)
    running = read_build(_manifest(tmp_path, outcome="running"))
    assert (running.outcome, running.reason) == \
        ("failed", "still 'running': the run ended without recording its outcome")
