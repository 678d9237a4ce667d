"""A library read out of a wheel on the large-member path (streamed, checkpoints, ranges
inflated again, GPU-code places noted in the first pass and the bytes around them kept, hashed
in a second thread), in a pool's batch or in the caller, gives the same facts as the file
read whole from disk, and the GPU targets that were put into it. The thresholds are lowered so
small libraries take the paths a 459 MB one takes."""

from __future__ import annotations

import base64
import hashlib
import os
import random
import zipfile
from collections.abc import Mapping
from pathlib import Path

import pytest

from tests.fixtures.bundles import compress_bundle, make_bundle
from tests.fixtures.native import compile_hip, compile_shared, section
from tests.fixtures.wheels import make_wheel
from toolkit.inspect.readers import inflate, members
from toolkit.inspect.readers.members import _batch_job, _batches, load_file, read_member, read_members
from toolkit.inspect.readers.wheelzip import Budget, WheelZip

TAG = "cp311-cp311-manylinux_2_28_x86_64"
HOST = ("host-x86_64-unknown-linux-gnu", b"")
FATBIN_TARGETS = ("gfx90a", "gfx942", "gfx1100", "gfx1201", "gfx950")


def _fatbin_library(dest: Path) -> Path:
    """A g++-built library whose ``.hip_fatbin`` holds one zstd bundle per target (random,
    incompressible code), 4 KiB aligned as clang lays them out, between random ``.rodata``."""
    rnd = random.Random(5)
    dest.mkdir(parents=True, exist_ok=True)
    asm = []
    for i, gfx in enumerate(FATBIN_TARGETS):
        code = rnd.randbytes(rnd.randint(20_000, 90_000))
        bundle = compress_bundle(make_bundle([HOST, (f"hipv4-amdgcn-amd-amdhsa--{gfx}", code)]))
        (dest / f"b{i}.bin").write_bytes(bundle)
        asm.append(f'".balign 4096\\n.incbin \\"{dest / f"b{i}.bin"}\\"\\n"')
    (dest / "noise.bin").write_bytes(rnd.randbytes(300_000))
    noise = dest / "noise.bin"
    src = ('asm(".section .hip_fatbin,\\"a\\"\\n"\n' + "\n".join(asm) + '\n".previous\\n"\n'
           f'".section .rodata\\n.globl noise\\nnoise:\\n.incbin \\"{noise}\\"\\n.previous\\n");\n'
           'extern "C" const char noise[];\nextern "C" const char* get() { return noise; }\n')
    return compile_shared(dest, "libfat.so", src)


