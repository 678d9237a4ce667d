"""Reading wheel members (in place) and files on disk (mmap) into what the checks need.

Every member of a wheel is inflated exactly once in full (:func:`read_member`): that pass
hashes it for the RECORD rule, checks its CRC and size, and, for an ELF member, keeps only
the byte ranges the ELF reader needs. Later reads (more ELF ranges, the sections scanned
for GPU code) go through the inflater's checkpoints instead of starting over. Members are
shared out to a process pool when there is enough to do: the largest first, the small ones
in batches.
"""

from __future__ import annotations

import base64
import hashlib
import mmap
import multiprocessing
import os
import zipfile
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from toolkit.core.errors import ElfError, MemberError, UsageError
from toolkit.inspect.readers.elf import (
    ElfInfo,
    Image,
    NeedRanges,
    is_elf,
    parse_elf,
    parse_header,
    read_elf_bytes,
    section_table_range,
    segment_ranges,
)
from toolkit.inspect.readers.gpuscan import Hits, scan
from toolkit.inspect.readers.inflate import CHECKPOINT_EVERY, INFLATE_ERRORS, MemberReader, crc32, inflater
from toolkit.inspect.readers.ranged import Ranged
from toolkit.inspect.readers.wheelzip import Budget, WheelZip

HEAD_KEEP = 2 << 20  # bytes kept from the start of each ELF member while inflating it (the
# dynamic symbol tables beyond it are inflated again from the nearest checkpoint)
HASH_QUEUE = 2  # inflated chunks waiting for the hashing thread
TAIL_KEEP = 1 << 20  # bytes kept before the section header table (section names)
POOL_MIN_BYTES = 24 << 20  # a wheel of at least this many compressed bytes gets a process pool
BATCH_BYTES = 4 << 20  # compressed bytes of small members handed to a worker at once
SMALL_BYTES = 1 << 20  # compressed bytes up to which a member is read and inflated in one go
THREAD_HASH_BYTES = 64 << 20  # members this large are hashed in a second thread
PT_DYNAMIC, PT_LOAD, PF_X, PF_W = 2, 1, 1, 2
HITS_MIN = 32 << 20  # inflated bytes from which a member's GPU-code places are noted while inflating
SEEK_MIN = CHECKPOINT_EVERY  # skips this long restart at a checkpoint instead of inflating through
MAX_SEGMENTS = 16  # program headers of one kind kept (real files: 1 to 4; the rest are read on demand)


@dataclass(slots=True)
class MemberResult:
    """One member read: its digest and size (for RECORD), and its ELF facts if it is ELF."""

    name: str
    digest: str | None = None  # "sha256=<urlsafe b64>", in the algorithm RECORD asked for
    size: int = 0
    error: str | None = None  # the member could not be read (archive damage, budget)
    is_elf: bool = False
    elf: ElfInfo | None = None
    elf_error: str | None = None  # ELF that cannot be parsed


def _header_ranges(first: bytes, size: int) -> list[tuple[int, int]]:
    """From the first chunk: the dynamic segment, the section table and the bytes before it."""
    try:
        img = Image(size, [(0, first)])
        hdr = parse_header(img)
        out = segment_ranges(img, hdr, PT_DYNAMIC)[:MAX_SEGMENTS]
    except (ElfError, NeedRanges):
        return []
    if hdr.shoff:
        a, b = section_table_range(hdr)
        out.append((max(0, a - TAIL_KEEP), b))
    return [(a, min(b, size)) for a, b in out if a < b]


def _digest(algo: str, data: bytes | None = None) -> Any:
    return hashlib.new(algo, data or b"")


class _InlineHash:
    """Hash a member's chunks, in order (and their CRC-32, the member's integrity check:
    :meth:`MemberReader.confirm`), and note where GPU-code patterns are in them
    (``Hits.feed``), in the thread that inflates it."""

    def __init__(self, algo: str) -> None:
        self._h = hashlib.new(algo)
        self.name = self._h.name
        self.crc = 0

    def update(self, data: bytes, off: int = 0, hits: Hits | None = None) -> None:
        self._h.update(data)
        self.crc = crc32(data, self.crc)
        if hits is not None:
            hits.feed(off, data)

    def digest(self) -> bytes:
        return self._h.digest()

    def close(self) -> None:
        pass


