"""Build-backend noise goes to the log, not the terminal: reading a ``--source`` project's
metadata runs its real backend (setuptools, through pypa/build), whose deprecation warnings
and setup.py prints land in ``build/source-metadata.log``; the toolkit's own line comes first."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.integration]
ROOT = Path(__file__).resolve().parents[2]


def test_setuptools_warnings_go_to_the_metadata_log(tmp_path: Path) -> None:
    proj = tmp_path / "noisy"
    (proj / "noisy").mkdir(parents=True)
    (proj / "noisy" / "__init__.py").write_text("")
    # dash-separated keys: setuptools warns (SetuptoolsDeprecationWarning) while reading them
    (proj / "setup.cfg").write_text("[metadata]\nname = noisy-proj\nversion = 0.3.0\n"
                                    "home-page = http://example.invalid\n\n"
                                    "[options]\npackages = noisy\n")
    (proj / "setup.py").write_text("import sys\nfrom setuptools import setup\n"
                                   "print('SETUP.PY SAYS HELLO', file=sys.stderr)\nsetup()\n")
    work = tmp_path / "w"
    env = {**os.environ, "TOOLKIT_CACHE_DIR": str(tmp_path / "cache")}
    res = subprocess.run([sys.executable, "-m", "toolkit", "demo", "--source", str(proj),
                          "--workdir", str(work), "--dry-run", "--cpu"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=600, check=False)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-4000:]
    assert res.stdout.startswith("# plan for noisy_proj-0.3.0-"), res.stdout[:300]
    assert "home-page" not in res.stderr + res.stdout, res.stderr[:2000]
    assert "SETUP.PY SAYS HELLO" not in res.stderr + res.stdout
    log = (work / "build" / "source-metadata.log").read_text()
    assert "Invalid dash-separated key 'home-page'" in log
    assert "SETUP.PY SAYS HELLO" in log
