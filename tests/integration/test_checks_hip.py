"""GPU code targets of real hipcc-built libraries: plain and compressed bundles, code objects."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fixtures.bundles import compress_bundle
from tests.fixtures.native import bundle_entries, compile_hip, section
from tests.fixtures.wheels import make_wheel
from toolkit.cli.commands.check import expand_targets
from toolkit.inspect.checks import check_paths
from toolkit.inspect.readers import members
from toolkit.inspect.readers.elf import EM_AMDGPU, read_elf_bytes
from toolkit.inspect.report import Report

pytestmark = [pytest.mark.integration, pytest.mark.hipcc]
TAG = "cp311-cp311-manylinux_2_28_x86_64"


@pytest.fixture(scope="session")
def hip_lib(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return compile_hip(tmp_path_factory.mktemp("hip"), "libkern.so", archs=("gfx90a", "gfx908:xnack-"))


def _gpu_errors(report: Report) -> list[str]:
    return [f.message for f in report.findings if f.check == "gpu-targets"]


def test_targets_of_a_hipcc_library(hip_lib: Path) -> None:
    (lib,) = check_paths([hip_lib]).wheels[0].libraries
    assert lib.gpu_targets == ["gfx908:xnack-", "gfx90a"]
    assert "libamdhip64.so.5" in lib.needed or any("amdhip64" in n for n in lib.needed)


@pytest.mark.parametrize(
    ("gfx", "missing"),
    [
        (["gfx90a"], []),
        (["gfx908:xnack-"], []),
        (["gfx90a:xnack+"], []),
        (["gfx942"], ["gfx942"]),
        (["gfx908:xnack+"], ["gfx908:xnack+"]),
        (["gfx908"], ["gfx908"]),
        (["gfx90X-dcgpu"], ["gfx906", "gfx908"]),
        (["gfx90a,gfx906"], ["gfx906"]),
    ],
)
def test_requested_targets(hip_lib: Path, gfx: list[str], missing: list[str]) -> None:
    msgs = _gpu_errors(check_paths([hip_lib], targets=expand_targets(gfx)))
    assert len(msgs) == len(missing)
    for target, msg in zip(missing, msgs, strict=True):
        assert f"has no code object for {target} (carries gfx908:xnack-, gfx90a)" in msg


@pytest.mark.parametrize(("method", "version"), [("zstd", 3), ("zlib", 2), ("zstd", 1), ("zlib", 1)])
def test_compressed_bundle_in_a_real_library(
    tmp_path: Path, hip_lib: Path, method: str, version: int
) -> None:
    """clang 15 cannot compress bundles: compress the real one and put it back in place."""
    data = bytearray(hip_lib.read_bytes())
    off, size = section(hip_lib, ".hip_fatbin")
    packed = compress_bundle(bytes(data[off : off + size]), method, version)
    assert len(packed) < size
    data[off : off + size] = packed + bytes(size - len(packed))
    out = tmp_path / "libpacked.so"
    out.write_bytes(bytes(data))
    (lib,) = check_paths([out]).wheels[0].libraries
    assert lib.gpu_targets == ["gfx908:xnack-", "gfx90a"]


def test_fatbin_streamed_from_a_wheel(tmp_path: Path, hip_lib: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    whl = make_wheel(tmp_path, "demo", "1.0", TAG, {"demo/_kern.so": hip_lib})
    monkeypatch.setattr(members, "HEAD_KEEP", 4096)  # the fatbin is not kept: it is streamed
    r = check_paths([whl], targets=expand_targets(["gfx942"]))
    assert r.wheels[0].libraries[0].gpu_targets == ["gfx908:xnack-", "gfx90a"]
    assert len(_gpu_errors(r)) == 1


def test_standalone_code_objects(tmp_path: Path, hip_lib: Path) -> None:
    off, size = section(hip_lib, ".hip_fatbin")
    entries = bundle_entries(hip_lib.read_bytes()[off : off + size])
    co = entries["hipv4-amdgcn-amd-amdhsa--gfx90a"]
    info = read_elf_bytes(co)
    assert info.machine == EM_AMDGPU and info.gpu_targets == ("gfx90a",)
    assert read_elf_bytes(entries["hipv4-amdgcn-amd-amdhsa--gfx908:xnack-"]).gpu_targets == ("gfx908:xnack-",)
    whl = make_wheel(
        tmp_path,
        "kernels",
        "1.0",
        "py3-none-linux_x86_64",
        {"kernels/lib/k_gfx90a.hsaco": co, "kernels/lib/k.co": co},
    )
    r = check_paths([whl], targets=expand_targets(["gfx90a"]))
    assert r.ok and {lib.kind for lib in r.wheels[0].libraries} == {"gpu-code-object"}
    msgs = _gpu_errors(check_paths([whl], targets=expand_targets(["gfx90a", "gfx908"])))
    assert msgs == ["no standalone code object (.co/.hsaco) for gfx908; they cover gfx90a"]
