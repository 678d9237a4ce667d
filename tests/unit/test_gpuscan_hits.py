"""Scanning with the places noted during the one inflating pass (``Hits``) finds exactly what
the windowed scanner finds reading every byte: the same code objects, in the same order,
for sections holding bundles, compressed bundles, raw code objects and stray magic bytes,
whatever the chunking and however far the scan passes over bytes unread."""

from __future__ import annotations

import random
import struct
from collections.abc import Iterator

import pytest

from tests.fixtures.bundles import compress_bundle, make_bundle
from toolkit.inspect.readers.gpuscan import Hits, ScanRange, scan
from toolkit.inspect.readers.ranged import Ranged

HOST = ("host-x86_64-unknown-linux-gnu", b"")


def _code_object(flags: int, size: int) -> bytes:
    """A raw AMDGPU code object of ``size`` bytes (its section table ends the object)."""
    shoff = size - 64
    ident = b"\x7fELF" + bytes([2, 1, 1, 64, 3]) + bytes(7)
    head = ident + struct.pack("<HHIQQQIHHHHHH", 3, 224, 1, 0, 0, shoff, flags, 64, 0, 0, 64, 1, 0)
    return head + bytes(size - len(head))


def _pieces(rnd: random.Random) -> list[bytes]:
    bundle = make_bundle([HOST, ("hipv4-amdgcn-amd-amdhsa--gfx90a", b"\x7fELF" + bytes(300))], align=1)
    return [
        bundle,
        compress_bundle(make_bundle([HOST, ("hipv4-amdgcn-amd-amdhsa--gfx942", bytes(5000))], align=1)),
        _code_object(0x30, 4096),  # gfx908
        _code_object(0x4C, 200_000),  # gfx942, larger than a chunk
        b"__CLANG_OFFLOAD_BUNDLE__ is the magic",  # stray magic: not a bundle
        b"CCOB\x09\x00",
        b"\x7fELF" + bytes(60),  # an ELF header that is no code object
        bytes(rnd.randrange(256) for _ in range(rnd.randint(0, 300))),
        bytes(rnd.randint(0, 3 << 20)),  # zeros, sometimes longer than a seek
    ]


def _section(seed: int) -> bytes:
    rnd = random.Random(seed)
    pool = _pieces(rnd)
    return b"".join(rnd.choice(pool) for _ in range(rnd.randint(1, 14)))


def _chunked(data: bytes, rnd: random.Random) -> list[tuple[int, bytes]]:
    cuts = sorted({rnd.randint(1, max(1, len(data) - 1)) for _ in range(rnd.randint(0, 40))} | {0, len(data)})
    return [(a, data[a:b]) for a, b in zip(cuts, cuts[1:], strict=False) if a < b]


@pytest.mark.parametrize("seed", range(40))
def test_scanning_at_noted_places_finds_what_reading_everything_finds(seed: int) -> None:
    rnd = random.Random(1000 + seed)
    data = b"junk" * rnd.randint(0, 9) + _section(seed)
    start, end = rnd.randint(0, 8), len(data) - rnd.randint(0, 8)
    ranges = [ScanRange(".rodata", start, max(0, end - start))]
    hits = Hits([(0, len(data))])
    for off, chunk in _chunked(data, rnd):
        hits.feed(off, chunk)
    reads: list[tuple[int, int]] = []

    def whole(a: int, b: int) -> Iterator[bytes]:
        for i in range(a, b, 1 << 20):
            yield data[i : min(b, i + (1 << 20))]

    def seekable(a: int, b: int) -> Ranged:
        def read(x: int, y: int) -> Iterator[bytes]:
            reads.append((x, y))
            for i in range(x, y, 4096):
                yield data[i : min(y, i + 4096)]

        return Ranged(read, a, b, 1 << 16)

    expected = scan(ranges, whole)
    got = scan(ranges, seekable, hits)
    assert got.objects == expected.objects and got.problems == expected.problems
    assert hits.covers(start, end)


def test_the_noted_places_cover_patterns_split_across_chunks() -> None:
    # a code object's e_ident begins ELF magic, ELFCLASS64, ELFDATA2LSB, EV_CURRENT,
    # ELFOSABI_AMDGPU_HSA (64: AMDGPUUsage); a host ELF header (OS ABI 0) is no place
    code = b"\x7fELF\x02\x01\x01\x40"
    data = bytes(10) + b"__CLANG_OFFLOAD_BUNDLE__" + b"CCOB" + code + b"\x7fELF\x02\x01\x01\x00" + bytes(10)
    for cut in range(1, len(data)):
        hits = Hits([(0, len(data))])
        hits.feed(0, data[:cut])
        hits.feed(cut, data[cut:])
        want = [(10, b"__CLANG_OFFLOAD_BUNDLE__"), (34, b"CCOB"), (38, code)]
        assert hits.within(0, len(data)) == want


