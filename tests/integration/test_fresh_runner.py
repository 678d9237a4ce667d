"""A fresh runner (CI's GPU job): only dist/<id>/ and artifacts/<id>/ of a build and an empty
cache; `invoke smoke --build ID --gfx G` provisions the environment from the manifest's
inputs, installs the published wheel and passes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]


def test_smoke_on_a_fresh_runner(tmp_path: Path) -> None:
    built = tmp_path / "built"
    env = {**os.environ, "TOOLKIT_CACHE_DIR": str(tmp_path / "cache-build"), "CI": "true"}
    res = subprocess.run([sys.executable, "-m", "nox", "-s", "demo", "--", "--workdir",
                          str(built), "--no-smoke"], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=900)
    assert res.returncode == 0, res.stdout[-3000:]
    (manifest,) = (built / "artifacts").glob("*/manifest.json")
    build_id = manifest.parent.name
    fresh = tmp_path / "runner"
    for part in ("dist", "artifacts"):
        shutil.copytree(built / part / build_id, fresh / part / build_id)
    empty_cache = tmp_path / "cache-runner"
    runner_env = {**os.environ, "TOOLKIT_CACHE_DIR": str(empty_cache), "CI": "true",
                  "TOOLKIT_KFD_ROOT": str(tmp_path / "no-gpu")}
    (tmp_path / "no-gpu").mkdir()
    smoke = subprocess.run([sys.executable, "-m", "invoke", "-r", str(ROOT), "smoke",
                            "--build", build_id, "--gfx", "gfx90a", "--workdir", str(fresh)],
                           cwd=fresh, env=runner_env, capture_output=True, text=True,
                           timeout=900)
    assert smoke.returncode == 0, smoke.stdout[-4000:] + smoke.stderr[-2000:]
    assert "provisioning it from" in smoke.stdout
    assert "Traceback" not in smoke.stdout + smoke.stderr
    envs = [p for p in (empty_cache / "envs").iterdir() if p.is_dir()]  # beside: its lock
    assert len(envs) == 1 and (envs[0] / ".toolkit-env.json").exists()
    recorded = json.loads(manifest.read_text())
    wheel_name = Path(recorded["wheel"]).name
    installed = subprocess.run([str(envs[0] / "bin" / "python"), "-c",
                                "import importlib.metadata as m; print(m.version('hip-sample'))"],
                               capture_output=True, text=True)
    assert installed.stdout.strip() == wheel_name.split("-")[1]
    # a wheel that is not the recorded one is refused, in one line
    other = fresh / "dist" / build_id / wheel_name
    other.write_bytes(other.read_bytes() + b"\0")
    shutil.rmtree(empty_cache)
    bad = subprocess.run([sys.executable, "-m", "invoke", "-r", str(ROOT), "smoke", "--build",
                          build_id, "--gfx", "gfx90a", "--workdir", str(fresh)], cwd=fresh,
                         env=runner_env, capture_output=True, text=True, timeout=900)
    assert bad.returncode == 2 and "sha256 differs" in bad.stderr
    assert "Traceback" not in bad.stderr
