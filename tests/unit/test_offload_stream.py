"""The byte stream the offload-bundle readers pull from: for any chunking of the same bytes,
peek/read/exact/skip/unread/skip_zeros return what slicing the whole byte string returns,
and the position counts the bytes consumed. A source that can ``seek`` is asked to pass over
unbuffered bytes instead of producing them."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from toolkit.core.errors import OffloadError
from toolkit.inspect.readers.offload import Bundle, BundleEntry, Stream, parse_entry_id

DATA = bytes(range(256)) * 4 + bytes(300) + b"after zeros"


def _chunks(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


@pytest.mark.parametrize("size", [1, 3, 100, 5000])
def test_a_stream_reads_as_slicing_the_bytes(size: int) -> None:
    s = Stream(_chunks(DATA, size))
    assert s.peek(5) == DATA[:5] and s.pos == 0
    assert s.read(10) == DATA[:10] and s.pos == 10
    assert s.exact(20, "x") == DATA[10:30] and s.pos == 30
    assert bytes(s.buffered(40)[:40]) == DATA[30:70] and s.pos == 30
    assert s.skip(70) == 70 and s.pos == 100
    s.unread(b"back")
    assert s.pos == 96 and s.read(6) == b"back" + DATA[100:102]
    assert s.skip(1024 - 102) == 1024 - 102 and s.pos == 1024
    s.skip_zeros()
    assert s.pos == 1324 and s.peek(5) == b"after"
    s.skip_zeros()  # nothing to skip
    assert s.pos == 1324
    assert s.read(100) == b"after zeros" and s.pos == len(DATA)
    assert s.read(1) == b"" and s.skip(10) == 0 and s.pos == len(DATA)
    s.skip_zeros()
    assert s.pos == len(DATA)


def test_a_short_exact_read_names_what_and_where() -> None:
    s = Stream(_chunks(b"abcdefgh", 3))
    s.read(2)
    with pytest.raises(OffloadError) as err:
        s.exact(10, "bundle entry")
    assert str(err.value) == "truncated offload bundle: bundle entry at offset 2"


def test_skipping_past_the_end_stops_there() -> None:
    s = Stream(_chunks(b"0123456789", 4))
    assert s.skip(100) == 10 and s.pos == 10
    only_zeros = Stream(_chunks(bytes(10), 3))
    only_zeros.skip_zeros()
    assert only_zeros.pos == 10 and only_zeros.read(1) == b""


class _Seekable:
    def __init__(self, data: bytes) -> None:
        self.data, self.at, self.sought = data, 0, 0

    def __iter__(self) -> Iterator[bytes]:
        return self

    def __next__(self) -> bytes:
        if self.at >= len(self.data):
            raise StopIteration
        chunk = self.data[self.at : self.at + 4]
        self.at += 4
        return chunk

    def seek(self, n: int) -> int:
        moved = min(n, len(self.data) - self.at)
        self.at += moved
        self.sought += moved
        return moved


def test_a_seekable_source_passes_over_unbuffered_bytes() -> None:
    src = _Seekable(bytes(range(100)))
    s = Stream(src)
    assert s.read(2) == b"\0\1"  # one chunk of 4 read: 2 buffered
    assert s.skip(50) == 50 and s.pos == 52
    assert src.sought == 48  # the 2 buffered bytes dropped, the rest passed over
    assert s.read(3) == bytes([52, 53, 54])


def test_entry_ids_and_pro_rata_bytes() -> None:
    e = parse_entry_id("hipv4-amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-", 10)
    assert (e.kind, e.triple, e.target, e.size, e.is_device) == (
        "hipv4", "amdgcn-amd-amdhsa-", "gfx942:sramecc+:xnack-", 10, True)
    host = parse_entry_id("host-x86_64-unknown-linux-gnu", 5)
    assert (host.kind, host.triple, host.target, host.is_device) == ("host", "x86_64-unknown-linux-gnu", "",
                                                                    False)
    assert not parse_entry_id("openmp-x86_64-pc-linux-gnu-").is_device
    with pytest.raises(OffloadError) as err:
        parse_entry_id("hip-amdgcn")
    assert str(err.value) == "bad offload bundle entry id 'hip-amdgcn'"
    a, b = BundleEntry("hipv4", "amdgcn-amd-amdhsa-", "gfx90a", 300), BundleEntry("host", "x", "", 100)
    zipped = Bundle(0, "zlib", 2, (a, b), stored=100)
    assert (zipped.stored_bytes(a), zipped.stored_bytes(b)) == (75, 25)  # 100 bytes, 3:1
    assert Bundle(0, None, None, (a, b), stored=100).stored_bytes(a) == 300
    assert Bundle(0, "zstd", 3, (), stored=100).stored_bytes(a) == 0


def test_random_chunkings_agree() -> None:
    rnd = random.Random(11)
    for _ in range(20):
        cuts = sorted(rnd.sample(range(1, len(DATA)), 15))
        chunks = [DATA[a:b] for a, b in zip([0, *cuts], [*cuts, len(DATA)], strict=True)]
        s = Stream(chunks)
        at = 0
        while at < len(DATA):
            n = rnd.randint(0, 90)
            if rnd.random() < 0.5:
                assert s.read(n) == DATA[at : at + n]
            else:
                assert s.skip(n) == min(n, len(DATA) - at)
            at = min(at + n, len(DATA))
            assert s.pos == at
