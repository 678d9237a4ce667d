"""GPU code wherever it is, judged against ``--gfx``, failing closed (issue 11).

Truth comes from LLVM's own tools (``clang-offload-bundler --list``, ``llvm-readobj -h``) and
from the fixtures' construction, never from the toolkit's earlier output.
"""

from __future__ import annotations

import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures.native import (
    MACH_GFX942,
    bundler_list,
    code_objects,
    compile_hip,
    compile_shared,
    embed_in_rodata,
    readobj_target,
    section,
    with_mach,
)
from tests.fixtures.wheels import make_wheel
from toolkit.cli.commands.check import expand_targets, lines
from toolkit.cli.main import main
from toolkit.inspect.checks import check_paths

pytestmark = [pytest.mark.integration, pytest.mark.hipcc]
MACH_GFX908 = 0x30  # EF_AMDGPU_MACH_AMDGCN_GFX908 (LLVM BinaryFormat/ELF.h)
ROOT = Path(__file__).resolve().parents[2]
FEATURES = ("gfx90a:xnack+", "gfx90a:xnack-", "gfx908:sramecc+:xnack-", "gfx906")


@pytest.fixture(scope="module")
def feature_lib(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return compile_hip(tmp_path_factory.mktemp("feat"), "libfeat.so", archs=FEATURES)


def test_feature_flags_match_llvm(feature_lib: Path, tmp_path: Path) -> None:
    off, size = section(feature_lib, ".hip_fatbin")
    listed = bundler_list(feature_lib.read_bytes()[off : off + size], tmp_path)
    truth = sorted(e.split("--", 1)[1] for e in listed if e.startswith("hip"))
    (lib,) = check_paths([feature_lib]).wheels[0].libraries
    assert lib.gpu_targets == truth
    for target, blob in code_objects(feature_lib).items():  # e_flags of each object, per LLVM
        assert readobj_target(blob, tmp_path) == target
        one = check_paths([_as_file(tmp_path, blob)]).wheels[0].libraries[0]
        assert one.gpu_targets == [target] and one.kind == "gpu-code-object"


def _as_file(tmp: Path, blob: bytes, name: str = "k.hsaco") -> Path:
    path = tmp / name
    path.write_bytes(blob)
    return path


@pytest.mark.parametrize(
    ("gfx", "ok"),
    [
        ("gfx90a:xnack+", True),
        ("gfx90a:xnack-", True),
        ("gfx908:sramecc+:xnack-", True),
        ("gfx908:sramecc-:xnack-", False),  # the code requires sramecc+
        ("gfx908", False),  # a device whose sramecc/xnack setting is unknown
        ("gfx906:xnack+", True),  # built for "any": runs on both settings
        ("gfx906:sramecc-:xnack-", True),
        ("gfx942", False),
    ],
)
def test_features_judged(feature_lib: Path, gfx: str, ok: bool) -> None:
    r = check_paths([feature_lib], targets=expand_targets([gfx]))
    assert r.ok is ok, [f.message for f in r.findings]


def test_xnack_off_does_not_run_where_xnack_on_is_required(tmp_path: Path) -> None:
    lib = compile_hip(tmp_path, "libon.so", archs=("gfx90a:xnack+",))
    assert check_paths([lib], targets=expand_targets(["gfx90a:xnack+"])).ok
    assert not check_paths([lib], targets=expand_targets(["gfx90a:xnack-"])).ok


def test_zeroed_fatbin_fails(feature_lib: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = bytearray(feature_lib.read_bytes())
    off, size = section(feature_lib, ".hip_fatbin")
    data[off : off + size] = bytes(size)
    bad = tmp_path / "libzeroed.so"
    bad.write_bytes(bytes(data))
    assert main(["check", str(bad)]) == 1
    out = capsys.readouterr().out
    assert "[gpu-code]" in out and ".hip_fatbin holds no offload bundle" in out
    garbage = tmp_path / "libgarbage.so"
    data[off : off + 16] = b"not a bundle!!!!"
    garbage.write_bytes(bytes(data))
    r = check_paths([garbage])
    assert any(f.check == "gpu-code" and "unreadable" in f.message for f in r.findings)


def test_raw_gfx942_code_objects_in_rodata(feature_lib: Path, tmp_path: Path) -> None:
    blob = with_mach(code_objects(feature_lib)["gfx906"], MACH_GFX942)  # "any" xnack/sramecc
    host = embed_in_rodata(tmp_path / "emb", "libembed.so", [blob] * 40)
    lo, size = section(host, ".rodata")
    assert host.read_bytes().count(blob) == 40 and host.read_bytes().find(blob) in range(lo, lo + size)
    (lib,) = check_paths([host]).wheels[0].libraries
    assert lib.gpu_targets == ["gfx942"]
    assert lib.gpu_code["gfx942"].code_objects == 40 and lib.gpu_code["gfx942"].bytes == 40 * len(blob)
    assert lib.gpu_where == ["40 code objects in .rodata (raw ELF)"]
    assert main(["check", str(host), "--gfx", "gfx942"]) == 0
    assert main(["check", str(host), "--gfx", "gfx90a"]) == 1
    whl = make_wheel(tmp_path, "emb", "1.0", "cp311-cp311-manylinux_2_28_x86_64", {"emb/libembed.so": host})
    w = check_paths([whl]).wheels[0]
    assert list(w.gpu) == ["gfx942"] and w.gpu["gfx942"].code_objects == 40


def test_elf_header_then_zeros_fails_even_with_policy(tmp_path: Path) -> None:
    real = compile_shared(tmp_path / "z", "libreal.so", "int f(void){return 1;}\n", lang="c")
    data = real.read_bytes()
    fake = tmp_path / "libfake.so"
    fake.write_bytes(data[:64] + bytes(len(data) - 64))
    assert main(["check", str(fake), "--policy", "manylinux_2_28"]) == 1
    whl = make_wheel(tmp_path, "z", "1.0", "cp311-cp311-manylinux_2_28_x86_64", {"z/_f.so": fake})
    assert not check_paths([whl], policy="manylinux_2_28").ok


def test_code_object_wheel_is_not_a_platform_error_and_stays_short(
    feature_lib: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    objs = list(code_objects(feature_lib).values())
    files = {f"kern/co/k{i:04d}.hsaco": objs[i % len(objs)] for i in range(2600)}
    whl = make_wheel(tmp_path, "kern", "1.0", "py3-none-any", files)
    assert main(["check", str(whl), "--gfx", "gfx90a:xnack+"]) == 0
    out = capsys.readouterr().out
    assert "platform-tag" not in out
    assert len(out.strip().splitlines()) <= 60, out
    (w,) = check_paths([whl]).wheels
    assert sum(tc.code_objects for tc in w.gpu.values()) == 2600
    assert len(lines(w)) <= 60


def test_demo_cpu_variant_has_no_gpu_code(tmp_path: Path) -> None:
    env = {**os.environ, "HIP_SAMPLE_VARIANT": "cpu"}
    sample = ROOT / "toolkit" / "examples" / "hip_extension"
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", str(tmp_path),
         str(sample)], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    (whl,) = tmp_path.glob("*.whl")
    res = subprocess.run([sys.executable, "-m", "toolkit", "check", str(whl), "--gfx", "gfx942"],
                         capture_output=True, text=True, cwd=tmp_path)  # fmt: skip
    assert res.returncode == 1, res.stdout
    assert "no GPU code for gfx942" in res.stdout


@pytest.mark.parametrize(("method", "version"), [("zstd", 3), ("zlib", 2)])
def test_compressed_bundle_outside_hip_fatbin(
    feature_lib: Path, tmp_path: Path, method: str, version: int
) -> None:
    from tests.fixtures.bundles import compress_bundle

    off, size = section(feature_lib, ".hip_fatbin")
    packed = compress_bundle(feature_lib.read_bytes()[off : off + size], method, version)
    host = embed_in_rodata(tmp_path / "ccob", "libccob.so", [packed])
    (lib,) = check_paths([host]).wheels[0].libraries
    assert lib.gpu_targets == ["gfx906", "gfx908:sramecc+:xnack-", "gfx90a:xnack+", "gfx90a:xnack-"]
    assert lib.gpu_where == [f"4 code objects in .rodata ({method} bundle)"]


def test_a_real_bundle_entry_whose_e_flags_name_another_processor_is_an_error(
    feature_lib: Path, tmp_path: Path
) -> None:
    # issue 29: hipcc's real library with one byte changed: the code object under the entry id
    # ...--gfx906 now says gfx908 in its e_flags (llvm-readobj -h); the HIP runtime picks
    # entries by id, the loader refuses code for another processor: it runs on neither
    data = bytearray(feature_lib.read_bytes())
    off, _ = section(feature_lib, ".hip_fatbin")
    (count,) = struct.unpack_from("<Q", data, off + 24)
    pos = off + 32
    for _ in range(count):
        e_off, _size, n = struct.unpack_from("<QQQ", data, pos)
        if data[pos + 24 : pos + 24 + n] == b"hipv4-amdgcn-amd-amdhsa--gfx906":
            at = off + e_off
        pos += 24 + n
    data[at + 48] = MACH_GFX908  # e_flags' EF_AMDGPU_MACH byte
    assert readobj_target(bytes(data[at : at + 4096]), tmp_path).startswith("gfx908")
    lib = tmp_path / "libfeat.so"
    lib.write_bytes(bytes(data))
    (w,) = check_paths([lib], targets=expand_targets(["gfx906"])).wheels
    errs = [f for f in w.findings if f.severity == "error"]
    # the mislabel, and gfx906 is not covered any more (it counts for neither)
    assert sorted(f.cause or "" for f in errs) == [
        "bundle entry labelled gfx906 holds gfx908 code", "no code object for gfx906"], errs
    assert "labelled gfx906" in errs[0].message and "says gfx908" in errs[0].message
    (res,) = w.libraries
    assert "gfx906" not in res.gpu_targets and "gfx908" not in res.gpu_targets
    assert res.gpu_targets == sorted(t for t in FEATURES if not t.startswith("gfx906"))
