"""GPU detection: KFD topology folders written here, canned rocminfo and amd-smi output."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from toolkit.env import gpus
from toolkit.env.gpus import (
    Detection,
    detect,
    from_kfd,
    gfx_from_target_version,
    parse_amd_smi,
    parse_rocminfo,
)

CPU_PROPS = """cpu_cores_count 64
simd_count 0
mem_banks_count 1
gfx_target_version 0
vendor_id 0
device_id 0
"""


def gpu_props(version: int) -> str:
    return f"""cpu_cores_count 0
simd_count 440
mem_banks_count 1
gfx_target_version {version}
vendor_id 4098
device_id 29856
drm_render_minor 128
"""


def topology(root: Path, *versions: int) -> Path:
    """``root/nodes/0`` a CPU, then one node per GPU ``gfx_target_version``."""
    nodes = root / "nodes"
    for i, text in enumerate([CPU_PROPS, *(gpu_props(v) for v in versions)]):
        (nodes / str(i)).mkdir(parents=True)
        (nodes / str(i) / "properties").write_text(text)
    return nodes


def no_tools(argv: Sequence[str]) -> str | None:
    raise AssertionError(f"no tool may run when a KFD root is injected (ran {argv[0]})")


@pytest.mark.parametrize(
    ("value", "gfx"),
    [(90010, "gfx90a"), (90008, "gfx908"), (90006, "gfx906"), (90400, "gfx940"),
     (90402, "gfx942"), (90500, "gfx950"), (100300, "gfx1030"), (110000, "gfx1100"),
     (120001, "gfx1201"), (90012, "gfx90c"), (0, None), (-1, None), (90016, None)],
)
def test_target_version_decoding(value: int, gfx: str | None) -> None:
    assert gfx_from_target_version(value) == gfx


def test_one_gpu(tmp_path: Path) -> None:
    found = detect(topology(tmp_path, 90010), runner=no_tools)
    assert found.gfx_ids == ("gfx90a",)
    assert found.gpus[0].source == "kfd" and found.gpus[0].detail == "node 1"
    assert found.mismatch("gfx90a") is None
    assert found.mismatch("gfx90a:xnack+") is None  # features are not compared
    assert found.mismatch("gfx942") == "found gfx90a, requested gfx942"


def test_two_different_gpus(tmp_path: Path) -> None:
    found = detect(topology(tmp_path, 90402, 90010, 90402), runner=no_tools)
    assert [g.gfx for g in found.gpus] == ["gfx942", "gfx90a", "gfx942"]
    assert found.gfx_ids == ("gfx942", "gfx90a")
    assert found.find("gfx90a") == found.gpus[1]
    assert found.mismatch("gfx908") == "found gfx942, gfx90a, requested gfx908"


def test_no_gpu(tmp_path: Path) -> None:
    nodes = topology(tmp_path)
    found = detect(nodes, runner=no_tools)
    assert found.gpus == ()
    assert found.mismatch("gfx90a") == f"no AMD GPU found (looked at {nodes} (1 node(s), no GPU))"


def test_nodes_are_read_in_numeric_order(tmp_path: Path) -> None:
    nodes = topology(tmp_path, *([90008] * 9), 90010)  # node 10 is the gfx90a
    assert from_kfd(nodes)[0][-1].gfx == "gfx90a"


def test_env_var_injects_the_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(gpus.KFD_ENV, str(topology(tmp_path, 100300)))
    assert detect(runner=no_tools).gfx_ids == ("gfx1030",)
    monkeypatch.setenv(gpus.KFD_ENV, str(tmp_path / "absent"))
    missing = detect(runner=no_tools)
    assert missing.gpus == () and missing.looked_at == (f"{tmp_path / 'absent'} (missing)",)


ROCMINFO = """ROCk module is loaded
=====================
HSA System Attributes
=====================
Runtime Version:         1.14
==========
HSA Agents
==========
*******
Agent 1
*******
  Name:                    AMD EPYC 9654 96-Core Processor
  Uuid:                    CPU-XX
  Marketing Name:          AMD EPYC 9654 96-Core Processor
  Vendor Name:             CPU
  Device Type:             CPU
