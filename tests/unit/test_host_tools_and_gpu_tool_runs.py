"""What the host says about itself without a GPU: its cores (the CPUs this process may run on,
``os.sched_getaffinity``), its memory (``/proc/meminfo``'s MemAvailable), its uv (a binary that
runs); the GPU tools run through PATH (a missing, failing or silent tool says nothing); and
KFD ``gfx_target_version`` values that name no GPU. Expectations hand-written or read from
the kernel's own files."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from toolkit.env import gpus, host


def test_discover_reads_this_hosts_cores_memory_and_uv() -> None:
    facts = host.discover()
    assert facts.cores == len(os.sched_getaffinity(0))
    with open("/proc/meminfo", encoding="ascii") as fh:
        kib = next(int(line.split()[1]) for line in fh if line.startswith("MemAvailable:"))
    assert abs(facts.mem_available_gib - kib / 2**20) < 0.5  # read moments apart
    version = subprocess.run([facts.uv, "--version"], capture_output=True, text=True, check=True).stdout
    assert version.startswith("uv ")


def _tool(folder: Path, name: str, body: str) -> None:
    folder.mkdir(exist_ok=True)
    (folder / name).write_text("#!/bin/sh\n" + body + "\n")
    (folder / name).chmod(0o755)


def test_a_gpu_tool_runs_from_path_and_only_a_clean_exit_counts(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / "bin"
    _tool(bin_dir, "rocminfo", 'printf "args:%s\\n" "$*"')
    _tool(bin_dir, "amd-smi", "echo partial; exit 1")
    monkeypatch.setenv("PATH", str(bin_dir))
    assert gpus._run(["rocminfo", "-a"]) == "args:-a\n"
    assert gpus._run(["amd-smi", "static"]) is None
    assert gpus._run(["no-such-tool"]) is None


def test_detection_without_a_kernel_topology_runs_the_real_tools_on_path(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / "bin"
    _tool(bin_dir, "rocminfo", "exit 1")
    _tool(bin_dir, "amd-smi", '[ "$*" = "static --asic --json" ] || exit 2\n'
                              'echo \'[{"gpu": 0, "asic": {"target_graphics_version": "gfx942"}}]\'')
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.delenv(gpus.KFD_ENV, raising=False)
    monkeypatch.setattr(gpus, "KFD_ROOT", str(tmp_path / "no-kfd"))
    found = gpus.detect()
    assert found.gfx_ids == ("gfx942",)
    assert found.looked_at == (f"{tmp_path / 'no-kfd'} (missing)", "rocminfo (not installed or failed)",
                               "amd-smi")


@pytest.mark.parametrize("value", [1510, 9999, 1, 91600, 91615])
def test_target_versions_that_name_no_gpu(value: int) -> None:
    # major 0 (below 10000) is no GPU; minor and stepping are single hex digits (at most 15)
    assert gpus.gfx_from_target_version(value) is None


def test_a_mismatch_names_what_was_found_and_what_was_asked() -> None:
    found = gpus.Detection((gpus.Gpu("gfx90a", "kfd"), gpus.Gpu("gfx90a", "kfd"), gpus.Gpu("gfx942", "kfd")),
                           ("kfd",))
    assert found.gfx_ids == ("gfx90a", "gfx942")
    assert found.mismatch("gfx90a:xnack+") is None and found.find(" GFX942 ") == gpus.Gpu("gfx942", "kfd")
    assert found.mismatch("gfx1100") == "found gfx90a, gfx942, requested gfx1100"
