"""What a run learns for its manifest: the torch installed (distribution names compare
case-insensitively, PEP 503, so `Torch` is torch) and the tools' versions, each the first line
the real tool prints for `--version` (gcc run here as the independent truth)."""

from __future__ import annotations

import shutil
import subprocess
import sys

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