*******
Agent 2
*******
  Name:                    gfx942
  Uuid:                    GPU-4b3d4b1c2f6a7e11
  Marketing Name:          AMD Instinct MI300X
  Vendor Name:             AMD
  Device Type:             GPU
  ISA Info:
    ISA 1
      Name:                    amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-
*******
Agent 3
*******
  Name:                    gfx90a
  Marketing Name:          AMD Instinct MI210
  Device Type:             GPU
*******
Agent 4
*******
  Name:                    aie2
  Device Type:             DSP
*** Done ***
"""


def test_rocminfo_gpu_agents_only() -> None:
    found = parse_rocminfo(ROCMINFO)
    assert [(g.gfx, g.detail) for g in found] == [("gfx942", "AMD Instinct MI300X"),
                                                  ("gfx90a", "AMD Instinct MI210")]
    assert parse_rocminfo("ROCk module is NOT loaded, possibly no GPU devices\n") == []


AMD_SMI_LIST = [
    {"gpu": 0, "asic": {"market_name": "AMD Instinct MI300X", "vendor_id": "0x1002",
                        "device_id": "0x74a1", "target_graphics_version": "gfx942"}},
    {"gpu": 1, "asic": {"market_name": "AMD Instinct MI100", "target_graphics_version": "GFX908"}},
]


def test_amd_smi_list_and_gpu_data_shapes() -> None:
    found = parse_amd_smi(json.dumps(AMD_SMI_LIST))
    assert [(g.gfx, g.detail) for g in found] == [("gfx942", "AMD Instinct MI300X"),
                                                  ("gfx908", "AMD Instinct MI100")]
    newer = {"gpu_data": [{"gpu": 0, "asic": {"target_graphics_version": "gfx950:sramecc+"}}]}
    assert [g.gfx for g in parse_amd_smi(json.dumps(newer))] == ["gfx950"]
    assert parse_amd_smi("not json") == []
    assert parse_amd_smi(json.dumps([{"gpu": 0, "asic": {"target_graphics_version": "N/A"}}])) == []


class Tools:
    def __init__(self, **outputs: str | None) -> None:
        self.outputs = outputs
        self.ran: list[str] = []

    def __call__(self, argv: Sequence[str]) -> str | None:
        self.ran.append(" ".join(argv))
        return self.outputs.get(argv[0].replace("-", "_"))


@pytest.fixture
def no_kfd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv(gpus.KFD_ENV, raising=False)
    monkeypatch.setattr(gpus, "KFD_ROOT", str(tmp_path / "no-kfd"))
    return tmp_path / "no-kfd"


def test_tools_are_asked_when_the_kernel_shows_no_gpu(no_kfd: Path) -> None:
    tools = Tools(rocminfo=ROCMINFO)
    assert detect(runner=tools).gfx_ids == ("gfx942", "gfx90a")
    assert tools.ran == ["rocminfo"]
    tools = Tools(rocminfo=None, amd_smi=json.dumps(AMD_SMI_LIST))
    assert detect(runner=tools).gfx_ids == ("gfx942", "gfx908")
    assert tools.ran == ["rocminfo", "amd-smi static --asic --json"]


def test_nothing_anywhere_names_every_place_looked(no_kfd: Path) -> None:
    found = detect(runner=Tools())
    assert isinstance(found, Detection) and found.gpus == ()
    assert found.mismatch("gfx942") == (
        f"no AMD GPU found (looked at {no_kfd} (missing), rocminfo (not installed or failed), "
        "amd-smi (not installed or failed))")


def test_the_kernel_wins_over_tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(gpus.KFD_ENV, raising=False)
    monkeypatch.setattr(gpus, "KFD_ROOT", str(topology(tmp_path, 90010)))
    assert detect(runner=no_tools).gfx_ids == ("gfx90a",)
