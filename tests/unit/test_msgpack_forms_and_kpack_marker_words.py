"""The MessagePack decoder kpack metadata goes through, one encoding form at a time, built
byte by byte from the MessagePack specification (github.com/msgpack/msgpack spec.md: each
form's type byte and its big-endian length or value, signed or unsigned as the form says) and
decoded by ``msgpack`` as the independent truth; every refusal as its whole line. Then the
marker of a split host binary (``.rocm_kpack_ref``, the HIPK/HIPF wrappers), read through
``elf_kpack`` and ``read_ref`` with the refusals a user reads in ``gpu_problems``."""

from __future__ import annotations

import struct

import msgpack
import pytest

from toolkit.core.errors import KpackError
from toolkit.inspect.readers import msgpack as mp
from toolkit.inspect.readers.elf import Section
from toolkit.inspect.readers.kpack import KpackRef, elf_kpack, read_ref, wanted

N = 0x9000  # over 2**15: a 16-bit length with its top bit set

FORMS = [
    b"\x7f", b"\xe0", b"\xff", b"\xc0", b"\xc2", b"\xc3",
    b"\xcc\xff", b"\xcd\xff\xfe", b"\xce\xff\xff\xff\xfd", b"\xcf" + b"\xff" * 7 + b"\xfc",
    b"\xd0\x80", b"\xd0\x7f", b"\xd1\x80\x01", b"\xd2\x80\x00\x00\x02", b"\xd3\x80" + bytes(6) + b"\x03",
    b"\xca" + struct.pack(">f", -1.5), b"\xcb" + struct.pack(">d", 2.25),
    b"\xa3abc", b"\xbf" + b"s" * 31, b"\xd9\xc8" + b"a" * 200, b"\xda\x90\x00" + b"b" * N,
    b"\xdb\x00\x00\x00\x03xyz",
    b"\xc4\xc8" + b"\x01" * 200, b"\xc5\x90\x00" + b"\x02" * N, b"\xc6\x00\x00\x00\x02\x03\x04",
    b"\x9f" + b"\x01" * 15, b"\xdc\x00\x02\x01\xa0", b"\xdd\x00\x00\x00\x02\xd0\xfe\x05",
    b"\x8f" + b"".join(b"\xa1" + bytes([65 + i]) + bytes([i]) for i in range(15)),
    b"\xde\x00\x01\xa1a\xc3", b"\xdf\x00\x00\x00\x01\xa1k\x92\x01\xa0",
]


@pytest.mark.parametrize("raw", FORMS, ids=[f"{r[0]:02x}-{len(r)}" for r in FORMS])
def test_each_form_decodes_as_msgpack_does(raw: bytes) -> None:
    assert mp.unpack(raw, "t") == (msgpack.unpackb(raw, raw=False), len(raw))


def test_nesting_up_to_the_bound() -> None:
    assert mp.unpack(b"\x91" * 32 + b"\x01", "t")[0] == msgpack.unpackb(b"\x91" * 32 + b"\x01")
    with pytest.raises(KpackError) as err:
        mp.unpack(b"\x91" * 33 + b"\x01", "t")
    assert str(err.value) == "t: MessagePack nested deeper than 32 levels"


@pytest.mark.parametrize(("raw", "line"), [
    (b"\xce\x00\x00\x00", "t: truncated MessagePack (4 bytes wanted at offset 1, 3 left)"),
    (b"\x92\x01\xc1", "t: MessagePack type byte 0xc1 at offset 2 is not one kpack metadata uses "
                      "(nil, bool, int, float, str, bin, array, map)"),
    (b"\x91\xa2\xff\xfe", "t: a MessagePack string at offset 1 is not UTF-8"),
    (b"\xdd\xff\xff\xff\xff", "t: a MessagePack container declares 4294967295 items with 0 bytes left"),
    (b"\x83\xa1a\x01", "t: a MessagePack container declares 3 items with 3 bytes left"),
    # 16-bit counts and lengths with the top bit set: unsigned, as the spec says
    (b"\xdc\x90\x00\x01", "t: a MessagePack container declares 36864 items with 1 bytes left"),
    (b"\xde\x90\x00\x01", "t: a MessagePack container declares 36864 items with 1 bytes left"),
    (b"\xda\x90\x00ab", "t: truncated MessagePack (36864 bytes wanted at offset 3, 2 left)"),
    (b"\xd9\xc8ab", "t: truncated MessagePack (200 bytes wanted at offset 2, 2 left)"),
    (b"\x91\x81\x01\x02", "t: a MessagePack map at offset 1 has a int key (kpack maps have string keys)"),
    (b"\x82\xa1a\x01\xa1a\x02", "t: a MessagePack map at offset 0 repeats the key 'a'"),
    (b"\x01\x02\x03", "t: 2 bytes follow the MessagePack value (it ends at offset 1 of 3)"),
])
def test_refusals_word_for_word(raw: bytes, line: str) -> None:
    with pytest.raises(KpackError) as err:
        mp.unpack(raw, "t")
    assert str(err.value) == line


