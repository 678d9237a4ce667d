"""How ``read_members`` shares a wheel out to a pool, pinned whole: ``_batches`` puts each large
member alone and the small ones together (hand-computed groups), a worker's ``_batch_job``
opens the wheel once, under the caller's budget, and reads each member with the digest RECORD
asks for (checked with hashlib); results come back in the caller's order. A thread pool
stands in for the process pool so the calls stay in this process."""

from __future__ import annotations

import base64
import hashlib
import os
import random
import shutil
import struct
import subprocess
import zipfile
import zlib
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.fixtures.native import system_lib
from tests.fixtures.wheels import edit_member_headers, make_wheel, wrong_crc
from toolkit.core.errors import ElfError
from toolkit.inspect.readers import gpuscan, inflate, members
from toolkit.inspect.readers.members import (
    BATCH_BYTES,
    _batch_job,
    _batches,
    load_file,
    read_member,
    read_members,
    read_one,
)
from toolkit.inspect.readers.wheelzip import Budget, WheelZip

FILES = {"demo/big.txt": "b" * 9000, "demo/small.txt": "s" * 100, "demo/mid.txt": "m" * 3000}


def _b64(algo: str, data: bytes) -> str:
    return f"{algo}=" + base64.urlsafe_b64encode(hashlib.new(algo, data).digest()).rstrip(b"=").decode()


@pytest.fixture
def wheel(tmp_path: Path) -> Iterator[Path]:
    whl = make_wheel(tmp_path, "demo", "1.0", "py3-none-any", FILES, compression=zipfile.ZIP_STORED)
    yield whl
    wz = members._WORKER_ZIPS.pop(str(whl), None)
    if wz is not None:
        wz.close()


def _info(name: str, size: int) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name)
    info.compress_size = size
    return info


def test_large_members_go_alone_and_small_ones_in_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(members, "BATCH_BYTES", 100)
    infos = [_info("a", 10), _info("b", 100), _info("c", 60), _info("d", 250), _info("e", 40),
             _info("f", 99), _info("g", 1), _info("h", 0)]
    got = [[i.filename for i in batch] for batch in _batches(infos)]
    # largest first: d (250) and b (100, at the limit) alone; then f 99 + c 60 reach 100;
    # e 40 + a 10 + g 1 + h 0 are what is left
    assert got == [["d"], ["b"], ["f", "c"], ["e", "a", "g", "h"]]
    assert _batches([]) == []
    assert [[i.filename for i in b] for b in _batches([_info("x", 30), _info("y", 70)])] == [["y", "x"]]


def test_a_batch_job_opens_the_wheel_once_under_the_callers_budget(wheel: Path) -> None:
    members._WORKER_ZIPS.pop(str(wheel), None)
    budget = Budget(member_bytes=5000)
    got = _batch_job(str(wheel), budget, [("demo/big.txt", "sha256"), ("demo/mid.txt", "sha512")])
    assert [r.name for r in got] == ["demo/big.txt", "demo/mid.txt"]
    assert got[0].error is not None
    assert got[0].error.startswith("demo/big.txt declares 9000 inflated bytes, over the ")
    assert got[0].digest is None
    assert (got[1].error, got[1].size, got[1].digest) == (None, 3000, _b64("sha512", b"m" * 3000))
    opened = members._WORKER_ZIPS[str(wheel)]
    assert opened.budget == budget
    again = _batch_job(str(wheel), Budget(), [("demo/small.txt", "sha384")])  # the same archive
    assert members._WORKER_ZIPS[str(wheel)] is opened
    assert again[0].digest == _b64("sha384", b"s" * 100)


