"""pytest fixtures and helpers around the SDK doubles (import the fixtures into test modules).

``write_data`` writes a small matrix data folder (``TOOLKIT_DATA_DIR``) pointing at the
local index: package ``sample`` for Python 3.11/3.12 with

- ROCm 7.0 (pip SDK, per-family index): torch 2.8 (double, hip 7.0), 2.7 (double, hip 6.4:
  a HIP mismatch), 2.13 (the real CPU torch wheel, hip None);
- ROCm 7.1 (pip SDK, multi-arch index, a release branch: prerelease channel by default, its
  stable and nightly channels on the same index): torch 2.8 (split double, hip 7.1);
- ROCm 5.2 (system SDK: Debian's hipcc): torch 2.8 (double 2.8.0+rocm5.2, hip 5.2).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from tests.doubles.index import LocalIndex, start
from tests.fixtures.data import package_toml, pkg_version

REPO = Path(__file__).resolve().parents[2]

ROCM_TOML = """\
[releases."7.0"]
gpus = "therock-7.0"
hip = "7.0"
default_family = "gfx94X-dcgpu"
sdk.provider = "pip"
sdk.layout = "per-family"
sdk.legacy = true
sdk.evidence = "TEST DOUBLE: the local index"
channels = {{ nightly = "{url}v2/", evidence = "TEST DOUBLE" }}
torch."2.7" = {{ kind = "therock", spec = "torch==2.7.0", evidence = "TEST DOUBLE" }}
torch."2.8" = {{ kind = "therock", spec = "torch==2.8.0", evidence = "TEST DOUBLE" }}
torch."2.13" = {{ kind = "therock", spec = "torch==2.13.0", evidence = "TEST DOUBLE" }}

# a release branch (default: its prerelease channel); its stable and nightly channels are the
# same index, which holds only the pre-release 7.1.0a20260101: `--channel stable` finds no SDK
# there, `--channel nightly` installs it
[releases."7.1"]
gpus = "therock-7.15"
hip = "7.1"
default_family = "gfx94X-dcgpu"
line = {{ status = "branch", ref = "release/therock-7.1", version = "7.1.0", evidence = "TEST DOUBLE" }}
sdk.provider = "pip"
sdk.layout = "multi-arch"
sdk.evidence = "TEST DOUBLE: the local index"
channels.stable = "{url}multi/"
channels.prerelease = "{url}multi/"
channels.nightly = "{url}multi/"
channels.evidence = "TEST DOUBLE"
torch."2.8" = {{ kind = "therock", spec = "torch==2.8.0", evidence = "TEST DOUBLE" }}

[releases."5.2"]
gpus = "rocm-6"
hip = "5.2"
default_family = "gfx90a"
sdk = {{ provider = "system", version = "5.2.0", evidence = "TEST DOUBLE: Debian's hipcc" }}

[releases."5.2".torch."2.8"]
kind = "pytorch"
index_url = "{url}v2/gfx94X-dcgpu/"
spec = "torch==2.8.0+rocm5.2"
evidence = "TEST DOUBLE"
"""

# TEST DOUBLE package for provisioning tests (never built: issue 5 owns the build steps)
SAMPLE_TOML = package_toml("sample", repo="https://example.invalid/sample.git", recipe="apex",
                           versions=[
    pkg_version("1.0.0", torch="2.8.0", rocm=["7.0", "7.1", "5.2"], python=["3.11", "3.12"],
            build_style="jit-prebuild"),
    pkg_version("0.9.0", torch="2.7.0", rocm=["7.0"], python=["3.11"], build_style="jit-prebuild"),
    pkg_version("2.0.0", torch="2.13.0", rocm=["7.0"], python=["3.11"], build_style="jit-prebuild")])


def write_data(dest: Path, url: str) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy(REPO / "toolkit" / "data" / "gpus.toml", dest / "gpus.toml")
    (dest / "rocm.toml").write_text(ROCM_TOML.format(url=url))
    (dest / "sample.toml").write_text(SAMPLE_TOML)
    return dest


def toolkit(*args: str, env: Mapping[str, str], cwd: Path | None = None,
            timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """``python -m toolkit ARGS`` in a subprocess (the way a contributor runs it)."""
    return subprocess.run([sys.executable, "-m", "toolkit", *args], capture_output=True,
                          text=True, env={**os.environ, **env}, cwd=cwd, timeout=timeout,
                          check=False)


@pytest.fixture(scope="session")
def local_index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalIndex]:
    root = tmp_path_factory.mktemp("index")
    yield from (s.index for s in start(root / "www"))


@pytest.fixture(scope="session")
def uv_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One uv cache for the session (warm after the first install, like a contributor's)."""
    return tmp_path_factory.mktemp("uv-cache")


@pytest.fixture
def sandbox(tmp_path: Path, local_index: LocalIndex, uv_cache: Path) -> dict[str, str]:
    """Environment variables for a toolkit subprocess: data, cache and work folders in tmp."""
    data = write_data(tmp_path / "data", local_index.url)
    (tmp_path / "work").mkdir()
    return {
        "TOOLKIT_DATA_DIR": str(data),
        "TOOLKIT_CACHE_DIR": str(tmp_path / "cache"),
        "UV_CACHE_DIR": str(uv_cache),
        "WORK": str(tmp_path / "work"),
    }
