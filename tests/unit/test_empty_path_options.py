"""An empty path option is refused, never taken as "not given" (issue 29: `--source ''`
built the bundled sample with exit 0)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

CASES = [
    ("demo", "--source", "--dry-run"),
    ("demo", "--workdir", "--dry-run"),
    ("plan", "--source", "apex-1.8.0-cp312-rocm7.0"),
    ("plan", "--workdir", "apex-1.8.0-cp312-rocm7.0"),
    ("repro", "--source", "manifest.json"),
    ("smoke", "--workdir", "--gfx=gfx942"),
    ("smoke", "--junit", "--gfx=gfx942"),
    ("smoke", "--env", "--gfx=gfx942"),
    ("report", "--markdown", "--strict"),
    ("report", "--junit", "--strict"),
    ("upstream", "--pr-body", "--write"),
    ("matrix", "--changed-since", "--format=github"),
]


@pytest.mark.parametrize(("command", "option", "other"), CASES)
def test_an_empty_path_is_refused_naming_the_option(command: str, option: str,
                                                    other: str) -> None:
    res = subprocess.run([sys.executable, "-m", "toolkit", command, other, option, ""],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 2
    assert "Traceback" not in res.stderr and res.stdout == ""
    last = res.stderr.strip().splitlines()[-1]
    assert last.endswith(f"error: argument {option}: an empty path; give a path, or leave "
                         "the option out")


def test_a_folder_named_by_spaces_is_still_a_path() -> None:
    res = subprocess.run([sys.executable, "-m", "toolkit", "plan", "apex-1.8.0-cp312-rocm7.0",
                          "--workdir", " "], capture_output=True, text=True, timeout=60)
    assert "an empty path" not in res.stderr


INVOKE_CASES = [
    ("smoke", "--workdir"),
    ("smoke", "--junit"),
    ("repro", "--workdir"),
    ("repro", "--source"),
    ("report", "--markdown"),
    ("upstream", "--pr-body"),
]


@pytest.mark.parametrize(("task", "option"), INVOKE_CASES)
def test_invoke_passes_an_empty_path_on_to_be_refused(task: str, option: str,
                                                      tmp_path: Path) -> None:
    """The real invoke: an empty path reaches the CLI (exit 2) instead of being dropped as
    "not given" (before, `invoke smoke --workdir ''` searched the current folder)."""
    args = ["manifest.json"] if task == "repro" else []
    res = subprocess.run([sys.executable, "-m", "invoke", "-r", str(ROOT), task, *args,
                          option, ""], capture_output=True, text=True, timeout=120,
                         cwd=tmp_path)
    assert res.returncode == 2, res.stderr
    assert "Traceback" not in res.stderr
    assert f"error: argument {option}: an empty path" in res.stderr