@pytest.fixture(scope="module")
def libraries(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("libs")
    return {
        "pkg/libfat.so": _fatbin_library(tmp / "fat"),
        "pkg/libhip.so": compile_hip(tmp / "hip", "libhip.so", archs=("gfx90a", "gfx908")),
    }


@pytest.fixture
def large_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every threshold low: streamed reads, a second hashing thread, places noted, 4 KiB kept
    from the start (the rest inflated again), a checkpoint every 64 KiB."""
    monkeypatch.setattr(members, "SMALL_BYTES", 1024)
    monkeypatch.setattr(members, "THREAD_HASH_BYTES", 0)
    monkeypatch.setattr(members, "HITS_MIN", 0)
    monkeypatch.setattr(members, "HEAD_KEEP", 4096)
    monkeypatch.setattr(members, "TAIL_KEEP", 1024)
    monkeypatch.setattr(members, "SEEK_MIN", 64 << 10)
    monkeypatch.setattr(inflate, "CHECKPOINT_EVERY", 64 << 10)
    monkeypatch.setattr(inflate, "CHUNK", 16 << 10)


def _wheel(tmp_path: Path, libraries: Mapping[str, bytes | Path]) -> Path:
    return make_wheel(tmp_path, "demo", "1.0", TAG, {**libraries, "demo/x.py": "x = 1\n"})


def _targets(elf: object) -> set[str]:
    return {o.target for o in getattr(elf, "gpu_code", ())}


def test_a_streamed_library_has_the_facts_of_the_file_on_disk(
    tmp_path: Path, libraries: dict[str, Path], large_paths: None
) -> None:
    whl = _wheel(tmp_path, libraries)
    with WheelZip.open(whl, Budget()) as wz:
        for name, path in libraries.items():
            info = wz.zf.getinfo(name)
            assert info.compress_size > members.SMALL_BYTES  # the streamed path
            got = read_member(wz, info)
            assert got.error is None and got.elf_error is None and got.is_elf
            assert got.size == path.stat().st_size
            want = hashlib.sha256(path.read_bytes()).digest()
            assert got.digest == "sha256=" + base64.urlsafe_b64encode(want).rstrip(b"=").decode()
            assert got.elf == load_file(path)  # every fact, GPU code included
    assert _targets(load_file(libraries["pkg/libfat.so"])) == set(FATBIN_TARGETS)
    assert _targets(load_file(libraries["pkg/libhip.so"])) == {"gfx90a", "gfx908"}


def test_the_fatbin_bundle_headers_come_from_the_bytes_kept(
    tmp_path: Path, libraries: dict[str, Path], large_paths: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    whl = _wheel(tmp_path, {"pkg/libfat.so": libraries["pkg/libfat.so"]})
    reads: list[tuple[int, int]] = []
    real = inflate.MemberReader.chunks

    def chunks(self: inflate.MemberReader, start: int = 0, end: int | None = None):  # type: ignore[no-untyped-def]
        reads.append((start, self.size if end is None else end))
        return real(self, start, end)

    monkeypatch.setattr(inflate.MemberReader, "chunks", chunks)
    with WheelZip.open(whl, Budget()) as wz:
        got = read_member(wz, wz.zf.getinfo("pkg/libfat.so"))
    assert _targets(got.elf) == set(FATBIN_TARGETS)
    off, size = section(libraries["pkg/libfat.so"], ".hip_fatbin")
    data = libraries["pkg/libfat.so"].read_bytes()[off : off + size]
    bundles = [off + i for i in range(0, size, 4096) if data[i : i + 4] == b"CCOB"]
    assert len(bundles) == len(FATBIN_TARGETS)
    # after the first pass nothing is inflated again to read a bundle's header (its first
    # 4 KiB: the reader feeds 4 KiB at a time) or the zero padding before it (under 4 KiB, as
    # the bundles are 4 KiB aligned)
    for start, _ in reads[1:]:
        assert not any(b - 4096 <= start < b + 4096 for b in bundles), start


def test_a_library_within_the_kept_head_is_inflated_once(
    tmp_path: Path, libraries: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A streamed library smaller than the head kept while inflating it (HEAD_KEEP, 2 MiB) is
    held whole after the first pass: its sections, the fatbin scanned for GPU code among them,
    are read from memory and the member is never inflated again."""
    lib = libraries["pkg/libfat.so"]
    assert lib.stat().st_size < members.HEAD_KEEP
    monkeypatch.setattr(members, "SMALL_BYTES", 1024)  # the streamed path
    whl = _wheel(tmp_path, {"pkg/libfat.so": lib})
    reads: list[tuple[int, int | None]] = []
    real = inflate.MemberReader.chunks

    def chunks(self: inflate.MemberReader, start: int = 0, end: int | None = None):  # type: ignore[no-untyped-def]
        reads.append((start, end))
        return real(self, start, end)

    monkeypatch.setattr(inflate.MemberReader, "chunks", chunks)
    with WheelZip.open(whl, Budget()) as wz:
        info = wz.zf.getinfo("pkg/libfat.so")
        assert info.compress_size > members.SMALL_BYTES
        got = read_member(wz, info)
    assert got.elf == load_file(lib)
    assert _targets(got.elf) == set(FATBIN_TARGETS)
    assert reads == []


def test_batches_and_the_pool_job_read_what_the_caller_reads(
    tmp_path: Path, libraries: dict[str, Path], large_paths: None
) -> None:
    files: dict[str, bytes | Path] = dict(libraries)
    files.update({f"demo/f{i}.txt": os.urandom(3000 * i) for i in range(1, 6)})
    whl = _wheel(tmp_path, files)
    with WheelZip.open(whl, Budget()) as wz:
        infos = [i for i in wz.zf.infolist() if not i.filename.endswith("/")]
        alone = {i.filename: read_member(wz, i) for i in infos}
        via_pool_job = _batch_job(str(whl), Budget(), [(i.filename, "sha256") for i in infos])
        in_caller = read_members(wz, infos, {})
    for r in via_pool_job:  # the job packs the defined names; the facts are the same
        want = alone[r.name]
        assert (r.name, r.digest, r.size, r.error, r.is_elf) == (want.name, want.digest, want.size,
                                                                 want.error, want.is_elf)
        if r.elf is not None:
            assert r.elf.packed is not None and _targets(r.elf) == _targets(want.elf)
    assert [r.name for r in in_caller] == [i.filename for i in infos]


def test_batches_put_large_members_alone_and_small_ones_together(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(members, "BATCH_BYTES", 100)

    def info(name: str, size: int) -> zipfile.ZipInfo:
        z = zipfile.ZipInfo(name)
        z.compress_size = size
        return z

    sizes = {"a": 500, "b": 100, "c": 60, "d": 50, "e": 40, "f": 30, "g": 5}
    got = [[i.filename for i in b] for b in _batches([info(n, s) for n, s in sizes.items()])]
    # largest first; 100 and more alone; the rest gathered until they reach 100
    assert got == [["a"], ["b"], ["c", "d"], ["e", "f", "g"]]
