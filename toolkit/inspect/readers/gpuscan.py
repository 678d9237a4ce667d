"""Finding GPU code in a host library, wherever it is stored.

* ``.hip_fatbin``: must hold clang offload bundles (plain or ``CCOB``) and zero padding,
  nothing else; anything unreadable there is a problem (an error, never a pass).
* every other scanned section (``.rodata``, ``.data``, custom ones): plain bundles, ``CCOB``
  bundles and raw AMDGPU ELF code objects wherever their magic appears, each counted only
  after its header validates (the HIP runtime itself holds the bundle magic as a string).

Machine code, symbol/string/relocation tables and unwind data are not scanned (see
:func:`scan_ranges` in :mod:`toolkit.inspect.readers.elf`). Sections are read as streams of chunks,
so a GB-sized library is scanned in bounded memory; a compressed bundle is decompressed only
until its entry table is read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from toolkit.core.errors import ElfError, OffloadError
from toolkit.inspect.readers.amdgpu import (
    ELFOSABI_AMDGPU_HSA,
    V2_MAX_BYTES,
    code_object_at,
    needs_note,
    note_target,
)
from toolkit.inspect.readers.offload import (
    CCOB_MAGIC,
    METHODS,
    PLAIN_MAGIC,
    Bundle,
    Stream,
    plain_header,
    probe_plain,
    read_bundles,
    read_ccob,
)

# the first 8 bytes of every AMDGPU code object: the ELF magic, 64-bit, little-endian, version 1,
# the HSA OS ABI (``_hsa_ident``); an ELF magic followed by anything else is no code object
HSA_ELF = b"\x7fELF\x02\x01\x01" + bytes([ELFOSABI_AMDGPU_HSA])
WINDOW = 1 << 20  # bytes searched at once (bounded memory; the patterns are found across windows)
PEEK_HEADER = 1 << 20  # a plain bundle's entry table must fit in this much to count
_PATTERNS = (HSA_ELF, PLAIN_MAGIC, CCOB_MAGIC)
_OVERLAP = max(len(p) for p in _PATTERNS) - 1


@dataclass(frozen=True)
class ScanRange:
    name: str
    offset: int
    size: int

    @property
    def is_fatbin(self) -> bool:
        return self.name == ".hip_fatbin"


@dataclass(frozen=True)
class CodeObject:
    """One device code object: its target id, the bytes it takes and how it is stored."""

    target: str
    size: int
    where: str  # ".hip_fatbin (bundle)", ".rodata (raw ELF)", "file"
    # a bundle entry whose id names another processor than its code object's ELF header
    # (``target``): the id's target; such an object runs on neither and counts for neither
    label: str = ""


@dataclass
class GpuCode:
    objects: list[CodeObject] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def _from_bundle(b: Bundle, where: str) -> list[CodeObject]:
    how = f"{where} ({'bundle' if b.compression is None else b.compression + ' bundle'})"
    return [
        CodeObject(e.code_target, b.stored_bytes(e), how, e.target) if e.mislabelled and e.code_target
        else CodeObject(e.target, b.stored_bytes(e), how)
        for e in b.entries if e.is_device and e.target
    ]


class Hits:
    """Where the patterns occur in some byte ranges of a file, noted while it streams past
    once (``feed`` every chunk in order), so a later scan of a section inside them reads
    only the bytes at those places (:func:`scan`), not the whole section again.

    The bytes around each place are kept too (``HOLD_BEFORE`` before it: a bundle's zero
    padding; ``HOLD_AFTER`` from it on: a compressed bundle's header), up to ``HOLD_MAX`` in
    all, so a later read of them (:meth:`held_from`) need not inflate the file again."""

    MAX = 1 << 16  # more places than this: not worth it, the scan reads everything
    HOLD_BEFORE = 4 << 10
    HOLD_AFTER = 64 << 10
    HOLD_MAX = 8 << 20

    def __init__(self, ranges: list[tuple[int, int]]) -> None:
        self.ranges = ranges
        self.found: list[tuple[int, bytes]] = []
        self._searched: list[list[int]] = []  # [start, end] of the bytes searched, merged
        self._carry = b""  # the end of the previous searched chunk (patterns across chunks)
        self._prev: tuple[int, bytes] = (0, b"")  # the previous chunk fed
        self._held: list[tuple[int, int, bytearray]] = []  # (start, end wanted, bytes from start)
        self._planned = 0  # bytes of the windows, kept or still to keep (at most HOLD_MAX)

    def feed(self, off: int, chunk: bytes) -> None:
        end = off + len(chunk)
        if not any(a < end and b > off for a, b in self.ranges):
            self._carry, self._prev = b"", (0, b"")
            return
        new: list[tuple[int, bytes]] = []
        if self._carry:  # patterns that start in the previous chunk and end in this one
            j, n = self._carry + chunk[:_OVERLAP], len(self._carry)
            new += [(off - n + i, p) for p in _PATTERNS for i in _all(j, p) if i < n < i + len(p)]
        new += [(off + i, p) for p in _PATTERNS for i in _all(chunk, p)]
        self.found += new
        if self._searched and self._searched[-1][1] == off:
            self._searched[-1][1] = end
        else:
            self._searched.append([off, end])
        self._carry = (self._carry + chunk[-_OVERLAP:])[-_OVERLAP:]
        self._hold(off, chunk, sorted(at for at, _ in new))
        if len(self.found) > self.MAX:  # (a crafted member): give up, bounded memory
            self.ranges, self.found, self._searched, self._held = [], [], [], []

    def _hold(self, off: int, chunk: bytes, places: list[int]) -> None:
        """Keep the bytes around ``places`` (in this chunk or the previous one fed) and go on
        filling the windows still open."""
        poff, prev = self._prev
        if poff + len(prev) != off:
            poff, prev = off, b""
        for at in places:
            a, b = max(at - self.HOLD_BEFORE, poff), at + self.HOLD_AFTER
            if self._held and a <= self._held[-1][1]:  # overlaps the last window: widen it
                start, last, buf = self._held[-1]
                if b > last and self._planned + (b - last) <= self.HOLD_MAX:
                    self._held[-1] = (start, b, buf)
                    self._planned += b - last
            elif self._planned + (b - a) <= self.HOLD_MAX:
                self._held.append((a, b, bytearray()))
                self._planned += b - a
        for start, want, buf in reversed(self._held):
            have = start + len(buf)
            if have >= want:
                break  # every earlier window is complete too
            for base, data in ((poff, prev), (off, chunk)):
                if base <= have < base + len(data):
                    piece = memoryview(data)[have - base : want - base]
                    buf += piece
                    have += len(piece)
        self._prev = (off, chunk)

    def holds(self, pos: int) -> bool:
        """Whether the byte at ``pos`` was kept."""
        return any(start <= pos < start + len(buf) for start, _, buf in self._held)

    def held_from(self, pos: int) -> bytes:
        """The bytes kept from ``pos`` on (to the end of its window), or nothing."""
        for start, _, buf in self._held:
            if start <= pos < start + len(buf):
                return bytes(buf[pos - start :])
        return b""

    def next_held(self, pos: int) -> int | None:
        """Where the first window of kept bytes after ``pos`` starts, if any."""
        return next((start for start, _, buf in self._held if start > pos and buf), None)

    def covers(self, start: int, end: int) -> bool:
        return any(a <= start and end <= b for a, b in self._searched)

    def within(self, start: int, end: int) -> list[tuple[int, bytes]]:
        """The places of ``[start, end)`` (whole patterns inside it), from ``start``, in order."""
        return sorted((at - start, p) for at, p in self.found if start <= at and at + len(p) <= end)


def scan(
    ranges: Iterable[ScanRange], chunks: Callable[[int, int], Iterable[bytes]], hits: Hits | None = None
) -> GpuCode:
    """GPU code in ``ranges``; ``chunks(start, end)`` yields the bytes of a file range (and
    may pass over bytes: ``seek``); ``hits``: where the patterns are, when known."""
    out = GpuCode()
    for r in ranges:
        data = chunks(r.offset, r.offset + r.size)
        if r.is_fatbin:
            try:
                bundles = read_bundles(data, r.size)
            except ElfError as err:
                out.problems.append(f"{r.name} is unreadable: {err}")
                continue
            if not bundles:
                out.problems.append(f"{r.name} holds no offload bundle ({r.size} bytes, all zero)")
            for b in bundles:
                out.objects += _from_bundle(b, r.name)
        elif hits is not None and hits.covers(r.offset, r.offset + r.size):
            out.objects += _scan_hits(Stream(data), r.size, r.name, hits.within(r.offset, r.offset + r.size))
        else:
            out.objects += _scan_data(Stream(data), r.size, r.name)
    return out


def _scan_hits(s: Stream, size: int, name: str, hits: list[tuple[int, bytes]]) -> list[CodeObject]:
    """What :func:`_scan_data` finds, given every place a pattern occurs in the section: it
    handles the same places in the same order, reading only from them on."""
    found: list[CodeObject] = []
    for at, pat in hits:
        if at < s.pos:
            continue
        s.skip(at - s.pos)
        found += _candidate(s, pat, size, name)
    return found


def _scan_data(s: Stream, size: int, name: str) -> list[CodeObject]:
    """Validated code objects and bundles anywhere in one section's bytes."""
    found: list[CodeObject] = []
    while s.pos < size:
        buf = s.buffered(WINDOW)
        base, n = s.pos, len(buf)
        if n == 0:
            break
        hits = sorted((base + i, p) for p in _PATTERNS for i in _all(buf, p))
        for at, pat in hits:
            if at < s.pos:
                continue
            s.skip(at - s.pos)
            found += _candidate(s, pat, size, name)
        if s.pos < base + n - _OVERLAP:
            s.skip(base + n - _OVERLAP - s.pos)
        if n <= _OVERLAP:
            s.skip(n)
    return found


def _all(buf: bytes | bytearray, pat: bytes) -> Iterable[int]:
    i = buf.find(pat)
    while i >= 0:
        yield i
        i = buf.find(pat, i + 1)


def _raw_elf(s: Stream, room: int, name: str) -> list[CodeObject]:
    """A raw code object at the stream position (skipped whole), else step 1."""
    head = s.peek(64)
    hit = code_object_at(head, room)
    if hit is None:
        s.skip(1)
        return []
    target = hit[0]
    if needs_note(target, head[8]) and hit[1] <= V2_MAX_BYTES:
        target = note_target(s.peek(hit[1])) or target
    s.skip(hit[1])
    return [CodeObject(target, hit[1], f"{name} (raw ELF)")]


def _plain_bundle(s: Stream, room: int, name: str) -> list[CodeObject]:
    """An uncompressed offload bundle with device entries at the stream position, else step 1."""
    n = min(PEEK_HEADER, room)
    view = memoryview(s.buffered(n))[:n]  # no copy: a section of magics is not n bytes each
    try:
        parsed = plain_header(view)
    except OffloadError:
        parsed = None
    finally:
        view.release()  # the stream's buffer may change size again
    if parsed is None or parsed[2] > room or not any(e.is_device for e in parsed[0]):
        s.skip(1)
        return []
    entries, _, end = parsed
    return _from_bundle(Bundle(0, None, None, probe_plain(s, entries, 0, end), end), name)


def _candidate(s: Stream, pat: bytes, size: int, name: str) -> list[CodeObject]:
    """Handle the magic at the stream position: count and skip what validates, else step 1."""
    room = size - s.pos
    if pat == HSA_ELF:
        return _raw_elf(s, room, name)
    if pat == PLAIN_MAGIC:
        return _plain_bundle(s, room, name)
    head = s.peek(8)
    version, method = int.from_bytes(head[4:6], "little"), int.from_bytes(head[6:8], "little")
    if len(head) < 8 or version not in (1, 2, 3) or method not in METHODS:
        s.skip(1)
        return []
    try:
        bundle = read_ccob(s, size)
    except ElfError:  # it has read at least the 8 bytes peeked above: the scan goes on after them
        return []
    return _from_bundle(bundle, name)
