"""Clang offload bundles (the ``.hip_fatbin`` section of a HIP host library).

Layouts (LLVM ``clang/lib/Driver/OffloadBundler.cpp``, ``llvm/Object/OffloadBundle``):

* plain: ``__CLANG_OFFLOAD_BUNDLE__``, u64 entry count, then per entry u64 offset, u64 size,
  u64 id length and the id (``hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+``); offsets are from the
  bundle start; the bundle ends at the furthest ``offset + size``.
* compressed: ``CCOB``, u16 version, u16 method (0 zlib, 1 zstd), then
  v1: u32 uncompressed size, u64 hash; v2: u32 total size, u32 uncompressed size, u64 hash;
  v3: u64 total size, u64 uncompressed size, u64 hash; then the compressed plain bundle.

A section may hold several bundles back to back (one per translation unit), separated by
zero padding. The reader works on a stream of chunks, so a multi-GB fatbin inside a wheel
is inspected without holding it in memory: only bundle headers are kept, and the first 64
bytes of each device entry, whose ELF header says which processor the code object is really
for (``code_target``; the loader judges that, not the entry id). A compressed bundle is
inflated only until its entry table is read (issue 11: a GPU-heavy wheel's bundles are not
decompressed whole), then at most ``PROBE_MAX_BYTES`` further to reach the first entries'
headers; entries beyond are left unread (``code_target`` None: not verified). A v1 bundle,
which has no size field, is inflated to its end anyway, so all its entries are read.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace

from toolkit.core.errors import OffloadError
from toolkit.inspect.readers.amdgpu import ELF64_HEADER, code_object_at, needs_note

PLAIN_MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"
CCOB_MAGIC = b"CCOB"
METHODS = {0: "zlib", 1: "zstd"}
MAX_ENTRIES = 1 << 14
MAX_ID_LEN = 1 << 12
MAX_HEADER_BYTES = 1 << 22  # decompressed bytes kept to find a compressed bundle's header
_FEED = 1 << 12  # compressed bytes fed at a time while looking for the header (a zstd piece
# inflates without a bound: 64 KiB of a code object became 3.5 MiB)
PROBE_MAX_BYTES = 64 << 10  # inflated past a compressed bundle's entry table to read entries' headers


@dataclass(frozen=True)
class BundleEntry:
    kind: str  # hip, hipv4, host, openmp, ...
    triple: str  # amdgcn-amd-amdhsa-
    target: str  # gfx90a:xnack+ ("" for host entries)
    size: int = 0  # bytes of the entry (inside the plain bundle)
    offset: int = field(default=0, compare=False)  # where the entry starts, from the bundle start
    # the target the entry's code object's ELF header (e_flags) names; None when not read
    code_target: str | None = field(default=None, compare=False)

    @property
    def is_device(self) -> bool:
        return self.kind != "host" and self.triple.startswith("amdgcn")

    @property
    def mislabelled(self) -> bool:
        """Its code object is for another processor than its entry id names (the HIP runtime
        picks entries by id; the loader then refuses code for another processor)."""
        got = self.code_target
        return got is not None and got.split(":")[0] != self.target.split(":")[0]


def code_target(head: bytes | bytearray, size: int) -> str | None:
    """The processor an entry's code object names in its ELF header (``head``: its first 64
    bytes), or None: not a valid AMDGPU code object, a v2 one (its ISA is in a note), or a
    processor this reader does not know."""
    hit = code_object_at(head, size)
    if hit is None or needs_note(hit[0], head[8]) or hit[0].startswith("unknown-"):
        return None
    return hit[0]


@dataclass(frozen=True)
class Bundle:
    offset: int
    compression: str | None  # None, "zlib" or "zstd"
    version: int | None  # CCOB header version
    entries: tuple[BundleEntry, ...]
    stored: int = 0  # bytes the bundle occupies where it is stored (compressed for CCOB)

    def stored_bytes(self, entry: BundleEntry) -> int:
        """The bytes of the file one entry accounts for (compressed bundles: pro rata)."""
        if self.compression is None:
            return entry.size
        total = sum(e.size for e in self.entries)
        return round(self.stored * entry.size / total) if total else 0


def parse_entry_id(text: str, size: int = 0, offset: int = 0) -> BundleEntry:
    """``hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+`` -> kind, 4-part triple, target id."""
    parts = text.split("-")
    if len(parts) < 5:
        if parts[0] == "host":
            return BundleEntry("host", "-".join(parts[1:]), "", size, offset)
        raise OffloadError(f"bad offload bundle entry id {text!r}")
    return BundleEntry(parts[0], "-".join(parts[1:5]), "-".join(parts[5:]), size, offset)


class Stream:
    """Pull bytes from an iterator of chunks with peek/read/skip/unread; counts position."""

    def __init__(self, chunks: Iterable[bytes | memoryview]) -> None:
        self._it: Iterator[bytes | memoryview] = iter(chunks)
        self._buf = bytearray()
        self.pos = 0

    def buffered(self, n: int) -> bytearray:
        """At least ``n`` bytes from the current position when the stream has them (no copy)."""
        self._fill(n)
        return self._buf

    def _fill(self, n: int) -> None:
        while len(self._buf) < n:
            chunk = next(self._it, None)
            if chunk is None:
                return
            self._buf += chunk

    def peek(self, n: int) -> bytes:
        self._fill(n)
        return bytes(self._buf[:n])

    def read(self, n: int) -> bytes:
        out = self.peek(n)
        del self._buf[: len(out)]
        self.pos += len(out)
        return out

    def exact(self, n: int, what: str) -> bytes:
        out = self.read(n)
        if len(out) < n:
            raise OffloadError(f"truncated offload bundle: {what} at offset {self.pos - len(out)}")
        return out

    def skip(self, n: int) -> int:
        """Skip ``n`` bytes (fewer at the end); a source with ``seek(n) -> int | None`` is
        asked to pass over what is not buffered without producing it."""
        done = 0
        seek = getattr(self._it, "seek", None)
        while done < n:
            if not self._buf:
                moved = seek(n - done) if seek is not None else None
                if moved is not None:
                    done += moved
                    break
                self._fill(1)
                if not self._buf:
                    break
            step = min(n - done, len(self._buf))
            del self._buf[:step]
            done += step
        self.pos += done
        return done

    def unread(self, data: bytes) -> None:
        self._buf[:0] = data
        self.pos -= len(data)

    def skip_zeros(self) -> None:
        while True:
            self._fill(1)
            if not self._buf:
                return
            stripped = len(self._buf) - len(self._buf.lstrip(b"\0"))
            if stripped < len(self._buf):
                self.skip(stripped)
                return
            self.skip(stripped)


def plain_header(data: bytes | bytearray | memoryview) -> tuple[list[BundleEntry], int, int] | None:
    """Parse a plain bundle header: (entries, header length, bundle end); None if incomplete."""
    if len(data) < 32:
        return None
    (count,) = struct.unpack_from("<Q", data, 24)
    if count > MAX_ENTRIES:
        raise OffloadError(f"corrupt offload bundle: {count} entries")
    off, end, entries = 32, 32, []
    for _ in range(count):
        if len(data) < off + 24:
            return None
        e_off, e_size, id_len = struct.unpack_from("<QQQ", data, off)
        if id_len > MAX_ID_LEN:
            raise OffloadError(f"corrupt offload bundle: entry id of {id_len} bytes")
        if len(data) < off + 24 + id_len:
            return None
        ident = bytes(data[off + 24 : off + 24 + id_len]).decode("ascii", "replace")
        entries.append(parse_entry_id(ident, e_size, e_off))
        off += 24 + id_len
        end = max(end, e_off + e_size)
    return entries, off, max(end, off)


def read_plain(s: Stream, limit: int) -> Bundle:
    start = s.pos
    head = s.exact(32, "bundle header")
    (count,) = struct.unpack_from("<Q", head, 24)
    if count > MAX_ENTRIES:
        raise OffloadError(f"corrupt offload bundle: {count} entries")
    for _ in range(count):
        item = s.exact(24, "bundle entry")
        id_len = struct.unpack_from("<Q", item, 16)[0]
        if id_len > MAX_ID_LEN:
            raise OffloadError(f"corrupt offload bundle: entry id of {id_len} bytes")
        head += item + s.exact(id_len, "bundle entry id")
    parsed = plain_header(head)
    if parsed is None:  # cannot happen: every byte the header names was read above
        raise OffloadError(f"truncated offload bundle header at offset {start}")
    entries, hlen, end = parsed
    if start + end > limit:
        raise OffloadError(f"truncated offload bundle at offset {start}: entries run past the end")
    return Bundle(start, None, None, probe_plain(s, entries, hlen, end), end)


def _device_order(entries: list[BundleEntry]) -> list[int]:
    """Indices of the device entries with bytes, by offset (the order a stream reaches them)."""
    wanted = (i for i, e in enumerate(entries) if e.is_device and e.size)
    return sorted(wanted, key=lambda i: entries[i].offset)


def probe_plain(s: Stream, entries: list[BundleEntry], at: int, end: int) -> tuple[BundleEntry, ...]:
    """Read each device entry's ELF header on the way from ``at`` (bytes of the bundle
    already passed) to ``end`` (the bundle's end, where the stream is left)."""
    out = list(entries)
    for i in _device_order(entries):
        e = entries[i]
        if e.offset < at:  # overlaps what was passed: left unread
            continue
        at += s.skip(e.offset - at)
        if at == e.offset:
            out[i] = replace(e, code_target=code_target(s.peek(ELF64_HEADER), e.size))
    s.skip(max(0, end - at))
    return tuple(out)


class _Heads:
    """The first 64 bytes of each device entry, caught from a plain bundle's bytes as they
    are inflated (``feed`` them in order); nothing else is kept."""

    def __init__(self, entries: list[BundleEntry]) -> None:
        self.entries = entries
        self._order = _device_order(entries)
        self._next = 0  # the first entry whose header is not complete yet
        self._bufs: dict[int, bytearray] = {}
        self.seen = 0  # bytes fed

    @property
    def wanted(self) -> bool:
        return self._next < len(self._order)

    def wanted_before(self, limit: int) -> bool:
        """Is an entry's header still to be caught from bytes before ``limit``?"""
        return self.wanted and self.entries[self._order[self._next]].offset < limit

    def feed(self, data: bytes | bytearray) -> None:
        pos, self.seen = self.seen, self.seen + len(data)
        for k in range(self._next, len(self._order)):
            i = self._order[k]
            off = self.entries[i].offset
            if off >= self.seen:
                break
            buf = self._bufs.setdefault(i, bytearray())
            have = off + len(buf)
            if pos <= have < off + ELF64_HEADER:
                buf += data[have - pos : off + ELF64_HEADER - pos]
        order, entries = self._order, self.entries
        while self._next < len(order) and entries[order[self._next]].offset + ELF64_HEADER <= self.seen:
            self._next += 1

    def result(self) -> tuple[BundleEntry, ...]:
        out = list(self.entries)
        for i, buf in self._bufs.items():
            if len(buf) >= ELF64_HEADER:
                out[i] = replace(out[i], code_target=code_target(bytes(buf[:ELF64_HEADER]), out[i].size))
        return tuple(out)


class _Inflater:
    def __init__(self, method: str) -> None:
        self._z: zlib._Decompress | None = None
        self._zstd = None
        if method == "zlib":
            self._z = zlib.decompressobj()
        else:
            import zstandard

            self._zstd = zstandard.ZstdDecompressor().decompressobj()

    def feed(self, data: bytes, max_out: int) -> bytes:
        """Inflate ``data`` after the input a previous call left unconsumed (zlib stops at
        ``max_out``: a 1 KiB piece of zeros inflates to about 1 MiB)."""
        if self._z is not None:
            return self._z.decompress(self._z.unconsumed_tail + data, max_out)
        assert self._zstd is not None
        return bytes(self._zstd.decompress(data))

    @property
    def pending(self) -> bool:
        """Input given but not inflated yet (zlib's ``unconsumed_tail``)."""
        return self._z is not None and bool(self._z.unconsumed_tail)

    @property
    def eof(self) -> bool:
        obj = self._z if self._z is not None else self._zstd
        return bool(obj.eof)  # type: ignore[union-attr]

    @property
    def unused(self) -> bytes:
        obj = self._z if self._z is not None else self._zstd
        tail = getattr(obj, "unconsumed_tail", b"") if self._z is not None else b""
        return bytes(tail) + bytes(obj.unused_data)  # type: ignore[union-attr]


def _ccob_header(s: Stream, start: int, limit: int) -> tuple[str, int, int | None, int]:
    """A CCOB header: (method, version, total size or None for v1, header length)."""
    magic_v = s.exact(8, "compressed bundle header")
    version, method_id = struct.unpack_from("<HH", magic_v, 4)
    method = METHODS.get(method_id)
    if method is None:
        raise OffloadError(f"compressed offload bundle: unknown compression method {method_id}")
    total: int | None
    if version == 1:
        _raw_size, _hash = struct.unpack("<IQ", s.exact(12, "CCOB v1 header"))
        total, hlen = None, 20
    elif version == 2:
        total, _raw_size, _hash = struct.unpack("<IIQ", s.exact(16, "CCOB v2 header"))
        hlen = 24
    elif version == 3:
        total, _raw_size, _hash = struct.unpack("<QQQ", s.exact(24, "CCOB v3 header"))
        hlen = 32
    else:
        raise OffloadError(f"compressed offload bundle: unknown header version {version}")
    if total is not None and (total < hlen or start + total > limit):
        raise OffloadError(f"corrupt compressed offload bundle at {start}: size {total}")
    return method, version, total, hlen


def read_ccob(s: Stream, limit: int) -> Bundle:
    start = s.pos
    method, version, total, hlen = _ccob_header(s, start, limit)
    left = None if total is None else total - hlen
    inflater, out = _Inflater(method), bytearray()
    try:
        parsed, left = _inflate_header(s, inflater, out, left)
        if parsed is None:
            raise OffloadError(f"truncated compressed offload bundle at offset {start}")
        heads = _Heads(parsed[0])
        heads.feed(out)
        if left is not None and total is not None:
            s.skip(_inflate_heads(s, inflater, heads, left, len(out) + PROBE_MAX_BYTES))
        else:  # v1 has no size: inflate to the end of the stream to find where it stops
            _inflate_to_end(s, inflater, heads, start)
    except (zlib.error, ValueError) as err:
        raise OffloadError(f"corrupt compressed offload bundle at offset {start}: {err}") from err
    except Exception as err:  # zstandard.ZstdError (imported lazily)
        if type(err).__name__ == "ZstdError":
            raise OffloadError(f"corrupt compressed offload bundle at {start}: {err}") from err
        raise
    return Bundle(start, method, version, heads.result(), s.pos - start)


def _inflate_header(s: Stream, inflater: _Inflater, out: bytearray,
                    left: int | None) -> tuple[tuple[list[BundleEntry], int, int] | None, int | None]:
    """Inflate into ``out`` until the inner bundle's header parses (None: the data ended
    first); returns it and the stored bytes left (None: unknown, v1)."""
    parsed = None
    while parsed is None and not inflater.eof and left != 0:
        piece = s.read(_FEED if left is None else min(_FEED, left))
        if not piece:
            break
        if left is not None:
            left -= len(piece)
        out += inflater.feed(piece, MAX_HEADER_BYTES)
        if len(out) >= 32:
            if bytes(out[:24]) != PLAIN_MAGIC:
                raise OffloadError("compressed offload bundle does not hold a bundle")
            parsed = plain_header(bytes(out))
        if len(out) >= MAX_HEADER_BYTES and parsed is None:
            raise OffloadError("compressed offload bundle: header too large")
    return parsed, left


def _inflate_to_end(s: Stream, inflater: _Inflater, heads: _Heads, start: int) -> None:
    """A v1 bundle (no size): inflate to its end, feeding the entries' headers still wanted;
    the stream is left just after it."""
    while not inflater.eof:
        piece = b"" if inflater.pending else s.read(1024)
        if not piece and not inflater.pending:
            raise OffloadError(f"truncated compressed offload bundle at offset {start}")
        got = inflater.feed(piece, 1 << 20)
        if heads.wanted:
            heads.feed(got)
    s.unread(inflater.unused)


def _inflate_heads(s: Stream, inflater: _Inflater, heads: _Heads, left: int, budget: int) -> int:
    """Inflate on (to ``budget`` inflated bytes in all) while an entry's header within them is
    still to be caught; returns the stored bytes left unread."""
    while heads.wanted_before(budget) and left > 0 and heads.seen < budget and not inflater.eof:
        piece = s.read(min(_FEED, left))
        if not piece:
            break
        left -= len(piece)
        # (zlib leaves input unconsumed only once 1 MiB came out: past the budget, so done)
        heads.feed(inflater.feed(piece, 1 << 20))
    return left


def read_bundles(chunks: Iterable[bytes | memoryview], size: int) -> list[Bundle]:
    """Read every bundle of a fatbin section streamed as ``chunks`` (``size`` bytes in all)."""
    s = Stream(chunks)
    bundles: list[Bundle] = []
    while True:
        s.skip_zeros()
        magic = s.peek(24)
        if not magic:
            return bundles
        if magic == PLAIN_MAGIC:
            bundles.append(read_plain(s, size))
        elif magic[:4] == CCOB_MAGIC:
            bundles.append(read_ccob(s, size))
        else:
            raise OffloadError(f"unrecognised data at offset {s.pos} of the fatbin: {magic[:8]!r}")
        if len(bundles) > MAX_ENTRIES:
            raise OffloadError("more than 16384 offload bundles in one section")


def parse_fatbin(data: bytes | bytearray | memoryview) -> list[Bundle]:
    view = memoryview(data)
    return read_bundles((view[i : i + (1 << 20)] for i in range(0, len(view), 1 << 20)), len(view))


def gpu_targets(bundles: Iterable[Bundle]) -> tuple[str, ...]:
    """Distinct device targets (``gfx90a:xnack+``) of the bundles, sorted."""
    return tuple(sorted({e.target for b in bundles for e in b.entries if e.is_device and e.target}))
