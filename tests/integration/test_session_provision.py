"""`nox -s build-3.11-rocm7.0 -- --rocm-from pip --index-url http://127.0.0.1:PORT/...`
provisions from the local index (TheRock's per-family layout) through the real session.

The test package's sources live at example.invalid, so the build stops at get-sources
(exit 5, naming the repository); what matters here is the environment it provisioned.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.doubles.fixtures import local_index, sandbox, uv_cache  # noqa: F401

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]


def test_nox_build_session_provisions_from_local_index(sandbox: dict[str, str]) -> None:  # noqa: F811
    index = sandbox["TOOLKIT_DATA_DIR"]
    url = next(line.split('"')[1] for line in Path(index, "rocm.toml").read_text().splitlines()
               if line.startswith("channels = { nightly = "))  # 7.0's channel
    res = subprocess.run(
        [sys.executable, "-m", "nox", "-s", "build-3.11-rocm7.0", "--", "--rocm-from", "pip",
         "--index-url", url, "--package", "sample", "--version", "1.0.0", "--gfx", "gfx942",
         "--workdir", sandbox["WORK"], "--no-smoke"],
        cwd=ROOT, env={**os.environ, **sandbox, "CI": "true"}, capture_output=True, text=True,
        timeout=900)
    out = res.stdout + res.stderr
    for step in ("create-env", "install-rocm-sdk", "install-torch"):
        assert any(line.startswith("[") and step in line and " ok " in line
                   for line in out.splitlines()), out[-3000:]
    from tests.fixtures.nox_runs import toolkit_code

    assert toolkit_code(res.returncode, res.stderr) == 5, out[-3000:]
    assert "example.invalid" in out  # the get-sources failure names the repository
    env = Path(sandbox["TOOLKIT_CACHE_DIR"]) / "envs" / "3.11-rocm7.0-torch2.8"
    root = subprocess.run([str(env / "bin" / "python"), "-m", "rocm_sdk", "path", "--root"],
                          capture_output=True, text=True, check=True).stdout.strip()
    assert root.startswith(str(env)) and Path(root, "bin", "hipcc").exists()
    assert "Traceback" not in out