class _BackgroundHash:
    """The same in a second thread while the first inflates a large member (hashlib drops
    the GIL, and so does inflating), so the largest member of a wheel is not the sum of both
    costs."""

    def __init__(self, algo: str) -> None:
        self._inline = _InlineHash(algo)
        self.name = self._inline.name
        self._pool = ThreadPoolExecutor(1)
        self._last: Future[None] | None = None
        self._queued: deque[Future[None]] = deque()

    def update(self, data: bytes, off: int = 0, hits: Hits | None = None) -> None:
        """Queue a chunk (at ``off``; ``hits``: also search it); at most ``HASH_QUEUE``
        wait, so memory stays bounded when hashing is slower than inflating (a loaded
        machine)."""
        while len(self._queued) >= HASH_QUEUE:
            self._queued.popleft().result()
        self._last = self._pool.submit(self._inline.update, data, off, hits)
        self._queued.append(self._last)

    def digest(self) -> bytes:
        self._wait()
        return self._inline.digest()

    @property
    def crc(self) -> int:
        self._wait()
        return self._inline.crc

    def _wait(self) -> None:
        self.close()
        if self._last is not None:
            self._last.result()

    def close(self) -> None:
        self._pool.shutdown(wait=True)


def _encode(h: Any) -> str:
    return f"{h.name}=" + base64.urlsafe_b64encode(h.digest()).rstrip(b"=").decode()


def _read_small(wz: WheelZip, info: zipfile.ZipInfo, algo: str, pack: bool) -> MemberResult:
    """A small member in one read and one inflate call (no streaming machinery)."""
    res = MemberResult(info.filename)
    try:
        why = wz.bomb_check(info)
        if why:
            raise MemberError(why)
        start = wz.data_offset(info)
        raw = wz.pread(info.compress_size, start)
        if len(raw) != info.compress_size:
            raise MemberError(f"{info.filename}: corrupt or truncated archive member (short read)")
        if info.compress_type == zipfile.ZIP_STORED:
            data = raw
        elif info.compress_type == zipfile.ZIP_DEFLATED:
            d = inflater()
            data = d.decompress(raw, info.file_size + 1)
            if len(data) != info.file_size or not d.eof:
                raise MemberError(f"{info.filename}: corrupt or truncated archive member "
                                  f"(inflated to {len(data)} bytes, {info.file_size} declared)")
        else:
            raise MemberError(f"{info.filename}: unsupported compression method {info.compress_type}")
        if crc32(data) != info.CRC:
            raise MemberError(f"{info.filename}: corrupt or truncated archive member (CRC-32 mismatch)")
    except UsageError as err:
        res.error = str(err)
        return res
    except INFLATE_ERRORS as err:
        res.error = f"{info.filename}: corrupt or truncated archive member ({err})"
        return res
    res.size, res.digest = len(data), _encode(_digest(algo, data))
    res.is_elf = is_elf(data[:4])
    if res.is_elf:
        try:
            res.elf = read_elf_bytes(data, pack)
        except UsageError as err:
            res.elf_error = str(err)
    return res


def read_member(
    wz: WheelZip, info: zipfile.ZipInfo, algo: str = "sha256", pack: bool = False
) -> MemberResult:
    """Inflate one member once: digest, size, CRC; ELF facts and GPU code when it is ELF
    (``pack``: its defined names packed, see ``ElfInfo.pack``)."""
    if info.compress_size <= SMALL_BYTES and info.file_size <= SMALL_BYTES * 64:
        return _read_small(wz, info, algo, pack)
    res = MemberResult(info.filename)
    h: _InlineHash | _BackgroundHash | None = None
    hits: Hits | None = None
    try:
        reader = MemberReader(wz, info)
        h = _BackgroundHash(algo) if info.file_size >= THREAD_HASH_BYTES else _InlineHash(algo)
        held: dict[tuple[int, int], bytearray] = {}
        for off, chunk in reader.first_pass():
            if off == 0:
                res.is_elf, held, hits = _first_chunk(chunk, info.file_size)
            h.update(chunk, off, hits)
            _keep(held, chunk, off)
        reader.confirm(h.crc)
        res.size = info.file_size
        res.digest = _encode(h)
    except UsageError as err:
        res.error = str(err)
        return res
    finally:
        if h is not None:
            h.close()
    if res.is_elf:
        try:
            img = Image(info.file_size, [(a, buf) for (a, _), buf in held.items()])
            res.elf = _parse(reader, img, pack, hits)
        except UsageError as err:
            res.elf_error = str(err)
    return res


