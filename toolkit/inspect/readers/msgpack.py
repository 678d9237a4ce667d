"""A bounded MessagePack decoder for the subset kpack metadata uses (our own, from the
MessagePack specification, github.com/msgpack/msgpack/blob/master/spec.md).

Decoded: nil, booleans, integers (fixint, uint/int 8-64), floats (32/64), strings (fixstr,
str 8/16/32; UTF-8), binary (bin 8/16/32), arrays and maps with string keys. Extension
types, non-string map keys, duplicate keys, invalid UTF-8, nesting deeper than
``MAX_DEPTH`` and a container declaring more items than there are bytes left are errors
(:class:`~toolkit.core.errors.KpackError`): a count read from the input never sizes an
allocation on its own.
"""

from __future__ import annotations

import struct
from typing import Any

from toolkit.core.errors import KpackError

MAX_DEPTH = 32
_FIXED = {0xCC: ">B", 0xCD: ">H", 0xCE: ">I", 0xCF: ">Q", 0xD0: ">b", 0xD1: ">h", 0xD2: ">i",
          0xD3: ">q", 0xCA: ">f", 0xCB: ">d"}
_LENGTHS = {0xD9: (">B", "str"), 0xDA: (">H", "str"), 0xDB: (">I", "str"),
            0xC4: (">B", "bin"), 0xC5: (">H", "bin"), 0xC6: (">I", "bin"),
            0xDC: (">H", "array"), 0xDD: (">I", "array"), 0xDE: (">H", "map"), 0xDF: (">I", "map")}


class _Reader:
    def __init__(self, data: bytes, what: str) -> None:
        self.data, self.pos, self.what = data, 0, what

    def take(self, n: int) -> bytes:
        if n > len(self.data) - self.pos:
            raise KpackError(f"{self.what}: truncated MessagePack ({n} bytes wanted at offset "
                             f"{self.pos}, {len(self.data) - self.pos} left)")
        out = self.data[self.pos : self.pos + n]
        self.pos += n
        return out

    def unpack(self, fmt: str) -> Any:
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]

    def value(self, depth: int = 0) -> Any:
        if depth > MAX_DEPTH:
            raise KpackError(f"{self.what}: MessagePack nested deeper than {MAX_DEPTH} levels")
        at = self.pos
        b = self.take(1)[0]
        if b <= 0x7F or b >= 0xE0:  # positive / negative fixint
            return b if b <= 0x7F else b - 0x100
        if b in (0xC0, 0xC2, 0xC3):
            return {0xC0: None, 0xC2: False, 0xC3: True}[b]
        if b in _FIXED:
            return self.unpack(_FIXED[b])
        if 0xA0 <= b <= 0xBF:
            return self._text(b & 0x1F, at)
        if 0x90 <= b <= 0x9F:
            return self._array(b & 0x0F, depth)
        if 0x80 <= b <= 0x8F:
            return self._map(b & 0x0F, depth, at)
        if b in _LENGTHS:
            fmt, kind = _LENGTHS[b]
            n = self.unpack(fmt)
            if kind == "str":
                return self._text(n, at)
            if kind == "bin":
                return self.take(n)
            return self._array(n, depth) if kind == "array" else self._map(n, depth, at)
        raise KpackError(f"{self.what}: MessagePack type byte 0x{b:02x} at offset {at} is not "
                         "one kpack metadata uses (nil, bool, int, float, str, bin, array, map)")

    def _text(self, n: int, at: int) -> str:
        try:
            return self.take(n).decode("utf-8")
        except UnicodeDecodeError as err:
            raise KpackError(f"{self.what}: a MessagePack string at offset {at} is not UTF-8") from err

    def _room(self, n: int, per: int) -> None:
        if n * per > len(self.data) - self.pos:
            raise KpackError(f"{self.what}: a MessagePack container declares {n} items with "
                             f"{len(self.data) - self.pos} bytes left")

    def _array(self, n: int, depth: int) -> list[Any]:
        self._room(n, 1)
        return [self.value(depth + 1) for _ in range(n)]

    def _map(self, n: int, depth: int, at: int) -> dict[str, Any]:
        self._room(n, 2)
        out: dict[str, Any] = {}
        for _ in range(n):
            key = self.value(depth + 1)
            if not isinstance(key, str):
                raise KpackError(f"{self.what}: a MessagePack map at offset {at} has a "
                                 f"{type(key).__name__} key (kpack maps have string keys)")
            if key in out:
                raise KpackError(f"{self.what}: a MessagePack map at offset {at} repeats the key {key!r}")
            out[key] = self.value(depth + 1)
        return out


def unpack(data: bytes, what: str, *, whole: bool = True) -> tuple[Any, int]:
    """The first MessagePack value of ``data`` and the bytes it took; ``whole``: it must take
    them all (trailing bytes are an error). ``what`` names the data in error messages."""
    r = _Reader(bytes(data), what)
    value = r.value()
    if whole and r.pos != len(r.data):
        raise KpackError(f"{what}: {len(r.data) - r.pos} bytes follow the MessagePack value "
                         f"(it ends at offset {r.pos} of {len(r.data)})")
    return value, r.pos
