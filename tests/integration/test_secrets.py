"""A secret planted in an index URL never appears in a manifest, log, stamp or printed line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.doubles.fixtures import local_index, sandbox, uv_cache  # noqa: F401

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]
SECRET = "S3cr3tT0k3n"


def test_index_credentials_are_masked_everywhere(sandbox: dict[str, str]) -> None:  # noqa: F811
    url = next(line.split('"')[1] for line in
               Path(sandbox["TOOLKIT_DATA_DIR"], "rocm.toml").read_text().splitlines()
               if line.startswith("local = "))
    secret_url = url.replace("http://", f"http://builder:{SECRET}@")
    args = ["--rocm-from", "pip", "--index-url", secret_url, "--package", "sample",
            "--version", "1.0.0", "--gfx", "gfx942", "--workdir", sandbox["WORK"], "--no-smoke"]
    env = {**os.environ, **sandbox, "CI": "true"}
    dry = subprocess.run([sys.executable, "-m", "nox", "-s", "build-3.11-rocm7.0", "--", *args,
                          "--dry-run"], cwd=ROOT, env=env, capture_output=True, text=True)
    res = subprocess.run([sys.executable, "-m", "nox", "-s", "build-3.11-rocm7.0", "--", *args],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    printed = dry.stdout + dry.stderr + res.stdout + res.stderr
    assert "install-rocm-sdk" in printed and "http://***@127.0.0.1" in printed
    assert SECRET not in printed
    written = [p for root in (sandbox["WORK"], sandbox["TOOLKIT_CACHE_DIR"] + "/envs")
               for p in Path(root).rglob("*") if p.is_file() and p.suffix in {".json", ".log", ".txt"}]
    assert any(p.name == "manifest.json" for p in written)
    assert any(p.name == "build.log" for p in written)
    for path in written:
        assert SECRET not in path.read_text(errors="replace"), path