def _first_chunk(chunk: bytes, size: int) -> tuple[bool, dict[tuple[int, int], bytearray],
                                                   Hits | None]:
    """From a member's first chunk: is it ELF; the ranges to keep while inflating (its head
    and header tables) and where GPU code may start."""
    if not is_elf(chunk):
        return False, {}, None
    held = {r: bytearray() for r in [(0, min(HEAD_KEEP, size))]}
    for r in _header_ranges(chunk, size):
        held.setdefault(r, bytearray())
    return True, held, _start_hits(chunk, size)


def _keep(held: dict[tuple[int, int], bytearray], chunk: bytes, off: int) -> None:
    """Add the parts of ``chunk`` (at ``off``) that fall in the held ranges."""
    end = off + len(chunk)
    for (a, b), buf in held.items():
        if a < end and b > off:
            buf += memoryview(chunk)[max(a, off) - off : min(b, end) - off]


def _start_hits(first: bytes, size: int) -> Hits | None:
    """For a large member: note where GPU code may start in its read-only data segments (not
    executable, not writable: ``.rodata``, ``.eh_frame``, often ``.hip_fatbin``) during the
    one inflating pass, so scanning those sections later inflates only around the places."""
    if size < HITS_MIN:
        return None
    try:
        img = Image(size, [(0, first)])
        ranges = segment_ranges(img, parse_header(img), PT_LOAD, PF_X | PF_W)[:MAX_SEGMENTS]
    except (ElfError, NeedRanges):
        return None
    return Hits(ranges) if ranges else None


def _parse(reader: MemberReader, img: Image, pack: bool, hits: Hits | None = None) -> ElfInfo:
    """Parse a member read once: missing ranges are inflated again from the nearest
    checkpoint; then the GPU scan the same way, passing over what it skips (a bundle's
    body) without inflating it when that is cheaper (:class:`Ranged`)."""
    for _ in range(4):
        try:
            elf = parse_elf(img, pack)
            break
        except NeedRanges as need:
            for a, b in need.ranges:
                img.add(a, reader.read(a, b - a))
    else:
        raise ElfError("could not gather the sections it needs")

    def inflated(x: int, y: int) -> Iterator[bytes]:
        return (data for _, data in reader.chunks(x, y))

    def chunks(a: int, b: int) -> Iterable[bytes]:
        if img.has(a, b - a):
            return [bytes(img.view(a, b - a))]
        if hits is None:
            return Ranged(inflated, a, b, SEEK_MIN)
        return Ranged(lambda x, y: _kept_or_inflated(hits, inflated, x, y), a, b, SEEK_MIN,
                      cheap=hits.holds)

    _scan_gpu(elf, chunks, hits)
    return elf


def _kept_or_inflated(
    hits: Hits, inflated: Callable[[int, int], Iterator[bytes]], x: int, y: int
) -> Iterator[bytes]:
    """The bytes of ``[x, y)``: those the first pass kept (around the GPU-code places) from
    memory, the rest inflated again."""
    while x < y:
        kept = hits.held_from(x)[: y - x]
        if kept:
            yield kept
            x += len(kept)
            continue
        upto = min(y, hits.next_held(x) or y)
        yield from inflated(x, upto)
        x = upto


def _scan_gpu(elf: ElfInfo, chunks: object, hits: Hits | None = None) -> None:
    if elf.scan:
        found = scan(elf.scan, chunks, hits)  # type: ignore[arg-type]
        elf.gpu_code, elf.scan = tuple(found.objects), ()
        elf.gpu_problems += found.problems


