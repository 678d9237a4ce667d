"""``_all`` and ``_candidate`` of the GPU-code scanner pinned whole: every occurrence of a
pattern (overlapping ones too, as a naive search finds them); at a magic, what validates
(a raw code object, a plain bundle with a device entry, a ``CCOB`` bundle) is counted and
skipped whole, anything else steps one byte. The objects are built from the ELF64 layout and
LLVM's AMDGPUUsage (``e_flags`` 0x30 is gfx908, 0x4C gfx942; a v2 object's ISA is in its
note) and clang's bundle layout (``tests/fixtures``)."""

from __future__ import annotations

import struct

import pytest

from tests.fixtures.bundles import compress_bundle, make_bundle
from tests.fixtures.handmade_elf import code_object_v2, isa_version_note
from toolkit.inspect.readers.gpuscan import (
    HSA_ELF,
    CodeObject,
    Hits,
    ScanRange,
    _all,
    _candidate,
    scan,
)
from toolkit.inspect.readers.offload import CCOB_MAGIC, PLAIN_MAGIC, Stream

ELF = b"\x7fELF"
HOST = ("host-x86_64-unknown-linux-gnu", b"")


def _code_object(flags: int, size: int) -> bytes:
    """A raw AMDGPU code object (ELF64 LE, OS ABI HSA, ABI version 3, EM_AMDGPU, ET_DYN) of
    ``size`` bytes: its one-entry section table ends the object."""
    ident = ELF + bytes([2, 1, 1, 64, 3]) + bytes(7)
    head = ident + struct.pack("<HHIQQQIHHHHHH", 3, 224, 1, 0, 0, size - 64, flags, 64, 0, 0, 64, 1, 0)
    return head + bytes(size - len(head))


def _naive(buf: bytes, pat: bytes) -> list[int]:
    return [i for i in range(len(buf) - len(pat) + 1) if buf[i : i + len(pat)] == pat]


@pytest.mark.parametrize(("buf", "pat"), [
    (b"aaaa", b"aa"), (b"abababa", b"aba"), (b"", b"x"), (b"CCOBCCOB", CCOB_MAGIC), (b"xyz", b"xyz"),
    (bytes(10), b"\0"), (b"no match here", ELF),
])
def test_every_occurrence_is_found_in_order(buf: bytes, pat: bytes) -> None:
    assert list(_all(buf, pat)) == _naive(buf, pat)
    assert list(_all(bytearray(buf), pat)) == _naive(buf, pat)


def _run(data: bytes, pat: bytes, size: int | None = None, skip: int = 0) -> tuple[list[CodeObject], int]:
    s = Stream([data[i : i + 5] for i in range(0, len(data), 5)])
    s.skip(skip)
    got = _candidate(s, pat, len(data) if size is None else size, ".rodata")
    return got, s.pos


def test_a_raw_code_object_is_counted_and_skipped_whole() -> None:
    obj = _code_object(0x30, 4096)
    data = b"pad" + obj + b"tail"
    assert _run(data, HSA_ELF, skip=3) == ([CodeObject("gfx908", 4096, ".rodata (raw ELF)")], 3 + 4096)
    # the section ends exactly at the object's end: it still fits
    assert _run(data, HSA_ELF, size=3 + 4096, skip=3)[0] == [CodeObject("gfx908", 4096, ".rodata (raw ELF)")]
    # one byte short: no code object, one step
    assert _run(data, HSA_ELF, size=3 + 4095, skip=3) == ([], 4)


def test_an_elf_header_that_is_no_code_object_steps_one_byte() -> None:
    host_elf = ELF + bytes([2, 1, 1, 0, 0]) + bytes(200)  # OS ABI SYSV: not HSA
    assert _run(host_elf, HSA_ELF) == ([], 1)
    assert _run(HSA_ELF + bytes(10), HSA_ELF) == ([], 1)  # too short for a header


def test_a_code_object_v2_takes_its_target_from_its_note() -> None:
    obj = code_object_v2(isa_version_note(9, 0, 6))
    got, pos = _run(obj + bytes(8), HSA_ELF)
    assert got == [CodeObject("gfx906", len(obj), ".rodata (raw ELF)")] and pos == len(obj)


