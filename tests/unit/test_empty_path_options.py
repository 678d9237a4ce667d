"""An empty path option is refused, never taken as "not given" (issue 29: `--source ''`
built the bundled sample with exit 0)."""

from __future__ import annotations

import subprocess
import sys

import pytest

CASES = [
    ("demo", "--source", "--dry-run"),
    ("demo", "--workdir", "--dry-run"),
    ("plan", "--source", "apex-1.8.0-cp312-rocm7.0"),
    ("plan", "--workdir", "apex-1.8.0-cp312-rocm7.0"),
    ("repro", "--source", "manifest.json"),
    ("smoke", "--workdir", "--gfx=gfx942"),
]


@pytest.mark.parametrize(("command", "option", "other"), CASES)
def test_an_empty_path_is_refused_naming_the_option(command: str, option: str,
                                                    other: str) -> None:
    res = subprocess.run([sys.executable, "-m", "toolkit", command, other, option, ""],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 2
    assert "Traceback" not in res.stderr and res.stdout == ""
    last = res.stderr.strip().splitlines()[-1]
    assert last.endswith(f"error: argument {option}: an empty path; give a folder, or leave "
                         "the option out")


def test_a_folder_named_by_spaces_is_still_a_path() -> None:
    res = subprocess.run([sys.executable, "-m", "toolkit", "plan", "apex-1.8.0-cp312-rocm7.0",
                          "--workdir", " "], capture_output=True, text=True, timeout=60)
    assert "an empty path" not in res.stderr
