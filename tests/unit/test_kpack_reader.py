"""The kpack reader against archives and markers built from upstream's description with
``msgpack`` and ``zstandard`` (tests/fixtures/kpack.py): read right, and every truncated or
lying archive refused with one ``KpackError`` (exit 2), never a Python error or a wrong count."""

from __future__ import annotations

import struct
from collections.abc import Iterator
from pathlib import Path

import msgpack
import pytest
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.fixtures import kpack as K
from toolkit.core.errors import KpackError, UsageError
from toolkit.inspect.readers import msgpack as mp
from toolkit.inspect.readers.kpack import Archive, read_archive, read_ref
from toolkit.inspect.readers.kpackfiles import _Forward, file_archive
from toolkit.inspect.readers.members import load_file

KERNELS = [("lib/libx.so#0", "gfx90a", K.code_object("gfx90a", 20000, b"ab")),
           ("lib/libx.so#1", "gfx90a", K.code_object("gfx90a", 3000, b"c")),
           ("lib/libx.so#0", "gfx942", K.code_object("gfx942", 5000, b"de")),
           ("lib/liby.so#0", "gfx942", K.code_object("gfx942"))]


def read(data: bytes) -> Archive:
    return read_archive(lambda off, n: data[off : off + n], len(data), "t.kpack")


@pytest.mark.parametrize("scheme", ["zstd-per-kernel", "none"])
def test_archive_read_right(scheme: str) -> None:
    data = K.archive(KERNELS, scheme=scheme)
    a = read(data)
    assert a.scheme == scheme and a.arches == ("gfx90a", "gfx942")
    # the oracle: msgpack's table of contents and the frame sizes struct reads from the blob
    toc = msgpack.unpackb(data[struct.unpack_from("<Q", data, 8)[0]:], raw=False)
    stored = K.frame_sizes(data) if scheme != "none" else [b["size"] for b in toc["blobs"]]
    assert stored[0] < 20000 if scheme != "none" else stored[0] == 20000  # compressed: fewer bytes
    want: dict[str, tuple[int, int]] = {}
    for per in toc["toc"].values():
        for arch, meta in per.items():
            n, b = want.get(arch, (0, 0))
            want[arch] = (n + 1, b + stored[meta["ordinal"]])
    assert a.per_target() == want
    assert want == {"gfx90a": (2, stored[0] + stored[1]), "gfx942": (2, stored[2] + stored[3])}
    assert sorted((k.binary, k.target, k.size) for k in a.kernels) == sorted(
        (b, t, len(d)) for b, t, d in KERNELS)
    assert sorted(k.binary for k in a.holds("lib/libx.so")) == ["lib/libx.so#0"] * 2 + ["lib/libx.so#1"]
    assert a.holds("lib/lib") == []  # the kernel name, "#", a number: no prefix match


def test_archive_read_from_a_forward_only_stream(tmp_path: Path) -> None:
    data = K.archive(KERNELS)
    pulls: list[int] = []

    def start() -> Iterator[bytes]:
        pulls.append(1)
        return iter([data[i : i + 100] for i in range(0, len(data), 100)])

    a = read_archive(_Forward(start), len(data), "t.kpack")
    assert a.per_target() == read(data).per_target()
    assert len(pulls) == 2  # header + table of contents, then the code objects in order
    (tmp_path / "a.kpack").write_bytes(data)
    assert file_archive(tmp_path / "a.kpack").per_target() == a.per_target()


def _retoc(data: bytes, **edit: object) -> bytes:
    """The archive with its table of contents edited (the header's offset kept)."""
    at = struct.unpack_from("<Q", data, 8)[0]
    toc = msgpack.unpackb(data[at:], raw=False)
    packed: bytes = msgpack.packb({**toc, **edit}, use_bin_type=True)
    return data[:at] + packed


GOOD = K.archive(KERNELS)
PLAIN = K.archive(KERNELS, scheme="none")
TOC_AT = struct.unpack_from("<Q", GOOD, 8)[0]
BLOB = struct.unpack_from("<I", GOOD, 64 + 4)[0]  # the first frame's size


