"""`plan ID --workdir DIR` reads the lock files of DIR's `locks/` (README: `nox -s lock-...`
writes `locks/<py>-rocm<rocm>[-torchX.Y].txt` and installs then use them; `--workdir`: where
a run's folders go), not those of the current folder: a lock there without the toolkit's
header is refused in one line naming its path (exit 2) and `--no-lock` ignores it (the
option's --help: "ignore locks/<py>-rocm<rocm>.txt")."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolkit.cli.main import main

BUILD = "apex-1.8.0-cp312-rocm7.0"
NAMES = ("3.12-rocm7.0.txt", "3.12-rocm7.0-torch2.8.txt")  # README's name, with or without torch


def test_plan_reads_the_locks_of_the_work_folder_it_is_given(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    here = tmp_path / "here"  # the current folder: no locks/
    here.mkdir()
    work = tmp_path / "work"
    (work / "locks").mkdir(parents=True)
    for name in NAMES:  # a hand-written requirements file: no toolkit header
        (work / "locks" / name).write_text("torch==2.8.0\n")
    monkeypatch.chdir(here)
    assert main(["plan", BUILD]) == 0  # the current folder's (no) locks
    capsys.readouterr()
    assert main(["plan", BUILD, "--workdir", str(work)]) == 2
    err = capsys.readouterr().err
    assert str(work / "locks") in err and "header" in err  # the path and why
    assert len(err.strip().splitlines()) == 1 and "--no-lock" in err
    assert main(["plan", BUILD, "--workdir", str(work), "--no-lock"]) == 0