def test_a_value_followed_by_padding_when_not_whole() -> None:
    assert mp.unpack(b"\x01\x00\x00", "t", whole=False) == (1, 1)


REF, WRAP, FATBIN = ".rocm_kpack_ref", ".hipFatBinSegment", ".hip_fatbin"
HIPF, HIPK = struct.pack("<I", 0x48495046), struct.pack("<I", 0x4B504948)
MARKER = msgpack.packb({"kernel_name": "lib/x.so", "kpack_search_paths": ["a_@GFXARCH@.kpack"]})


Read = tuple[KpackRef | None, frozenset[str], list[str]]


def _kpack(parts: dict[str, bytes], sizes: dict[str, int] | None = None) -> Read:
    """elf_kpack over sections named as ``parts`` keys (sizes as ``sizes`` says, else their data's)."""
    secs = [Section(n, 1, 0, (sizes or {}).get(n, len(d)), 0, 0, 0) for n, d in parts.items()]
    problems: list[str] = []
    ref, skip = elf_kpack(secs, lambda s: parts[s.name], problems)
    return ref, skip, problems


def _wrappers(*magics: bytes) -> bytes:
    return b"".join(m + bytes(20) for m in magics)


def test_marker_and_wrappers() -> None:
    assert _kpack({WRAP: _wrappers(HIPK)}) == (None, frozenset(), [])
    ref = KpackRef("lib/x.so", ("a_@GFXARCH@.kpack",), hipk=2, hipf=0)
    assert _kpack({REF: MARKER, WRAP: _wrappers(HIPK, HIPK)}) == (ref, frozenset({FATBIN}), [])
    # a wrapper still HIPF: .hip_fatbin is still read
    assert _kpack({REF: MARKER, WRAP: _wrappers(HIPK, HIPF)}) == (
        KpackRef("lib/x.so", ("a_@GFXARCH@.kpack",), 1, 1), frozenset(), [])
    # a cut wrapper at the end is not counted; 24 bytes make one
    assert _kpack({REF: MARKER, WRAP: _wrappers(HIPK) + HIPK + bytes(19)})[0] == (
        KpackRef("lib/x.so", ("a_@GFXARCH@.kpack",), 1, 0))
    assert _kpack({REF: MARKER, WRAP: HIPK + bytes(20)})[0] == (
        KpackRef("lib/x.so", ("a_@GFXARCH@.kpack",), 1, 0))
    # no wrapper read: none counted, the library not split
    for sizes in ({WRAP: 0}, {WRAP: (1 << 20) + 1}):
        assert _kpack({REF: MARKER, WRAP: _wrappers(HIPK)}, sizes) == (
            KpackRef("lib/x.so", ("a_@GFXARCH@.kpack",), 0, 0), frozenset(), [])
    assert _kpack({REF: MARKER, WRAP: _wrappers(HIPK)}, {WRAP: 1 << 20})[0] == (
        KpackRef("lib/x.so", ("a_@GFXARCH@.kpack",), 1, 0))


@pytest.mark.parametrize(("size", "shown"), [(0, 0), ((1 << 20) + 1, (1 << 20) + 1)])
def test_a_marker_too_small_or_too_large_is_not_read(size: int, shown: int) -> None:
    assert _kpack({REF: MARKER, WRAP: _wrappers(HIPK)}, {REF: size}) == (
        KpackRef("", (), 1, 0), frozenset({FATBIN}),
        [f".rocm_kpack_ref is unreadable: .rocm_kpack_ref has {shown} bytes (1..1048576 are read)"])


@pytest.mark.parametrize(("value", "line"), [
    (["x"], ".rocm_kpack_ref holds a list, not a map"),
    ({"kpack_search_paths": ["a"]}, ".rocm_kpack_ref has no kernel_name string"),
    ({"kernel_name": "", "kpack_search_paths": ["a"]}, ".rocm_kpack_ref has no kernel_name string"),
    ({"kernel_name": "k", "kpack_search_paths": "a"},
     ".rocm_kpack_ref: kpack_search_paths is not a list of strings"),
    ({"kernel_name": "k", "kpack_search_paths": []}, ".rocm_kpack_ref: kpack_search_paths is empty"),
])
def test_marker_refusals_word_for_word(value: object, line: str) -> None:
    raw = msgpack.packb(value)
    with pytest.raises(KpackError) as err:
        read_ref(raw)
    assert str(err.value) == line
    assert _kpack({REF: raw})[2] == [f".rocm_kpack_ref is unreadable: {line}"]


def test_the_sections_a_reader_must_hold() -> None:
    secs = [Section(n, 1, 0, s, 0, 0, 0) for n, s in (
        (REF, 10), (WRAP, 1 << 20), (FATBIN, 10), (".text", 10), (REF, 0), (WRAP, (1 << 20) + 1))]
    assert wanted(secs) == secs[:2]