def test_members_read_in_a_pool_come_back_in_the_callers_order(
    wheel: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(members, "BATCH_BYTES", 3000)
    members._WORKER_ZIPS.pop(str(wheel), None)
    with WheelZip.open(wheel, Budget()) as wz, ThreadPoolExecutor(2) as pool:
        infos = [wz.zf.getinfo(n) for n in ("demo/small.txt", "demo/big.txt", "demo/mid.txt")]
        algos = {"demo/mid.txt": "sha512"}
        pooled = read_members(wz, infos, algos, pool)  # type: ignore[arg-type]
        inline = read_members(wz, infos, algos)
    want = [("demo/small.txt", _b64("sha256", b"s" * 100)), ("demo/big.txt", _b64("sha256", b"b" * 9000)),
            ("demo/mid.txt", _b64("sha512", b"m" * 3000))]
    assert [(r.name, r.digest) for r in pooled] == want
    assert [(r.name, r.digest) for r in inline] == want


def test_read_one_wants_an_elf_member(wheel: Path) -> None:
    with WheelZip.open(wheel, Budget(member_bytes=5000)) as wz:
        with pytest.raises(ElfError, match="^not an ELF file$"):
            read_one(wz, wz.zf.getinfo("demo/mid.txt"))
        with pytest.raises(ElfError, match="^demo/big.txt declares 9000 inflated bytes"):
            read_one(wz, wz.zf.getinfo("demo/big.txt"))


def _readelf_dynamic(lib: Path) -> tuple[list[str], str | None]:
    out = subprocess.run(["readelf", "-dW", str(lib)], capture_output=True, text=True, check=True).stdout
    needed = [line.split("[")[1].rstrip("]") for line in out.splitlines() if "(NEEDED)" in line]
    soname = [line.split("[")[1].rstrip("]") for line in out.splitlines() if "(SONAME)" in line]
    return needed, (soname[0] if soname else None)


@pytest.mark.skipif(shutil.which("readelf") is None, reason="needs readelf")
@pytest.mark.parametrize(("head_keep", "threaded"), [(2 << 20, False), (64, False), (64, True)])
def test_a_streamed_elf_member_is_read_as_readelf_and_hashlib_read_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, head_keep: int, threaded: bool
) -> None:
    """The streaming path (forced for a small library): whatever the head kept, the ranges the
    ELF reader still needs are inflated again, and the hash may run in a second thread."""
    lib = system_lib("libz.so.1")
    monkeypatch.setattr(members, "SMALL_BYTES", 0)
    monkeypatch.setattr(members, "HEAD_KEEP", head_keep)
    monkeypatch.setattr(members, "TAIL_KEEP", 16)
    monkeypatch.setattr(members, "THREAD_HASH_BYTES", 0 if threaded else 1 << 40)
    whl = make_wheel(tmp_path, "demo", "1.0", "py3-none-any", {"demo/libz.so.1": lib, "demo/x.txt": "x" * 10})
    data = lib.read_bytes()
    with WheelZip.open(whl, Budget()) as wz:
        res = read_member(wz, wz.zf.getinfo("demo/libz.so.1"), "sha384")
        txt = read_member(wz, wz.zf.getinfo("demo/x.txt"))
    needed, soname = _readelf_dynamic(lib)
    assert (res.name, res.error, res.elf_error, res.is_elf) == ("demo/libz.so.1", None, None, True)
    assert (res.size, res.digest) == (len(data), _b64("sha384", data))
    assert res.elf is not None and list(res.elf.needed) == needed and res.elf.soname == soname
    assert (txt.is_elf, txt.elf, txt.size, txt.digest) == (False, None, 10, _b64("sha256", b"x" * 10))


@pytest.mark.parametrize("small", [True, False])
def test_an_elf_magic_that_is_no_elf_is_an_elf_error_not_a_read_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small: bool
) -> None:
    if not small:
        monkeypatch.setattr(members, "SMALL_BYTES", 0)
    junk = b"\x7fELF" + bytes(100)
    whl = make_wheel(tmp_path, "demo", "1.0", "py3-none-any", {"demo/bad.so": junk})
    with WheelZip.open(whl, Budget()) as wz:
        res = read_member(wz, wz.zf.getinfo("demo/bad.so"))
    assert (res.error, res.is_elf, res.elf, res.size) == (None, True, None, 104)
    assert res.digest == _b64("sha256", junk) and res.elf_error


