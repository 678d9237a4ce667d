"""Every refusal of the kpack archive reader, as the whole line a user reads (hand-written from
the archive built with ``msgpack``/``zstandard``/``struct`` in tests/fixtures/kpack.py), and
the header's two numbers read as the unsigned u32/u64 upstream's format states
(ROCm/TheRock RFC0008 "Kpack Archive Format": ``KPAK``, u32 version, u64 offset)."""

from __future__ import annotations

import struct

import msgpack
import pytest

from tests.fixtures import kpack as K
from toolkit.core.errors import KpackError
from toolkit.inspect.readers.kpack import Archive, read_archive

KERNELS = [("lib/libx.so#0", "gfx90a", K.code_object("gfx90a", 20000, b"ab")),
           ("lib/libx.so#1", "gfx90a", K.code_object("gfx90a", 3000, b"c")),
           ("lib/libx.so#0", "gfx942", K.code_object("gfx942", 5000, b"de")),
           ("lib/liby.so#0", "gfx942", K.code_object("gfx942"))]
GOOD = K.archive(KERNELS)
PLAIN = K.archive(KERNELS, scheme="none")
TOC_AT = struct.unpack_from("<Q", GOOD, 8)[0]  # the oracle: struct reads the header
PLAIN_TOC_AT = struct.unpack_from("<Q", PLAIN, 8)[0]
FRAMES = K.frame_sizes(GOOD)


def read(data: bytes, size: int | None = None) -> Archive:
    return read_archive(lambda off, n: data[off : off + n], len(data) if size is None else size, "t.kpack")


def refusal(data: bytes, size: int | None = None) -> str:
    with pytest.raises(KpackError) as err:
        read(data, size)
    return str(err.value)


def one(target: str, **meta: object) -> dict[str, object]:
    """A table of contents of one entry: lib/libx.so#0 for ``target``."""
    return {"lib/libx.so#0": {target: meta}}


def retoc(data: bytes, **edit: object) -> bytes:
    at = struct.unpack_from("<Q", data, 8)[0]
    toc = msgpack.unpackb(data[at:], raw=False)
    packed: bytes = msgpack.packb({**toc, **edit}, use_bin_type=True)
    return data[:at] + packed


def header(version: int, toc_at: int, data: bytes = GOOD) -> bytes:
    return data[:4] + struct.pack("<IQ", version, toc_at) + data[16:]


def test_the_header_numbers_are_unsigned() -> None:
    # all 32 bits set: the u32 4294967295, not -1
    assert refusal(header(0xFFFFFFFF, TOC_AT)) == (
        "t.kpack: kpack format version 4294967295 (this reader knows 1)")
    assert refusal(header(2, TOC_AT)) == "t.kpack: kpack format version 2 (this reader knows 1)"
    # the top bit of the offset set: the u64 2**63 + TOC_AT, not a negative number
    assert refusal(header(1, 2 ** 63 + TOC_AT)) == (
        f"t.kpack: its table of contents offset {2 ** 63 + TOC_AT} lies outside the archive "
        f"(16..{len(GOOD) - 1})")
    assert refusal(header(1, 15)) == (
        f"t.kpack: its table of contents offset 15 lies outside the archive (16..{len(GOOD) - 1})")
    assert refusal(header(1, len(GOOD))) == (
        f"t.kpack: its table of contents offset {len(GOOD)} lies outside the archive "
        f"(16..{len(GOOD) - 1})")
    assert read(header(1, TOC_AT)).per_target() == read(GOOD).per_target()


def test_header_refusals() -> None:
    assert refusal(GOOD[:15]) == "t.kpack: truncated kpack archive (15 bytes; its header alone is 16)"
    assert refusal(b"KPAC" + GOOD[4:]) == "t.kpack: not a kpack archive (magic b'KPAC', expected b'KPAK')"
    # a table of contents over 64 MiB is refused before it is read (size as the caller says)
    assert refusal(header(1, 16), size=16 + (64 << 20) + 1) == (
        f"t.kpack: a table of contents of {(64 << 20) + 1} bytes (over {64 << 20})")
    # the file shorter than the size its caller gave: the read comes back short
    assert refusal(GOOD, size=len(GOOD) + 3) == (
        "t.kpack: truncated kpack archive (its table of contents is cut short)")
    at = TOC_AT
    assert refusal(GOOD[:at] + msgpack.packb([1])) == "t.kpack: its table of contents is a list, not a map"


def test_table_of_contents_refusals() -> None:
    assert refusal(retoc(GOOD, compression_scheme="lz4")) == (
        "t.kpack: compression scheme 'lz4' is not one of none, zstd-per-kernel")
    assert refusal(retoc(GOOD, gfx_arches="gfx90a")) == "t.kpack: gfx_arches is not a list of strings"
    assert refusal(retoc(GOOD, gfx_arches=["gfx90a", "gfx908"])) == (
        "t.kpack: lib/libx.so#0 for gfx942: its gfx_arches (gfx90a, gfx908) do not name gfx942")
    assert refusal(retoc(GOOD, toc=[1])) == "t.kpack: no toc map in its table of contents"
    assert refusal(retoc(GOOD, toc={"lib/libx.so#0": [1]})) == (
        "t.kpack: toc entry 'lib/libx.so#0' is not a map of targets")
    assert refusal(retoc(GOOD, toc={"lib/libx.so#0": {"gfx90a": 3}})) == (
        "t.kpack: lib/libx.so#0 for gfx90a is not a map")
    assert refusal(retoc(GOOD, toc={"lib/libx.so#0": {"gfx90a": {"ordinal": 4, "original_size": 1}}})) == (
        "t.kpack: lib/libx.so#0 for gfx90a: ordinal 4 points outside the 4 stored code objects")
    assert refusal(retoc(GOOD, toc={"lib/libx.so#0": {"gfx90a": {"ordinal": True, "original_size": 1}}})) == (
        "t.kpack: lib/libx.so#0 for gfx90a: ordinal is not an unsigned integer (True)")
    assert refusal(retoc(GOOD, toc={"lib/libx.so#0": {"gfx90a": {"ordinal": 0}}})) == (
        "t.kpack: lib/libx.so#0 for gfx90a: original_size is not an unsigned integer (None)")