def test_a_plain_bundle_with_a_device_entry_is_counted_and_skipped_whole() -> None:
    bundle = make_bundle([HOST, ("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+", ELF + bytes(96))], align=1)
    data = bundle + b"after"
    got, pos = _run(data, PLAIN_MAGIC)
    assert got == [CodeObject("gfx90a:xnack+", 100, ".rodata (bundle)")] and pos == len(bundle)
    assert _run(data, PLAIN_MAGIC, size=len(bundle))[0] == got  # ends at the section's end
    assert _run(data, PLAIN_MAGIC, size=len(bundle) - 1) == ([], 1)  # runs past it


@pytest.mark.parametrize("data", [
    make_bundle([HOST], align=1),  # only a host entry
    make_bundle([("hipv4-amdgcn-amd-amdhsa--gfx90a", b"x")], align=1)[:50],  # table cut short
    PLAIN_MAGIC + struct.pack("<Q", 1 << 20) + bytes(64),  # an impossible entry count
    PLAIN_MAGIC + struct.pack("<QQQQ", 1, 0, 1, 1 << 20) + bytes(64),  # an impossible id length
    PLAIN_MAGIC + b" is a string in the HIP runtime",
])
def test_a_plain_magic_that_is_no_device_bundle_steps_one_byte(data: bytes) -> None:
    assert _run(data + bytes(100), PLAIN_MAGIC) == ([], 1)


@pytest.mark.parametrize(("method", "version"), [("zlib", 1), ("zstd", 2), ("zstd", 3)])
def test_a_compressed_bundle_is_counted_and_skipped_whole(method: str, version: int) -> None:
    ccob = compress_bundle(make_bundle([HOST, ("hipv4-amdgcn-amd-amdhsa--gfx942", bytes(6000))], align=1),
                           method, version)
    got, pos = _run(ccob + b"\x01rest", CCOB_MAGIC)
    assert got == [CodeObject("gfx942", len(ccob), f".rodata ({method} bundle)")] and pos == len(ccob)


@pytest.mark.parametrize("head", [
    CCOB_MAGIC + b"\x01\x00\x00",  # shorter than the 8-byte header
    CCOB_MAGIC + struct.pack("<HH", 0, 0),  # version 0
    CCOB_MAGIC + struct.pack("<HH", 4, 0),  # version 4
    CCOB_MAGIC + struct.pack("<HH", 0x100, 0),  # version 256 (only the low byte is 0)
    CCOB_MAGIC + struct.pack("<HH", 3, 2),  # method 2
    CCOB_MAGIC + struct.pack("<HH", 3, 0x100),  # method 256
])
def test_a_ccob_magic_with_no_valid_header_steps_one_byte(head: bytes) -> None:
    assert _run(head, CCOB_MAGIC) == ([], 1)


def test_a_ccob_header_whose_data_is_no_bundle_is_passed_over() -> None:
    bad = CCOB_MAGIC + struct.pack("<HHQQQ", 3, 0, 32 + 100, 1000, 0) + bytes(100)
    got, pos = _run(bad + bytes(50), CCOB_MAGIC)
    assert got == [] and 8 <= pos <= len(bad)  # what it read as the bundle is not looked at again


def test_scan_finds_each_kind_in_a_data_section_and_fatbin_problems_are_named() -> None:
    obj = _code_object(0x4C, 2048)
    bundle = make_bundle([HOST, ("hipv4-amdgcn-amd-amdhsa--gfx908", bytes(10))], align=1)
    data = b"\x7fELF junk " + obj + b"CCOB\x09\x00" + bundle + bytes(7)
    got = scan([ScanRange(".rodata", 0, len(data))], lambda a, b: [data[a:b]])
    assert got.objects == [CodeObject("gfx942", 2048, ".rodata (raw ELF)"),
                           CodeObject("gfx908", 10, ".rodata (bundle)")]
    assert got.problems == []
    zeros = scan([ScanRange(".hip_fatbin", 0, 64)], lambda a, b: [bytes(b - a)])
    assert zeros.objects == []
    assert zeros.problems == [".hip_fatbin holds no offload bundle (64 bytes, all zero)"]
    junk = scan([ScanRange(".hip_fatbin", 0, 16)], lambda a, b: [b"garbage!" * 2])
    assert junk.problems == [
        ".hip_fatbin is unreadable: unrecognised data at offset 0 of the fatbin: b'garbage!'"]


