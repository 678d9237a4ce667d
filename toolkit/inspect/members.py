"""Reading ELF files: members of a wheel (inflated in place) and files on disk (mmap).

Only ELF members are inflated, each in one streaming pass that keeps just the byte ranges
the ELF reader needs (more passes only when it asks for more), in a process pool when
there is enough to do; a ``.hip_fatbin`` section is streamed through the offload reader
and never held in memory.
"""

from __future__ import annotations

import mmap
import multiprocessing
import os
import zipfile
from collections.abc import Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor

from toolkit.core.errors import UsageError
from toolkit.inspect.elf import (
    ElfInfo,
    Image,
    NeedRanges,
    parse_elf,
    parse_header,
    section_table_range,
    segment_ranges,
)
from toolkit.inspect.errors import ElfError
from toolkit.inspect.offload import gpu_targets, read_bundles
from toolkit.inspect.wheelzip import WheelZip

HEAD_KEEP = 16 << 20  # bytes kept from the start of each ELF member while inflating it
TAIL_KEEP = 1 << 20  # bytes kept before the section header table (section names)
POOL_MIN_BYTES = 24 << 20  # compressed ELF bytes worth a process pool
PT_DYNAMIC = 2


def _slice(chunks: Iterable[bytes], start: int, end: int) -> Iterator[memoryview]:
    pos = 0
    for chunk in chunks:
        a, b = max(start, pos), min(end, pos + len(chunk))
        if a < b:
            yield memoryview(chunk)[a - pos : b - pos]
        pos += len(chunk)
        if pos >= end:
            return


def _inflate(
    wz: WheelZip, info: zipfile.ZipInfo, ranges: list[tuple[int, int]], *, full: bool
) -> list[tuple[int, bytearray]]:
    """One streaming pass over a member, keeping ``ranges`` (grown from the ELF header)."""
    held: dict[tuple[int, int], bytearray] = {r: bytearray() for r in ranges}
    stop = None if full else max(b for _, b in ranges)
    pos, first = 0, full
    for chunk in wz.stream(info, stop=stop):
        if first:
            first = False
            for r in _header_ranges(chunk, info.file_size):
                held.setdefault(r, bytearray())
        end = pos + len(chunk)
        view = memoryview(chunk)
        for (a, b), buf in held.items():
            if a < end and b > pos:
                buf += view[max(a, pos) - pos : min(b, end) - pos]
        pos = end
    return [(a, buf) for (a, _), buf in held.items() if buf]


def _header_ranges(first: bytes, size: int) -> list[tuple[int, int]]:
    """From the first chunk: the dynamic segment, the section table and the bytes before it."""
    try:
        img = Image(size, [(0, first)])
        hdr = parse_header(img)
        out = segment_ranges(img, hdr, PT_DYNAMIC)
    except (ElfError, NeedRanges):
        return []
    if hdr.shoff:
        a, b = section_table_range(hdr)
        out.append((max(0, a - TAIL_KEEP), b))
    return [(a, min(b, size)) for a, b in out if a < b]


def load_member(wz: WheelZip, info: zipfile.ZipInfo) -> ElfInfo:
    """Parse one ELF member of a wheel, inflating it once (more only when needed)."""
    pieces = _inflate(wz, info, [(0, min(HEAD_KEEP, info.file_size))], full=True)
    img = Image(info.file_size, pieces)
    for _ in range(4):
        try:
            elf = parse_elf(img)
            break
        except NeedRanges as need:
            for a, buf in _inflate(wz, info, need.ranges, full=False):
                img.add(a, buf)
    else:
        raise ElfError("could not gather the sections it needs")
    if elf.fatbin_range:
        off, size = elf.fatbin_range
        try:
            chunks = _slice(wz.stream(info, stop=off + size), off, off + size)
            elf.gpu_targets = gpu_targets(read_bundles(chunks, size))
        except ElfError as err:
            elf.problems.append(f".hip_fatbin: {err}")
        elf.fatbin_range = None
    return elf


def load_file(path: str | os.PathLike[str]) -> ElfInfo:
    """Parse an ELF file on disk through mmap (only the pages read are touched)."""
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size == 0:
            raise ElfError("empty file")
        mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    try:
        return parse_elf(Image.whole(memoryview(mm)))
    finally:
        try:
            mm.close()
        except BufferError:  # a view is still referenced (an exception frame); GC closes it
            pass


_WORKER_ZIPS: dict[str, WheelZip] = {}


def _member_job(wheel: str, name: str) -> ElfInfo | str:
    wz = _WORKER_ZIPS.get(wheel)
    if wz is None:
        wz = _WORKER_ZIPS[wheel] = WheelZip.open(wheel)
    try:
        return load_member(wz, wz.zf.getinfo(name))
    except UsageError as err:
        return str(err)


def load_members(wz: WheelZip, infos: list[zipfile.ZipInfo], jobs: int | None) -> list[ElfInfo | str]:
    """Load ELF members (an error message for each that fails), in a process pool when
    they are big enough to pay for it."""
    workers = min(jobs or os.cpu_count() or 1, len(infos), 8)
    big = sum(i.compress_size for i in infos) >= POOL_MIN_BYTES
    if workers > 1 and big and "fork" in multiprocessing.get_all_start_methods():
        order = sorted(range(len(infos)), key=lambda k: -infos[k].compress_size)
        out: list[ElfInfo | str] = [""] * len(infos)
        context = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(workers, mp_context=context) as pool:
            futs = {k: pool.submit(_member_job, str(wz.path), infos[k].filename) for k in order}
            for k, fut in futs.items():
                out[k] = fut.result()
        return out
    results: list[ElfInfo | str] = []
    for info in infos:
        try:
            results.append(load_member(wz, info))
        except UsageError as err:
            results.append(str(err))
    return results