def test_zstd_blob_refusals() -> None:
    assert refusal(retoc(GOOD, zstd_offset="64")) == "t.kpack: zstd_offset is not an unsigned integer ('64')"
    assert refusal(retoc(GOOD, zstd_size=-1)) == "t.kpack: zstd_size is not an unsigned integer (-1)"
    assert refusal(retoc(GOOD, zstd_offset=15)) == (
        f"t.kpack: the zstd blob (15..{15 + TOC_AT - 64}) lies outside the archive's data (16..{TOC_AT})")
    assert refusal(retoc(GOOD, zstd_size=TOC_AT - 63)) == (
        f"t.kpack: the zstd blob (64..{TOC_AT + 1}) lies outside the archive's data (16..{TOC_AT})")
    assert refusal(retoc(GOOD, zstd_size=3)) == (
        "t.kpack: the zstd blob's kernel count at offset 64 lies past the data")
    assert refusal(GOOD[:64] + struct.pack("<I", 1000) + GOOD[68:]) == (
        f"t.kpack: the zstd blob declares 1000 kernels in {TOC_AT - 64} bytes")
    # three frames counted of four: they end before the blob does
    end = 68 + sum(4 + n for n in FRAMES[:3])
    assert refusal(GOOD[:64] + struct.pack("<I", 3) + GOOD[68:]) == (
        f"t.kpack: the zstd blob's 3 frames end at {end}, its size says {TOC_AT}")
    # the first frame's size one too many: the last frame's size runs off the end
    assert refusal(GOOD[:68] + struct.pack("<I", TOC_AT) + GOOD[72:]) == (
        f"t.kpack: zstd frame 0 of {TOC_AT} bytes (72..{72 + TOC_AT}) lies outside the archive's "
        f"data (16..{TOC_AT})")
    last = 68 + sum(4 + n for n in FRAMES[:3])  # where the fourth frame's size is
    assert refusal(retoc(GOOD, zstd_size=last + 2 - 64)) == (
        f"t.kpack: the size of zstd frame 3 at offset {last} lies past the data")
    bad = refusal(GOOD[:72] + b"\0\0\0\0" + GOOD[76:])
    assert bad.startswith("t.kpack: zstd frame 0: not a readable zstd frame (") and bad.endswith(")")


def test_code_object_refusals() -> None:
    assert refusal(retoc(GOOD, toc=one("gfx90a", ordinal=0, original_size=19999))) == (
        "t.kpack: lib/libx.so#0 for gfx90a: its zstd frame holds 20000 bytes, its entry says 19999")
    assert refusal(retoc(GOOD, toc=one("gfx942", ordinal=0, original_size=20000))) == (
        "t.kpack: lib/libx.so#0 for gfx942: the code object's ELF header says gfx90a")
    assert refusal(retoc(PLAIN, blobs=None)) == "t.kpack: an uncompressed archive without a blobs list"
    assert refusal(retoc(PLAIN, blobs=[7])) == "t.kpack: blob 0 is not a map"
    assert refusal(retoc(PLAIN, blobs=[{"offset": 64}])) == (
        "t.kpack: blob 0 size is not an unsigned integer (None)")
    assert refusal(retoc(PLAIN, blobs=[{"offset": 1.5, "size": 1}])) == (
        "t.kpack: blob 0 offset is not an unsigned integer (1.5)")
    assert refusal(retoc(PLAIN, blobs=[{"offset": 64, "size": 10 ** 6}])) == (
        f"t.kpack: blob 0 (64..{64 + 10 ** 6}) lies outside the archive's data (16..{PLAIN_TOC_AT})")
    assert refusal(retoc(PLAIN, blobs=[{"offset": 64, "size": 100}] * 4)) == (
        "t.kpack: lib/libx.so#0 for gfx90a: its blob holds 100 bytes, its entry says 20000")
    assert refusal(retoc(PLAIN, blobs=[{"offset": 65, "size": 20000}] * 4)) == (
        "t.kpack: lib/libx.so#0 for gfx90a: not an AMDGPU code object (its first bytes are no valid "
        "ELF header)")
    # a blob shorter than an ELF header: no header to read a target from
    short = K.archive([("lib/libx.so#0", "gfx90a", K.code_object("gfx90a", 64)[:40])], scheme="none")
    assert refusal(short) == (
        "t.kpack: lib/libx.so#0 for gfx90a: not an AMDGPU code object (its first bytes are no valid "
        "ELF header)")


@pytest.mark.parametrize("scheme", ["zstd-per-kernel", "none"])
def test_an_archive_of_no_code_objects(scheme: str) -> None:
    """A zstd blob of just its count (0: 4 bytes) holds no frame; nothing is refused."""
    data = K.archive([], scheme=scheme, arches=["gfx90a"])
    a = read(data)
    assert (a.scheme, a.arches, a.kernels, a.per_target()) == (scheme, ("gfx90a",), [], {})
    if scheme == "zstd-per-kernel":
        toc = msgpack.unpackb(data[struct.unpack_from("<Q", data, 8)[0]:], raw=False)
        assert (toc["zstd_size"], data[64:68]) == (4, bytes(4))