def test_windows_are_kept_up_to_exactly_the_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    from toolkit.inspect.readers.gpuscan import Hits

    monkeypatch.setattr(Hits, "HOLD_BEFORE", 10)
    monkeypatch.setattr(Hits, "HOLD_AFTER", 30)
    monkeypatch.setattr(Hits, "HOLD_MAX", 3 * 40)  # three whole windows of 10 + 30 bytes
    data = bytearray(1000)
    places = (100, 300, 500, 700)
    for at in places:
        data[at : at + 4] = CCOB_MAGIC
    hits = Hits([(0, len(data))])
    hits.feed(0, bytes(data))
    assert [(start, want, bytes(buf)) for start, want, buf in hits._held] == [
        (at - 10, at + 30, bytes(data[at - 10 : at + 30])) for at in places[:3]]
    assert [hits.holds(at) for at in places] == [True, True, True, False]
    assert hits.held_from(305) == bytes(data[305:330]) and hits.held_from(700) == b""
    assert hits.next_held(95) == 290 and hits.next_held(490) is None


@pytest.mark.parametrize("window", [24, 25, 31, 100, 4096, 1 << 20])
@pytest.mark.parametrize("chunk", [1, 7, 1000])
def test_a_data_section_is_scanned_whole_whatever_the_window(
    monkeypatch: pytest.MonkeyPatch, window: int, chunk: int
) -> None:
    from toolkit.inspect.readers import gpuscan

    monkeypatch.setattr(gpuscan, "WINDOW", window)
    a, b = _code_object(0x30, 300), _code_object(0x4C, 200)
    bundle = make_bundle([HOST, ("hipv4-amdgcn-amd-amdhsa--gfx90a", bytes(40))], align=1)
    data = (b"junk" * 5 + a + b"CCOB\x09\x00" + b"x" * 37 + bundle + b"\x7fEL" + b"y" * 101
            + PLAIN_MAGIC + b" no bundle" + b + b"end")
    want = [CodeObject("gfx908", 300, ".data (raw ELF)"), CodeObject("gfx90a", 40, ".data (bundle)"),
            CodeObject("gfx942", 200, ".data (raw ELF)")]

    def chunks(x: int, y: int) -> list[bytes]:
        return [data[i : min(y, i + chunk)] for i in range(x, y, chunk)]

    assert scan([ScanRange(".data", 0, len(data))], chunks).objects == want
    # the last object cut by the section's end is no object
    assert scan([ScanRange(".data", 0, len(data) - 4)], chunks).objects == want[:2]


def test_feed_searches_only_chunks_that_touch_the_ranges() -> None:
    from toolkit.inspect.readers.gpuscan import Hits

    hits = Hits([(100, 200)])
    hits.feed(0, b"x" * 96 + b"CCOB")  # ends where the range starts: not searched
    hits.feed(100, b"OB" + bytes(98))  # joins nothing from the chunk that was not searched
    hits.feed(200, b"CCOB")  # starts where the range ends: not searched
    assert hits.found == [] and not hits.covers(0, 100) and not hits.covers(200, 204)
    assert hits.covers(100, 200) and not hits.covers(99, 200)
    two = Hits([(0, 1000)])
    two.feed(0, b"..CC")
    two.feed(4, b"OB.\x7fE")
    two.feed(9, b"LF\x02\x01\x01@" + PLAIN_MAGIC[:5])  # a code object's first 8 bytes
    two.feed(20, PLAIN_MAGIC[5:] + b"CCOB")
    assert two.found == [(2, CCOB_MAGIC), (7, HSA_ELF), (15, PLAIN_MAGIC), (39, CCOB_MAGIC)]
    assert two.covers(0, 43) and two._searched == [[0, 43]]
    two.feed(44, b"CCOB")  # not contiguous: a second searched range, no pattern across the gap
    assert two._searched == [[0, 43], [44, 48]] and two.found[-1] == (44, CCOB_MAGIC)


def test_feed_gives_up_only_past_the_most_places(monkeypatch: pytest.MonkeyPatch) -> None:
    from toolkit.inspect.readers.gpuscan import Hits

    monkeypatch.setattr(Hits, "MAX", 3)
    at_most = Hits([(0, 100)])
    at_most.feed(0, CCOB_MAGIC * 3)
    assert len(at_most.found) == 3 and at_most.covers(0, 12)
    over = Hits([(0, 100)])
    over.feed(0, CCOB_MAGIC * 4)
    assert (over.found, over.ranges, over._held) == ([], [], []) and not over.covers(0, 16)