FAIL = "demo/blob.bin: corrupt or truncated archive member"


@pytest.mark.parametrize("small", [True, False])
def test_a_member_read_whole_names_what_is_wrong_with_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small: bool
) -> None:
    if not small:
        monkeypatch.setattr(members, "SMALL_BYTES", 0)
    payload = bytes(random.Random(3).choices(b"ACGT", k=50_000))

    def read(whl: Path) -> str | None:
        with WheelZip.open(whl, Budget()) as wz:
            res = read_member(wz, wz.zf.getinfo("demo/blob.bin"))
        assert res.digest is None and res.size == 0
        return res.error

    def wheel(name: str, compression: int = zipfile.ZIP_DEFLATED) -> Path:
        return make_wheel(tmp_path / name, "demo", "1.0", "py3-none-any", {"demo/blob.bin": payload},
                          compression=compression)

    whl = wheel("crc")
    wrong_crc(whl, "demo/blob.bin")
    assert read(whl) == f"{FAIL} (CRC-32 mismatch)"
    whl = wheel("long")  # declared 7 bytes longer than it inflates
    edit_member_headers(whl, "demo/blob.bin", 22, 24, "<I", lambda n: n + 7)
    assert read(whl) == f"{FAIL} (inflated to 50000 bytes, 50007 declared)"
    whl = wheel("bz2", zipfile.ZIP_BZIP2)
    assert read(whl) == "demo/blob.bin: unsupported compression method 12"
    whl = wheel("bad")
    with zipfile.ZipFile(whl) as zf:
        info = zf.getinfo("demo/blob.bin")
    raw = bytearray(whl.read_bytes())
    start = info.header_offset + 30 + len(info.filename) + len(info.extra)
    raw[start] = 0x07  # a reserved deflate block type (RFC 1951, 3.2.3)
    whl.write_bytes(bytes(raw))
    with pytest.raises(zlib.error) as truth:
        zlib.decompressobj(-15).decompress(bytes(raw[start : start + info.compress_size]))
    assert read(whl) == f"{FAIL} ({truth.value})"


def test_a_small_member_cut_short_under_the_reader_is_a_short_read(tmp_path: Path) -> None:
    whl = make_wheel(tmp_path, "demo", "1.0", "py3-none-any", {"demo/blob.bin": b"abc" * 1000})
    with WheelZip.open(whl, Budget()) as wz:
        info = wz.zf.getinfo("demo/blob.bin")
        os.truncate(whl, wz.data_offset(info) + 10)
        res = read_member(wz, info)
    assert res.error == f"{FAIL} (short read)" and res.digest is None


@pytest.mark.parametrize("threaded", [False, True])
def test_an_empty_member_streamed_hashes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, threaded: bool
) -> None:
    monkeypatch.setattr(members, "SMALL_BYTES", -1)
    monkeypatch.setattr(members, "THREAD_HASH_BYTES", 0 if threaded else 1 << 40)
    whl = make_wheel(tmp_path, "demo", "1.0", "py3-none-any", {"demo/empty": b""})
    with WheelZip.open(whl, Budget()) as wz:
        res = read_member(wz, wz.zf.getinfo("demo/empty"), "sha512")
    assert (res.error, res.size, res.digest, res.is_elf) == (None, 0, _b64("sha512", b""), False)


