"""Inflating one wheel member: one verified pass, then random access without starting over.

:class:`MemberReader` reads a member's compressed bytes straight from the archive
(``os.pread``) and inflates them with zlib-ng when it is installed (about twice as fast as
zlib), else zlib. The first pass (:meth:`MemberReader.chunks` from 0 to the end) checks the
CRC-32 and the size and leaves *checkpoints* (a copy of the inflater every few MiB), so later
reads of any byte range (:meth:`MemberReader.read`) inflate at most one checkpoint interval
more than they return. Nothing ever inflates past the declared size.
"""

from __future__ import annotations

import itertools
import types
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from toolkit.core.errors import MemberError
from toolkit.inspect.readers.wheelzip import WheelZip

_zlib: types.ModuleType
try:  # zlib-ng: the same API, about twice zlib's inflate speed
    from zlib_ng import zlib_ng as _zlib
except ImportError:  # pragma: no cover - depends on the environment
    _zlib = zlib

CHUNK = 1 << 20  # inflated bytes per step
FEED = 256 << 10  # compressed bytes read per pread
CHECKPOINT_EVERY = 8 << 20  # inflated bytes between checkpoints
INFLATE_ERRORS: tuple[type[BaseException], ...] = (zlib.error, _zlib.error, OSError, ValueError, MemoryError)


def crc32(data: bytes | memoryview, value: int = 0) -> int:
    return int(_zlib.crc32(data, value))


def pack_bytes(data: bytes | bytearray) -> bytes:
    """Fast deflate (zlib format, level 1) for data kept in memory for later (symbol names)."""
    return bytes(_zlib.compress(data, 1))


def name_batches(packed: bytes, size: int = 1 << 20) -> Iterator[list[bytes]]:
    """The NUL-terminated names of :func:`pack_bytes` data, inflated about ``size`` bytes
    at a time, in batches (so they never all exist as objects at once)."""
    d, data, rest = _zlib.decompressobj(), packed, b""
    while not d.eof:
        piece = d.decompress(data, size)
        data = d.unconsumed_tail
        if not piece and not data:
            return
        buf = rest + piece
        cut = buf.rfind(b"\0") + 1
        if cut:
            yield buf[: cut - 1].split(b"\0")
        rest = buf[cut:]


def inflater() -> Any:
    """A raw-deflate decompressor (zlib-ng's when installed)."""
    return _zlib.decompressobj(-15)


@dataclass
class _Point:
    out: int  # inflated offset
    inp: int  # compressed bytes consumed
    state: Any  # a copy of the inflater (None for stored members)