def test_code_objects_of_a_plain_bundle_say_where_and_how_they_were_found() -> None:
    from tests.fixtures.bundles import make_bundle
    from toolkit.inspect.readers.gpuscan import _from_bundle
    from toolkit.inspect.readers.offload import Stream, read_plain

    data = make_bundle([("host-x86_64-unknown-linux-gnu-", b""),
                        ("hipv4-amdgcn-amd-amdhsa--gfx90a", b"\x7fELF" + bytes(60))])
    objs = _from_bundle(read_plain(Stream([data]), len(data)), ".hip_fatbin")
    assert [(o.target, o.where) for o in objs] == [("gfx90a", ".hip_fatbin (bundle)")]


def test_only_an_abi_version_0_code_object_reads_its_isa_from_the_note() -> None:
    from tests.fixtures.handmade_elf import code_object_v2, isa_version_note
    from toolkit.inspect.readers.offload import Stream

    # AMDGPUUsage: EI_ABIVERSION (e_ident[8]) 0 is code object v2, whose ISA is in a note;
    # from v3 (1) on e_flags names the processor, and mach 0 stays unknown
    obj = bytearray(code_object_v2(isa_version_note(9, 0, 10)))
    found = []
    for abi in (0, 1):
        obj[8] = abi
        (o,) = _candidate(Stream([bytes(obj)]), HSA_ELF, len(obj), ".rodata")
        found.append((o.target, o.size, o.where))
    assert found == [("gfx90a", len(obj), ".rodata (raw ELF)"),
                     ("unknown-amdgpu-mach-0x00", len(obj), ".rodata (raw ELF)")]


def test_a_widened_window_counts_all_its_bytes_against_the_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Hits, "HOLD_BEFORE", 10)
    monkeypatch.setattr(Hits, "HOLD_AFTER", 30)
    monkeypatch.setattr(Hits, "HOLD_MAX", 100)
    data = bytearray(1000)
    for at in (100, 120, 500, 700):
        data[at : at + 4] = CCOB_MAGIC
    hits = Hits([(0, len(data))])
    hits.feed(0, bytes(data))
    # 90-130 (40 bytes), widened by 120's window to 90-150 (60), then 490-530: 100 in all;
    # 700's window (40 more) would pass the bound
    assert [(start, want) for start, want, _ in hits._held] == [(90, 150), (490, 530)]
    assert [hits.holds(at) for at in (100, 149, 150, 500, 700)] == [True, True, False, True, False]


def test_code_objects_of_a_fatbin_section_are_labelled_with_the_section() -> None:
    host = ("host-x86_64-unknown-linux-gnu", b"")
    bundle = make_bundle([host, ("hipv4-amdgcn-amd-amdhsa--gfx90a", bytes(40))], align=1)
    found = scan([ScanRange(".hip_fatbin", 0, len(bundle))], lambda a, b: [bundle[a:b]])
    assert found.objects == [CodeObject("gfx90a", 40, ".hip_fatbin (bundle)")] and not found.problems


def test_a_data_section_whose_bytes_end_early_is_scanned_as_far_as_they_go() -> None:
    # the chunks stop 100 bytes short of the section's size: the scan stops there too
    host = ("host-x86_64-unknown-linux-gnu", b"")
    bundle = make_bundle([host, ("hipv4-amdgcn-amd-amdhsa--gfx90a", bytes(40))], align=1)
    data = b"junk" + bundle
    found = scan([ScanRange(".data", 0, len(data) + 100)], lambda a, b: [data[a:b]])
    assert found.objects == [CodeObject("gfx90a", 40, ".data (bundle)")]


def test_an_unreadable_fatbin_does_not_hide_the_code_in_later_sections() -> None:
    from tests.fixtures.bundles import make_bundle
    from toolkit.inspect.readers.gpuscan import ScanRange, scan

    good = make_bundle([("host-x86_64-unknown-linux-gnu", b""),
                        ("hipv4-amdgcn-amd-amdhsa--gfx942", b"\x7fELF" + bytes(500))])
    bad = b"__CLANG_OFFLOAD_BUNDLE__" + struct.pack("<Q", 1 << 40) + bytes(32)  # 2**40 entries
    data = bad + bytes(64) + good
    ranges = [ScanRange(".hip_fatbin", 0, len(bad)), ScanRange(".rodata", len(bad), len(data) - len(bad))]
    found = scan(ranges, lambda a, b: [data[a:b]])
    assert [o.target for o in found.objects] == ["gfx942"]
    assert found.problems == [".hip_fatbin is unreadable: corrupt offload bundle: 1099511627776 entries"]