def _readelf_segments(lib: Path) -> tuple[list[tuple[int, int]], list[tuple[int, int]], tuple[int, int]]:
    """(read-only PT_LOAD ranges, PT_DYNAMIC ranges, section table range), as readelf reads them."""
    progs = subprocess.run(["readelf", "-lW", str(lib)], capture_output=True, text=True, check=True).stdout
    loads, dyn = [], []
    for line in progs.splitlines():
        f = line.split()
        if f and f[0] in ("LOAD", "DYNAMIC"):
            off, filesz, flags = int(f[1], 16), int(f[4], 16), " ".join(f[6:-1])
            if f[0] == "DYNAMIC":
                dyn.append((off, off + filesz))
            elif "E" not in flags and "W" not in flags:
                loads.append((off, off + filesz))
    head = subprocess.run(["readelf", "-hW", str(lib)], capture_output=True, text=True, check=True).stdout
    pairs = (line.partition(":") for line in head.splitlines())
    field = {k.strip(): v.split()[0] for k, _, v in pairs if v.split()}
    shoff, shsize = int(field["Start of section headers"]), int(field["Size of section headers"])
    return loads, dyn, (shoff, shoff + shsize * int(field["Number of section headers"]))


@pytest.mark.skipif(shutil.which("readelf") is None, reason="needs readelf")
def test_the_ranges_kept_while_inflating_are_readelfs_segments(monkeypatch: pytest.MonkeyPatch) -> None:
    lib = system_lib("libz.so.1")
    data = lib.read_bytes()
    loads, dyn, (a, b) = _readelf_segments(lib)
    assert members._header_ranges(data[:4096], len(data)) == [*dyn, (max(0, a - members.TAIL_KEEP), b)]
    monkeypatch.setattr(members, "TAIL_KEEP", 100)
    assert members._header_ranges(data[:4096], len(data)) == [*dyn, (a - 100, b)]
    assert members._header_ranges(data[:4096], b - 10) == [*dyn, (a - 100, b - 10)]  # cut at the size
    assert members._header_ranges(b"\x7fELF" + bytes(10), 100) == []  # no header to read
    assert members._start_hits(data[:4096], members.HITS_MIN - 1) is None  # too small to bother
    hits = members._start_hits(data[:4096], members.HITS_MIN)
    assert hits is not None and hits.ranges == loads
    assert members._start_hits(b"junk" * 100, members.HITS_MIN) is None


def test_a_library_on_disk_is_scanned_once_past_its_first_8_mib(tmp_path: Path) -> None:
    """``load_file`` hands the GPU scan a large section in 8 MiB pieces: a code object past the
    first piece is found once, at its place."""
    from tests.fixtures.native import embed_in_rodata
    from toolkit.inspect.readers.gpuscan import CodeObject
    from toolkit.inspect.readers.members import load_file

    ident = b"\x7fELF" + bytes([2, 1, 1, 64, 3]) + bytes(7)  # ELF64 LE, HSA, ABI version 3
    head = ident + struct.pack("<HHIQQQIHHHHHH", 3, 224, 1, 0, 0, 4096 - 64, 0x30, 64, 0, 0, 64, 1, 0)
    obj = head + bytes(4096 - len(head))  # EM_AMDGPU, e_flags 0x30: gfx908 (LLVM AMDGPUUsage)
    lib = embed_in_rodata(tmp_path, "libbig.so", [bytes((8 << 20) + (512 << 10)), obj, bytes(3 << 20)])
    assert load_file(lib).gpu_code == (CodeObject("gfx908", 4096, ".rodata (raw ELF)"),)


class _Unreadable:
    """A member whose bytes cannot be read again (it shrank under the reader)."""

    def read(self, start: int, length: int) -> bytes:
        return b""


def test_a_parse_that_cannot_gather_its_ranges_gives_up_after_four_rounds() -> None:
    from toolkit.core.errors import ElfError
    from toolkit.inspect.readers.elf import Image

    data = system_lib("libz.so.1").read_bytes()
    img = Image(len(data), [(0, data[:64])])  # the ELF header only
    with pytest.raises(ElfError) as err:
        members._parse(_Unreadable(), img, False)  # type: ignore[arg-type]
    assert str(err.value) == "could not gather the sections it needs"