@pytest.mark.parametrize(("data", "words"), [
    (GOOD[:10], "truncated kpack archive (10 bytes"),
    (b"KPAC" + GOOD[4:], "not a kpack archive"),
    (GOOD[:4] + struct.pack("<I", 2) + GOOD[8:], "format version 2"),
    (GOOD[:8] + struct.pack("<Q", len(GOOD)) + GOOD[16:], "lies outside the archive"),
    (GOOD[:8] + struct.pack("<Q", 3) + GOOD[16:], "lies outside the archive"),
    (GOOD[:-1], "truncated MessagePack"),  # the file cut short: its table of contents too
    (GOOD[:8] + struct.pack("<Q", TOC_AT - 5) + GOOD[16 : TOC_AT - 5] + GOOD[TOC_AT:],
     "lies outside the archive's data"),  # the blob shorter than its size says
    (GOOD + b"\0", "bytes follow the MessagePack value"),
    (GOOD[:8] + struct.pack("<Q", TOC_AT - 1) + GOOD[16:], "bytes follow the MessagePack value"),
    (_retoc(GOOD, zstd_size=10 ** 9), "the zstd blob"),
    (_retoc(GOOD, zstd_offset=2), "lies outside the archive's data"),
    (_retoc(GOOD, compression_scheme="lz4"), "compression scheme 'lz4'"),
    (_retoc(GOOD, gfx_arches=["gfx90a"]), "do not name gfx942"),
    (_retoc(GOOD, gfx_arches="gfx90a"), "gfx_arches is not a list of strings"),
    (_retoc(GOOD, toc={"lib/libx.so#0": {"gfx90a": {"ordinal": 4, "original_size": 1}}}),
     "ordinal 4 points outside the 4 stored code objects"),
    (_retoc(GOOD, toc={"lib/libx.so#0": {"gfx90a": {"ordinal": -1, "original_size": 1}}}),
     "not an unsigned integer"),
    (_retoc(GOOD, toc={"lib/libx.so#0": {"gfx90a": {"ordinal": 0, "original_size": 19999}}}),
     "its zstd frame holds 20000 bytes, its entry says 19999"),
    (_retoc(GOOD, toc={"lib/libx.so#0": {"gfx942": {"ordinal": 0, "original_size": 20000}}}),
     "the code object's ELF header says gfx90a"),
    (GOOD[:64] + struct.pack("<I", 1000) + GOOD[68:], "declares 1000 kernels"),
    (GOOD[:68] + struct.pack("<I", BLOB + 1) + GOOD[72:], "zstd frame"),
    (GOOD[:72] + b"\0\0\0\0" + GOOD[76:], "not a readable zstd frame"),
    (_retoc(PLAIN, blobs=[{"offset": 64, "size": 10 ** 6}] * 4), "lies outside the archive's data"),
    (_retoc(PLAIN, blobs=[{"offset": 65, "size": 20000}] * 4), "not an AMDGPU code object"),
    (_retoc(PLAIN, blobs=[{"offset": 64, "size": 100}] * 4),
     "its blob holds 100 bytes, its entry says 20000"),
    (_retoc(PLAIN, blobs=None), "without a blobs list"),
    (_retoc(GOOD, toc=[1]), "no toc map"),
])
def test_bad_archives_fail_closed(data: bytes, words: str) -> None:
    with pytest.raises(KpackError, match=None) as err:
        read(data)
    assert words in str(err.value)
    assert isinstance(err.value, UsageError) and err.value.exit_code == 2  # README: bad input


@settings(max_examples=150, deadline=None)
@given(cut=st.integers(0, len(GOOD) - 1), flip=st.integers(0, len(GOOD) - 1), bit=st.integers(0, 7))
def test_damaged_archives_never_escape_as_python_errors(cut: int, flip: int, bit: int) -> None:
    damaged = bytearray(GOOD)
    damaged[flip] ^= 1 << bit
    for data in (GOOD[:cut], bytes(damaged)):
        try:
            a = read(data)
        except KpackError:
            continue
        # a flip the format cannot see (a code object's body): the counts are unchanged
        assert a.per_target() == read(GOOD).per_target()


