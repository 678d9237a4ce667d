"""A member's byte range as chunks that may pass over bytes: reading and seeking in any mix
gives the bytes slicing gives; a skip shorter than ``min_seek`` is read instead (None),
unless the place it lands on is cheap to read from again; a skip past the end stops there."""

from __future__ import annotations

from collections.abc import Iterator

from toolkit.inspect.readers.ranged import Ranged

DATA = bytes(range(256)) * 8


class _Source:
    def __init__(self) -> None:
        self.calls: list[tuple[int, int]] = []

    def __call__(self, a: int, b: int) -> Iterator[bytes]:
        self.calls.append((a, b))
        return (DATA[i : min(b, i + 100)] for i in range(a, b, 100))


def test_chunks_cover_the_range_and_stop_at_its_end() -> None:
    src = _Source()
    r = Ranged(src, 50, 420, 64)
    assert b"".join(r) == DATA[50:420] and src.calls == [(50, 420)]


def test_long_skips_seek_and_short_ones_are_read() -> None:
    src = _Source()
    r = Ranged(src, 0, 1000, 64)
    assert next(r) == DATA[:100]
    assert r.seek(63) is None  # shorter than min_seek: the caller reads them
    assert r.seek(64) == 64  # from 100 to 164, reading starts over there
    assert next(r) == DATA[164:264] and src.calls == [(0, 1000), (164, 1000)]
    assert r.seek(5000) == 1000 - 264  # cut at the end
    assert list(r) == [] and r.seek(100) == 0


def test_a_short_skip_to_a_cheap_place_seeks() -> None:
    src = _Source()
    r = Ranged(src, 0, 1000, 64, cheap=lambda pos: pos == 110)
    next(r)
    assert r.seek(9) is None  # lands on 109: not cheap
    assert r.seek(10) == 10  # lands on 110: cheap
    assert next(r) == DATA[110:210]
    assert Ranged(src, 0, 10, 64, cheap=lambda pos: pos == 10).seek(50) == 10  # cut, then cheap
