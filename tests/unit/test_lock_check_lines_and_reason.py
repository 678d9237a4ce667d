"""The words of ``nox -s lock-3.12-rocm7.0 -- --check``: one line per lock, its state padded
to one column then its path (``missing   locks/...``), and the session's reason counting the
locks that are not current out of all of them with their states, sorted and each once (README
"## Exit codes": 1 for stale locks). Locks are written by hand, no pip-compile runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fixtures.nox_runs import aborted, in_nox
from toolkit.cli import sessions

ROOT = Path(__file__).resolve().parents[2]


def _check(work: Path) -> tuple[str, int]:
    return aborted(in_nox(lambda s: sessions.lock(s, "3.12", "7.0",
                                                  ["--workdir", str(work), "--check"]), folder=ROOT))


def test_each_lock_in_a_column_and_the_count_in_the_reason(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    message, code = _check(tmp_path)
    lines = capsys.readouterr().out.splitlines()
    paths = [Path(line[10:]) for line in lines]
    assert lines == [f"missing   {p}" for p in paths]
    assert all(p.parent == tmp_path / "locks" for p in paths)
    n = len(lines)
    assert (message, code) == (f"{n} of {n} locks are not current (missing)", 1)
    paths[0].parent.mkdir(parents=True)
    paths[0].write_text("torch==2.7.1\n")  # no header
    for p in paths[1:]:
        p.write_text("# toolkit-lock-inputs: " + "f" * 64 + "\ntorch==2.7.1\n")  # other inputs
    message, code = _check(tmp_path)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"no-header {paths[0]}"
    assert lines[1:] == [f"stale     {p}" for p in paths[1:]]
    want = "no-header, stale" if n > 1 else "no-header"
    assert (message, code) == (f"{n} of {n} locks are not current ({want})", 1)