def load_file(path: str | os.PathLike[str]) -> ElfInfo:
    """Parse an ELF file on disk, GPU code included, through mmap (pages read are touched)."""
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size == 0:
            raise ElfError("empty file")
        mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    try:
        view = memoryview(mm)
        try:
            elf = parse_elf(Image.whole(view))

            def chunks(a: int, b: int) -> Iterator[bytes]:
                for i in range(a, b, 8 << 20):
                    yield mm[i : min(b, i + (8 << 20))]

            _scan_gpu(elf, chunks)
            return elf
        finally:
            view.release()
    finally:
        try:
            mm.close()
        except BufferError:  # a view is still referenced (an exception frame); GC closes it
            pass


_WORKER_ZIPS: dict[str, WheelZip] = {}


def _batch_job(wheel: str, budget: Budget, items: list[tuple[str, str]]) -> list[MemberResult]:
    wz = _WORKER_ZIPS.get(wheel)
    if wz is None:
        wz = _WORKER_ZIPS[wheel] = WheelZip.open(wheel, budget)
    return [read_member(wz, wz.zf.getinfo(name), algo, pack=True) for name, algo in items]


def _batches(infos: list[zipfile.ZipInfo]) -> list[list[zipfile.ZipInfo]]:
    """The largest members alone, the small ones together (about BATCH_BYTES each)."""
    out: list[list[zipfile.ZipInfo]] = []
    small: list[zipfile.ZipInfo] = []
    size = 0
    for info in sorted(infos, key=lambda i: -i.compress_size):
        if info.compress_size >= BATCH_BYTES:
            out.append([info])
            continue
        small.append(info)
        size += info.compress_size
        if size >= BATCH_BYTES:
            out.append(small)
            small, size = [], 0
    if small:
        out.append(small)
    return out


def start_pool(wz: WheelZip, jobs: int | None) -> ProcessPoolExecutor | None:
    """A process pool for a wheel large enough to be worth one, or None. Its workers fork
    at once, before the caller reads RECORD and the rest: each starts as a copy of this
    process, so the smaller it is then, the smaller every worker stays."""
    workers = min(jobs or os.cpu_count() or 1, 8)
    big = sum(i.compress_size for i in wz.members) >= POOL_MIN_BYTES
    if workers < 2 or not big or "fork" not in multiprocessing.get_all_start_methods():
        return None
    _WORKER_ZIPS[str(wz.path)] = wz  # forked workers read through the same descriptor (pread)
    pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"))
    pool.submit(int).result()  # the first task forks every worker
    return pool


def stop_pool(wz: WheelZip, pool: ProcessPoolExecutor | None) -> None:
    if pool is not None:
        pool.shutdown()
        _WORKER_ZIPS.pop(str(wz.path), None)


def read_members(
    wz: WheelZip, infos: list[zipfile.ZipInfo], algos: dict[str, str], pool: ProcessPoolExecutor | None = None
) -> list[MemberResult]:
    """Read every member (in ``infos`` order), in ``pool`` (see :func:`start_pool`) if any."""
    algo = {i.filename: algos.get(i.filename, "sha256") for i in infos}
    if pool is None:
        return [read_member(wz, i, algo[i.filename], pack=True) for i in infos]
    by_name: dict[str, MemberResult] = {}
    futs = [
        pool.submit(_batch_job, str(wz.path), wz.budget, [(i.filename, algo[i.filename]) for i in b])
        for b in _batches(infos)
    ]
    for fut in futs:
        for r in fut.result():
            by_name[r.name] = r
    return [by_name[i.filename] for i in infos]


def read_one(wz: WheelZip, info: zipfile.ZipInfo) -> ElfInfo:
    """An ELF member (a ``--with`` wheel's library): ``ElfError``/``UsageError`` if it is not."""
    res = read_member(wz, info)
    if res.error or res.elf_error or res.elf is None:
        raise ElfError(res.error or res.elf_error or "not an ELF file")
    return res.elf
