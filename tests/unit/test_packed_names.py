"""Names kept deflated between reading an ELF file and the checks (``pack_bytes``): the
packed data is plain zlib (RFC 1950, judged by Python's zlib), read back in batches of whole
NUL-terminated names whatever the batch size, and (name, version) pairs survive the trip."""

from __future__ import annotations

import random
import zlib

import pytest

from toolkit.inspect.readers.inflate import name_batches, pack_bytes, pack_pairs, unpack_pairs


def _names(n: int) -> list[bytes]:
    rnd = random.Random(n)
    return [b"_Z" + bytes(rnd.choice(b"abcdefgh_0123") for _ in range(rnd.randint(1, 40))) for _ in range(n)]


@pytest.mark.parametrize("size", [1, 7, 64, 1 << 20])
def test_names_come_back_whole_in_batches(size: int) -> None:
    names = _names(500)
    packed = pack_bytes(b"".join(n + b"\0" for n in names))
    assert zlib.decompress(packed) == b"".join(n + b"\0" for n in names)  # plain zlib data
    batches = list(name_batches(packed, size))
    assert [n for b in batches for n in b] == names
    if size < 64:
        assert len(batches) > 1  # read a little at a time, never all at once
    assert list(name_batches(pack_bytes(b""), size)) == []


def test_pairs_keep_their_versions() -> None:
    pairs: list[tuple[bytes, str | None]] = [(b"memcpy", "GLIBC_2.14"), (b"_ZNSt6thread4joinEv", None),
                                             (b"free", "GLIBC_2.2.5"), (b"memset", "GLIBC_2.2.5"),
                                             (b"x", None)]
    packed = pack_pairs(pairs)
    assert zlib.decompress(packed) == (b"memcpy\0@GLIBC_2.14\0_ZNSt6thread4joinEv\0\0free\0@GLIBC_2.2.5\0"
                                       b"memset\0@GLIBC_2.2.5\0x\0\0")
    back = unpack_pairs(packed)
    assert back == pairs
    assert back[2][1] is back[3][1]  # one object per distinct version
    assert unpack_pairs(pack_pairs([])) == []