def _gpu_lib(tmp_path: Path) -> tuple[Path, bytes]:
    from tests.fixtures.native import embed_in_rodata

    ident = b"\x7fELF" + bytes([2, 1, 1, 64, 3]) + bytes(7)  # ELF64 LE, HSA, ABI version 3
    size = 300_000
    head = ident + struct.pack("<HHIQQQIHHHHHH", 3, 224, 1, 0, 0, size - 64, 0x30, 64, 0, 0, 64, 1, 0)
    obj = head + random.Random(1).randbytes(size - len(head) - 64) + bytes(64)  # EM_AMDGPU gfx908
    return embed_in_rodata(tmp_path / "src", "libgpu.so", [bytes(5000), obj, bytes(7000)]), obj


@pytest.mark.parametrize("noted", [False, True])
def test_gpu_code_in_a_streamed_member_is_found_past_what_was_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, noted: bool
) -> None:
    """A code object larger than the bytes kept: the scan passes over its body (``Ranged``
    reads or seeks), with or without the places noted while inflating (``Hits``)."""
    from toolkit.inspect.readers.gpuscan import CodeObject

    lib, obj = _gpu_lib(tmp_path)
    monkeypatch.setattr(members, "SMALL_BYTES", 0)
    monkeypatch.setattr(members, "HEAD_KEEP", 64)
    monkeypatch.setattr(members, "HITS_MIN", 0 if noted else 1 << 40)
    monkeypatch.setattr(members, "SEEK_MIN", 1000)
    monkeypatch.setattr(members, "TAIL_KEEP", 16)
    monkeypatch.setattr(inflate, "CHUNK", 16 << 10)  # the object spans many inflated chunks
    monkeypatch.setattr(gpuscan, "WINDOW", 4096)  # and many windows of the scan
    whl = make_wheel(tmp_path, "demo", "1.0", "py3-none-any", {"demo/libgpu.so": lib})
    with WheelZip.open(whl, Budget()) as wz:
        res = read_member(wz, wz.zf.getinfo("demo/libgpu.so"))
    assert res.error is None and res.elf_error is None and res.elf is not None
    assert res.elf.gpu_code == (CodeObject("gfx908", len(obj), ".rodata (raw ELF)"),)
    assert res.elf.gpu_problems == []


@pytest.mark.parametrize(("limit", "threaded"), [(5000, True), (5001, False)])
def test_members_of_the_documented_size_on_are_hashed_in_a_second_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, limit: int, threaded: bool
) -> None:
    made: list[str] = []

    class Recording(members._BackgroundHash):
        def __init__(self, algo: str) -> None:
            made.append(algo)
            super().__init__(algo)

    monkeypatch.setattr(members, "_BackgroundHash", Recording)
    monkeypatch.setattr(members, "SMALL_BYTES", 0)
    monkeypatch.setattr(members, "THREAD_HASH_BYTES", limit)  # "members this large"
    whl = make_wheel(tmp_path, "demo", "1.0", "py3-none-any", {"demo/b.bin": b"z" * 5000})
    with WheelZip.open(whl, Budget()) as wz:
        res = read_member(wz, wz.zf.getinfo("demo/b.bin"), "sha384")
    assert made == (["sha384"] if threaded else [])
    assert res.digest == _b64("sha384", b"z" * 5000)


def test_an_empty_file_is_named_as_such(tmp_path: Path) -> None:
    empty = tmp_path / "libempty.so"
    empty.write_bytes(b"")
    with pytest.raises(ElfError) as err:
        load_file(empty)
    assert str(err.value) == "empty file"


def test_members_of_batch_bytes_or_more_are_alone_and_small_ones_fill_a_batch() -> None:
    def member(name: str, size: int) -> zipfile.ZipInfo:
        info = zipfile.ZipInfo(name)
        info.compress_size = size
        return info

    big, edge, a, b, c = (member("big", BATCH_BYTES + 1), member("edge", BATCH_BYTES),
                          member("a", BATCH_BYTES - 10), member("b", 10), member("c", 1))
    assert _batches([c, a, edge, b, big]) == [[big], [edge], [a, b], [c]]
    assert _batches([c, b]) == [[b, c]]  # largest first
    assert _batches([]) == []