def test_msgpack_decoder_agrees_with_msgpack() -> None:
    value = {"a": [1, -1, 127, -32, 128, 255, 256, 65536, 2 ** 32, 2 ** 63, -129, -2 ** 40, None,
                   True, False, 1.5, "é" * 40, "x" * 300, "y" * 70000, b"\0" * 300],
             "nested": {"k": {"l": [[], {}]}}, "big": list(range(20))}
    raw = msgpack.packb(value, use_bin_type=True)
    got, used = mp.unpack(raw, "t")
    assert got == msgpack.unpackb(raw, raw=False) and used == len(raw)


@pytest.mark.parametrize(("raw", "words"), [
    (b"\xdd\xff\xff\xff\xff", "declares 4294967295 items"),
    (b"\x91" * 40 + b"\x01", "nested deeper than"),
    (msgpack.packb({1: 2}), "has a int key"),
    (b"\x82\xa1a\x01\xa1a\x02", "repeats the key 'a'"),
    (b"\xc7\x01\x05\x00", "type byte 0xc7"),
    (b"\xa2\xff\xfe", "not UTF-8"),
    (b"\xdb\xff\xff\xff\xff", "truncated MessagePack"),
])
def test_msgpack_decoder_refuses(raw: bytes, words: str) -> None:
    with pytest.raises(KpackError) as err:
        mp.unpack(raw, "t")
    assert words in str(err.value)


def test_marker_read_right_and_refused() -> None:
    assert read_ref(K.ref("lib/libx.so", ["a_@GFXARCH@.kpack", "b.kpack"]) + b"\0" * 7) == (
        "lib/libx.so", ("a_@GFXARCH@.kpack", "b.kpack"))
    for bad, words in ((K.ref("x", []), "kpack_search_paths is empty"),
                       (msgpack.packb({"kpack_search_paths": ["a"]}), "no kernel_name"),
                       (msgpack.packb(["x"]), "not a map"), (K.ref("x", ["a"])[:-2], "truncated")):
        with pytest.raises(KpackError, match=words):
            read_ref(bad)


def test_split_host_library(tmp_path: Path) -> None:
    """gcc builds the library, as a kpack split leaves one: HIPK wrappers, a zero-paged
    .hip_fatbin (not scanned: no "all zero" problem) and the marker."""
    marker = K.ref("lib/libx.so", ["../.kpack/x_@GFXARCH@.kpack"])
    lib = K.host_library(tmp_path, "libx.so", marker=marker, magics=(K.HIPK, K.HIPK))
    info = load_file(lib)
    assert info.kpack is not None and info.kpack.split
    assert info.kpack.kernel_name == "lib/libx.so"
    assert info.kpack.search_paths == ("../.kpack/x_@GFXARCH@.kpack",)
    assert (info.kpack.hipk, info.kpack.hipf) == (2, 0)
    assert info.gpu_code == () and info.gpu_problems == []
    # no marker: the same zeroed .hip_fatbin is a problem, as before
    plain = load_file(K.host_library(tmp_path / "p", "libp.so", marker=None, magics=(K.HIPF,)))
    assert plain.kpack is None
    assert plain.gpu_problems == [".hip_fatbin holds no offload bundle (4096 bytes, all zero)"]
    # a marker whose wrappers are still HIPF: .hip_fatbin still read (and judged)
    mixed = load_file(K.host_library(tmp_path / "m", "libm.so", marker=K.ref("m", ["m.kpack"]),
                                     magics=(K.HIPF,)))
    assert mixed.kpack is not None and not mixed.kpack.split and mixed.gpu_problems
    bad = load_file(K.host_library(tmp_path / "b", "libb.so", marker=b"\xc1"))
    assert bad.kpack is not None and bad.gpu_problems == [
        ".rocm_kpack_ref is unreadable: .rocm_kpack_ref: MessagePack type byte 0xc1 at offset 0 is not one "
        "kpack metadata uses (nil, bool, int, float, str, bin, array, map)"]


def test_zstd_frames_are_what_zstandard_wrote() -> None:
    """The oracle's own check of the fixture: each frame inflates to its code object."""
    data = K.archive(KERNELS)
    pos = 68
    for _, _, code in KERNELS:
        n = struct.unpack_from("<I", data, pos)[0]
        assert zstandard.ZstdDecompressor().decompress(data[pos + 4 : pos + 4 + n]) == code
        pos += 4 + n