class MemberReader:
    """Inflate one member: a verified first pass, then random access through checkpoints."""

    def __init__(self, wz: WheelZip, info: zipfile.ZipInfo) -> None:
        why = wz.bomb_check(info)
        if why:
            raise MemberError(why)
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise MemberError(f"{info.filename}: unsupported compression method {info.compress_type}")
        self.wz, self.info, self.size = wz, info, info.file_size
        self.name = info.filename
        self._start = wz.data_offset(info)
        self._stored = info.compress_type == zipfile.ZIP_STORED
        self._points: list[_Point] = [_Point(0, 0, None if self._stored else inflater())]
        self.verified = False
        self._live: tuple[Iterator[tuple[int, bytes]], list[tuple[int, bytes]]] | None = None

    def _fail(self, what: str) -> MemberError:
        return MemberError(f"{self.name}: corrupt or truncated archive member ({what})")

    def _run(self, point: _Point, end: int, record: bool) -> Iterator[tuple[int, bytes]]:
        """Inflate from ``point`` to ``end`` (inflated offset), yielding (offset, chunk)."""
        out, inp = point.out, point.inp
        csize = self.info.compress_size
        if self._stored:
            while out < end:
                n = min(CHUNK, end - out)
                data = self.wz.pread(n, self._start + out)
                if len(data) != n:
                    raise self._fail("short read")
                yield out, data
                out += n
            return
        d = point.state.copy()
        pending = b""
        next_point = out + CHECKPOINT_EVERY
        try:
            while out < end:
                if not pending:
                    if inp >= csize:
                        if d.eof:
                            break
                        raise self._fail("compressed data ends early")
                    pending = self.wz.pread(min(FEED, csize - inp), self._start + inp)
                    if not pending:
                        raise self._fail("short read")
                    inp += len(pending)
                data = d.decompress(pending, min(CHUNK, self.size + 1 - out))
                pending = d.unconsumed_tail
                if not data:
                    if d.eof:
                        break
                    continue
                if out + len(data) > self.size:
                    raise MemberError(f"{self.name}: inflates past its declared {self.size} bytes")
                yield out, data
                out += len(data)
                if record and out >= next_point:
                    self._points.append(_Point(out, inp - len(pending), d.copy()))
                    next_point = out + CHECKPOINT_EVERY
        except INFLATE_ERRORS as err:
            raise self._fail(str(err)) from err

    def chunks(self, start: int = 0, end: int | None = None) -> Iterator[tuple[int, bytes]]:
        """(offset, bytes) covering [start, end); the first full pass also verifies the member.

        A read that starts a little after where the previous one stopped goes on with the
        same inflater, so reading a member's sections in order inflates each byte once.
        """
        end = self.size if end is None else min(end, self.size)
        if start >= end:
            if start == 0 and end == self.size == 0:
                self.verified = True
            return
        if not self.verified and start == 0 and end == self.size:
            yield from self._first_pass(crc_here=True)
            return
        gen, carry = self._resume(start)
        reached = start
        for off, data in itertools.chain(carry, gen):
            stop = off + len(data)
            reached = stop
            if stop <= start:
                continue
            # off < end here: the first chunk starts at or before start, each later one where
            # the last ended (below end, or the read returned)
            a, b = max(start - off, 0), min(end - off, len(data))
            yield off + a, data if (a, b) == (0, len(data)) else data[a:b]
            if stop >= end:
                self._live = (gen, [(off, data)])
                return
        if reached < end:
            raise self._fail(f"inflated to {reached} bytes, {self.size} declared")

    def _resume(self, start: int) -> tuple[Iterator[tuple[int, bytes]], list[tuple[int, bytes]]]:
        live, self._live = self._live, None
        if live is not None:
            gen, carry = live  # set by chunks only, always with the one chunk it stopped in
            at = carry[0][0]
            if at <= start < at + CHECKPOINT_EVERY:
                return gen, carry
        point = max((p for p in self._points if p.out <= start), key=lambda p: p.out)
        return self._run(point, self.size, record=False), []

    def first_pass(self) -> Iterator[tuple[int, bytes]]:
        """The whole member once, its size checked, for a caller that computes the CRC-32 of
        the chunks itself (in another thread) and hands it to :meth:`confirm`: until then
        the member is not verified."""
        if self.verified:
            raise ValueError("first_pass: the member was already read in full")
        return self._first_pass(crc_here=False)

    def _first_pass(self, crc_here: bool) -> Iterator[tuple[int, bytes]]:
        crc, total = 0, 0
        for off, data in self._run(self._points[0], self.size, record=True):
            if crc_here:
                crc = crc32(data, crc)
            total = off + len(data)
            yield off, data
        if total < self.size:
            raise self._fail(f"inflated to {total} bytes, {self.size} declared")
        if crc_here:
            self.confirm(crc)

    def confirm(self, crc: int) -> None:
        """The member is verified if ``crc`` (of its whole inflated bytes) is the archive's."""
        if crc != self.info.CRC:
            raise self._fail("CRC-32 mismatch")
        self.verified = True

    def read(self, start: int, length: int) -> bytes:
        """Inflated bytes [start, start + length), cut at the member's end."""
        return b"".join(data for _, data in self.chunks(start, start + length))


def pack_pairs(pairs: list[tuple[bytes, str | None]]) -> bytes:
    """(name, version or None) pairs as :func:`pack_bytes` data: the name, NUL, then
    ``@version`` or nothing, NUL (names and versions hold no NUL)."""
    return pack_bytes(b"".join(n + (b"\0" if v is None else b"\0@" + v.encode()) + b"\0" for n, v in pairs))


def unpack_pairs(packed: bytes) -> list[tuple[bytes, str | None]]:
    items = [x for batch in name_batches(packed) for x in batch]
    versions: dict[bytes, str | None] = {b"": None}  # one object per distinct version
    for raw in items[1::2]:
        if raw not in versions:
            versions[raw] = raw[1:].decode()
    return list(zip(items[::2], (versions[raw] for raw in items[1::2]), strict=False))
