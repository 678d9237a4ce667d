"""What a run learns for its manifest: the torch installed (distribution names compare
case-insensitively, PEP 503, so `Torch` is torch) and the tools' versions, each the first line
the real tool prints for `--version` (gcc and cmake run here as the independent truth)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from toolkit.run.manifest import learned_identity, tool_versions


@pytest.mark.parametrize("name", ["torch", "Torch", "TORCH"])
def test_the_torch_installed_is_learned_whatever_its_case(name: str) -> None:
    installed = [{"name": "numpy", "version": "2.1.0"}, {"name": name, "version": "2.9.0+rocm7.0"}]
    got = learned_identity(sys.executable, {"version": "7.0.2", "lock": {"sha256": "ab" * 32}},
                           installed)
    assert got["torch_version"] == "2.9.0+rocm7.0"
    assert got["sdk_version"] == "7.0.2" and got["lock_sha256"] == "ab" * 32


def test_no_torch_installed_learns_none() -> None:
    got = learned_identity(sys.executable, {}, [{"name": "torchvision", "version": "0.1"}])
    assert got["torch_version"] is None and got["lock_sha256"] is None


@pytest.mark.skipif(shutil.which("gcc") is None, reason="no gcc")
def test_gcc_version_is_the_first_line_gcc_prints() -> None:
    first = subprocess.run(["gcc", "--version"], capture_output=True, text=True,
                           check=True).stdout.splitlines()[0].strip()
    got = tool_versions(sys.executable, None)
    assert got["gcc"] == first
    assert set(got) == {"python", "hipcc", "clang", "gcc", "cmake", "ninja"}


def test_cmake_version_is_the_first_line_the_cmake_on_path_prints(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A `cmake` first on PATH (a real executable script; the name is lower-case, as CMake
    installs it) is the one asked: its first non-blank line is the version recorded."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "cmake"
    fake.write_text("#!/bin/sh\necho\necho 'cmake version 3.99.7'\necho\necho 'CMake suite'\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    assert tool_versions(sys.executable, None)["cmake"] == "cmake version 3.99.7"


@pytest.mark.skipif(shutil.which("cmake") is None, reason="no cmake")
def test_cmake_version_is_the_first_line_cmake_prints() -> None:
    first = subprocess.run(["cmake", "--version"], capture_output=True, text=True,
                           check=True).stdout.splitlines()[0].strip()
    assert tool_versions(sys.executable, None)["cmake"] == first
