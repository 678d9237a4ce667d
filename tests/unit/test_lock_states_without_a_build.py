"""`nox -s lock-... -- --check` and the lock states without pip-compile or a build: a missing
lock, one without the toolkit's header, one written for other options (README: exit 1 for
"stale locks"; the `--check` help: "only report missing or stale locks (exit 1 if any)").

The integration test (tests/integration/test_locks.py) writes real locks with pip-compile;
these drive the states from hand-written lock files in a real nox session."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.fixtures.nox_runs import aborted, in_nox
from toolkit.cli import sessions

ROOT = Path(__file__).resolve().parents[2]
PAIR = ("3.12", "7.0")
# README: `nox -s lock-3.12-rocm6.4`: `locks/3.12-rocm6.4[-torchX.Y].txt`
LOCK = re.compile(r"^3\.12-rocm7\.0(-torch\d+\.\d+)?\.txt$")


def _check(work: Path, *extra: str) -> object:
    return in_nox(lambda s: sessions.lock(s, *PAIR, ["--workdir", str(work), "--check", *extra]),
                  folder=ROOT)


def _states(out: str) -> dict[Path, str]:
    lines = [ln.split(None, 1) for ln in out.splitlines() if ln.strip()]
    return {Path(path): state for state, path in lines}


def _missing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> list[Path]:
    """The locks --check looks for in an empty work folder (each named as the README says)."""
    aborted(_check(tmp_path))
    paths = list(_states(capsys.readouterr().out))
    assert paths and all(p.parent == tmp_path / "locks" and LOCK.match(p.name) for p in paths), paths
    return paths


def test_check_on_a_missing_lock_is_exit_1_naming_the_lock(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    message, code = aborted(_check(tmp_path))
    states = _states(capsys.readouterr().out)
    assert code == 1, message  # README "Exit codes": 1 ... stale locks
    assert "missing" in message and "not current" in message, message
    assert states and set(states.values()) == {"missing"}, states
    assert all(p.parent == tmp_path / "locks" and LOCK.match(p.name) for p in states), states
    assert not (tmp_path / "locks").exists()  # --check writes nothing


def test_check_on_a_lock_without_the_header_is_not_current(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    paths = _missing(tmp_path, capsys)
    paths[0].parent.mkdir(parents=True)
    paths[0].write_text("torch==2.7.1 \\\n    --hash=sha256:" + "0" * 64 + "\n")  # a pip-compile body only
    message, code = aborted(_check(tmp_path))
    assert code == 1 and "no-header" in message, message
    assert _states(capsys.readouterr().out)[paths[0]] == "no-header"


def test_a_lock_written_for_other_inputs_is_stale(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    paths = _missing(tmp_path, capsys)
    paths[0].parent.mkdir(parents=True)
    for p in paths:  # a hash no inputs have (sha256 of nothing is e3b0...; this is all f)
        p.write_text("# toolkit-lock-inputs: " + "f" * 64 + "\ntorch==2.7.1\n")
    message, code = aborted(_check(tmp_path))
    assert code == 1 and "stale" in message and "missing" not in message, message
    assert set(_states(capsys.readouterr().out).values()) == {"stale"}
