"""Each flake run's ccache line comes from that run's own cache folder, read by the real
ccache (``ccache --zero-stats`` / ``--print-stats`` with ``CCACHE_DIR`` the run's folder, not
whatever CCACHE_DIR the caller had): gcc through ccache on one file twice is one miss then one
hit (ccache's documented counters); zeroed, the folder says 0 and 0."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from toolkit.cli import devsessions

pytestmark = pytest.mark.skipif(not (shutil.which("ccache") and shutil.which("gcc")),
                                reason="needs ccache and gcc")


def _compile(cache: Path, folder: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CCACHE_")}
    subprocess.run(["ccache", "gcc", "-c", "a.c", "-o", "a.o"], cwd=folder, check=True,
                   env={**env, "CCACHE_DIR": str(cache)}, timeout=60)


def test_a_runs_hits_and_misses_are_its_own_folders(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [k for k in os.environ if k.startswith("CCACHE_")]:
        monkeypatch.delenv(name)
    other = tmp_path / "callers-cache"
    monkeypatch.setenv("CCACHE_DIR", str(other))  # the caller's: never the one read
    cache = tmp_path / "ccache-1"
    cache.mkdir()
    (tmp_path / "a.c").write_text("int f(void) { return 1; }\n")
    devsessions._ccache_zero(cache)
    assert devsessions._ccache_stats(cache) == "0 hits, 0 misses"
    _compile(cache, tmp_path)
    _compile(cache, tmp_path)
    assert devsessions._ccache_stats(cache) == "1 hits, 1 misses"
    assert devsessions._ccache_stats(other) == "0 hits, 0 misses"
    devsessions._ccache_zero(cache)
    assert devsessions._ccache_stats(cache) == "0 hits, 0 misses"
