"""A byte range of a member as a stream of chunks that can pass over bytes unread."""

from __future__ import annotations

from collections.abc import Callable, Iterator


class Ranged:
    """The bytes of ``[start, end)`` as chunks pulled one at a time, that can also pass over
    bytes without producing them (``seek``, which :class:`~.offload.Stream` uses to skip a
    bundle's body): only for skips of at least ``min_seek`` bytes, as reading again starts
    over (an inflating source restarts at its nearest checkpoint), or to where ``cheap``
    says reading again costs nothing (bytes kept in memory); shorter skips are read."""

    def __init__(
        self, read: Callable[[int, int], Iterator[bytes]], start: int, end: int, min_seek: int,
        cheap: Callable[[int], bool] | None = None,
    ) -> None:
        self._read, self._pos, self._end, self._min = read, start, end, min_seek
        self._cheap = cheap
        self._cur: Iterator[bytes] | None = None

    def __iter__(self) -> Ranged:
        return self

    def __next__(self) -> bytes:
        if self._cur is None:
            self._cur = iter(self._read(self._pos, self._end))
        data = next(self._cur)
        self._pos += len(data)
        return data

    def seek(self, n: int) -> int | None:
        """Pass over ``n`` bytes (fewer at the end): how many, or None to read them instead."""
        step = max(0, min(n, self._end - self._pos))
        if n < self._min and not (self._cheap is not None and self._cheap(self._pos + step)):
            return None
        self._pos += step
        self._cur = None
        return step
