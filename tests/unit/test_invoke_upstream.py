"""`invoke upstream` through real invoke: with no folder it reads the partial clones in the
cache (invoke has no optional positional argument: the folder is ``--dir``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
INVOKE = Path(sys.executable).with_name("invoke")


def _invoke(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TOOLKIT_CACHE_DIR": str(tmp_path / "cache"),
           # every GitHub URL points at a folder that does not exist: a fetch fails at once
           "GIT_CONFIG_COUNT": "1",
           "GIT_CONFIG_KEY_0": f"url.{tmp_path / 'nowhere'}/.insteadOf",
           "GIT_CONFIG_VALUE_0": "https://github.com/"}
    return subprocess.run([str(INVOKE), "-r", str(ROOT), "upstream", *args], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=120)


def test_without_a_folder_it_fetches_into_the_cache(tmp_path: Path) -> None:
    run = _invoke(tmp_path)
    assert "did not receive required positional" not in run.stdout + run.stderr
    assert run.returncode == 8, run.stdout + run.stderr  # a source that cannot be reached
    assert "cannot fetch" in run.stderr and "github.com" in run.stderr
    assert "Traceback" not in run.stderr
    assert (tmp_path / "cache").is_dir()


def test_a_folder_without_the_repositories_names_what_is_valid(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    run = _invoke(tmp_path, "--dir", str(empty))
    assert run.returncode == 2
    lines = [ln for ln in run.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and f"{empty} lacks the repository" in lines[0]
    assert "ROCm+TheRock/repo" in lines[0]