def test_a_section_outside_the_searched_bytes_is_read_whole() -> None:
    hits = Hits([(100, 200)])
    hits.feed(0, bytes(50))  # outside the ranges: not searched
    hits.feed(50, bytes(200))
    assert hits.covers(60, 240) and not hits.covers(0, 100)


def test_too_many_places_give_up_and_the_scan_reads_everything() -> None:
    hits = Hits([(0, 1 << 20)])
    hits.feed(0, b"CCOB" * (Hits.MAX // 2 + 1) * 2)
    assert not hits.covers(0, 16) and hits.found == []


def _fatbin(rnd: random.Random) -> bytes:
    """Compressed bundles (zstd, incompressible bodies) 4 KiB-aligned with zero padding, as
    clang lays out ``.hip_fatbin``."""
    out = b""
    for gfx in ("gfx90a", "gfx942", "gfx1100", "gfx1201")[: rnd.randint(1, 4)]:
        body = bytes(rnd.randrange(256) for _ in range(rnd.randint(1000, 300_000)))
        out += compress_bundle(make_bundle([HOST, (f"hipv4-amdgcn-amd-amdhsa--{gfx}", body)], align=1))
        out += bytes(-len(out) % 4096)
    return out + bytes(rnd.randint(0, 9000))


@pytest.mark.parametrize("seed", range(12))
def test_bytes_kept_around_the_places_are_the_files_bytes_and_spare_inflating(seed: int) -> None:
    from toolkit.inspect.readers.members import _kept_or_inflated

    rnd = random.Random(seed)
    data = bytes(rnd.randint(0, 5000)) + _fatbin(rnd) + _section(seed)
    hits = Hits([(0, len(data))])
    for off, chunk in _chunked(data, rnd):
        hits.feed(off, chunk)
    inflated: list[tuple[int, int]] = []  # the ranges read by inflating again

    def inflate(x: int, y: int) -> Iterator[bytes]:
        inflated.append((x, y))
        for i in range(x, y, 4096):
            yield data[i : min(y, i + 4096)]

    for pos in [rnd.randrange(len(data)) for _ in range(200)] + [at for at, _ in hits.found]:
        kept = hits.held_from(pos)
        assert data[pos : pos + len(kept)] == kept  # only the file's own bytes are kept
        assert hits.holds(pos) == bool(kept)
    for _ in range(50):  # any range reads back the file's bytes, kept or inflated
        x = rnd.randrange(len(data))
        y = rnd.randint(x, len(data))
        assert b"".join(_kept_or_inflated(hits, inflate, x, y)) == data[x:y]
    fatbin = [ScanRange(".hip_fatbin", 0, len(data) - len(_section(seed)))]

    def whole(a: int, b: int) -> Iterator[bytes]:
        yield data[a:b]

    def kept_first(a: int, b: int) -> Ranged:
        return Ranged(lambda x, y: _kept_or_inflated(hits, inflate, x, y), a, b, 1 << 30,
                      cheap=hits.holds)

    inflated.clear()
    got, expected = scan(fatbin, kept_first, hits), scan(fatbin, whole)
    assert got.objects == expected.objects and got.problems == expected.problems
    assert got.objects  # the bundles were found
    # every bundle's header came from the bytes kept: the scan inflates again only the zero
    # padding before the first bundle and what follows the last bundle's window (its body's
    # end, then the section's zero padding)
    ccob = [at for at, p in hits.found if p == b"CCOB" and at < fatbin[0].size]
    assert all(y <= min(ccob) or x >= max(ccob) + Hits.HOLD_AFTER for x, y in inflated)


def test_the_bytes_kept_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    # the windows and the bound an eighth of their size: the same proportions, an eighth of the bytes
    monkeypatch.setattr(Hits, "HOLD_BEFORE", Hits.HOLD_BEFORE // 8)
    monkeypatch.setattr(Hits, "HOLD_AFTER", Hits.HOLD_AFTER // 8)
    monkeypatch.setattr(Hits, "HOLD_MAX", Hits.HOLD_MAX // 8)
    hits = Hits([(0, 8 << 20)])
    step = Hits.HOLD_BEFORE + Hits.HOLD_AFTER + 1  # windows that do not touch
    chunk = bytearray(1 << 20)
    for i in range(0, len(chunk) - 4, step):
        chunk[i : i + 4] = b"CCOB"
    for off in range(0, 8 << 20, 1 << 20):
        hits.feed(off, bytes(chunk))
    kept = sum(len(buf) for _, _, buf in hits._held)
    assert Hits.HOLD_MAX - step < kept <= Hits.HOLD_MAX
    dense = Hits([(0, 8 << 20)])  # places closer than a window: one window, still bounded
    for off in range(0, 8 << 20, 1 << 20):
        dense.feed(off, b"CCOB" * (1 << 18))
    assert sum(len(buf) for _, _, buf in dense._held) <= Hits.HOLD_MAX
