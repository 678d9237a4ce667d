"""The dynamic-linking tables of an ELF file, each read in time and memory linear in its size,
however it is crafted (used by :mod:`toolkit.inspect.readers.elf`).

* Names: a string table charges every name read by its length (:class:`Strings`); reading
  more than ``NAME_FACTOR`` times the table (plus ``NAME_SLACK``) is a corrupt file. Linkers
  store each name once (suffixes shared), so a real file reads about its table once; a crafted
  one pointing a million entries at one long name is refused before it costs a million copies.
* Version needs (``.gnu.version_r``): a ``vn_next``/``vna_next`` link shorter than an entry
  (16 bytes) is corrupt, as binutils' readelf says ("Invalid vna_next field"), so every chain
  moves forward by at least one entry; a Vernaux reached twice (two files' lists sharing it,
  the crafted layout that made the reading quadratic) is corrupt too: each version index
  names one file. So each entry is read at most once.
* Version definitions (``.gnu.version_d``): ``vd_next`` shorter than an entry (20 bytes) is
  corrupt (readelf: "Invalid vd_next field"); one Verdaux is read per definition.
* Dynamic entries: one pass up to ``DT_NULL``.

Malformed input raises :class:`ElfError` (a ``UsageError``), never ``struct.error``.
"""

from __future__ import annotations

import struct
from array import array
from dataclasses import dataclass

from toolkit.core.errors import ElfError

NAME_FACTOR = 8  # names read, in bytes, per byte of their string table (a real file: about 1)
NAME_SLACK = 16 << 10
VERNEED_SIZE, VERDEF_SIZE, VERDAUX_SIZE = 16, 20, 8
DT_NEEDED, DT_SONAME, DT_RPATH, DT_RUNPATH = 1, 14, 15, 29


class Strings:
    """A NUL-terminated string table whose names cost their length, within a budget."""

    def __init__(self, data: bytes, what: str = "string table") -> None:
        self.data = data
        self.what = what
        self.left = NAME_FACTOR * len(data) + NAME_SLACK

    def spend(self, n: int) -> None:
        """Charge ``n`` bytes of names read; past the budget the file is corrupt."""
        self.left -= n
        if self.left < 0:
            raise ElfError(
                f"corrupt ELF: its entries name more than {NAME_FACTOR} times the bytes of their "
                f"{self.what} ({len(self.data)} bytes): the same names are read over and over"
            )

    def raw(self, offset: int) -> bytes:
        data = self.data
        end = data.find(b"\0", offset) if 0 <= offset < len(data) else -1
        if end < 0:
            raise ElfError(f"corrupt ELF: string offset {offset} outside its table ({len(data)} bytes)")
        self.spend(end - offset)
        return data[offset:end]

    def text(self, offset: int) -> str:
        return self.raw(offset).decode("utf-8", "replace")


def strings(table: bytes | Strings) -> Strings:
    return table if isinstance(table, Strings) else Strings(table)


@dataclass(frozen=True)
class Dynamic:
    needed: tuple[str, ...] = ()
    soname: str | None = None
    rpath: tuple[str, ...] = ()
    runpath: tuple[str, ...] = ()


def read_dynamic(raw: bytes, names: Strings, endian: str, elf_class: int) -> Dynamic:
    """DT_NEEDED, DT_SONAME, DT_RPATH and DT_RUNPATH entries up to DT_NULL."""
    fmt = endian + ("qQ" if elf_class == 64 else "iI")
    step = struct.calcsize(fmt)
    needed: list[str] = []
    rpath: list[str] = []
    runpath: list[str] = []
    soname: str | None = None
    for tag, val in struct.iter_unpack(fmt, raw[: len(raw) - len(raw) % step]):
        if tag == 0:
            break
        if tag == DT_NEEDED:
            needed.append(names.text(val))
        elif tag == DT_SONAME:
            soname = names.text(val)
        elif tag == DT_RPATH:  # empty elements are kept: ld.so reads them as the cwd
            rpath += names.text(val).split(":")
        elif tag == DT_RUNPATH:
            runpath += names.text(val).split(":")
    return Dynamic(tuple(needed), soname, tuple(rpath), tuple(runpath))


def _step(nxt: int, size: int, what: str, at: int) -> None:
    if nxt < size:
        raise ElfError(f"corrupt ELF: {what} at offset {at} links to the next {nxt} bytes on, "
                       f"inside itself (an entry is {size} bytes)")


def read_verneed(
    raw: bytes, names: Strings, e: str, count: int
) -> tuple[dict[int, tuple[str, str]], dict[str, tuple[str, ...]]]:
    """From ``.gnu.version_r``: version index -> (version name, file), and file -> its
    version names in chain order. ``count`` (sh_info) bounds the entries; 0 follows the chain."""
    out: dict[int, tuple[str, str]] = {}
    needs: dict[str, list[str]] = {}
    seen: set[int] = set()
    off = 0
    for i in range(count or len(raw) // VERNEED_SIZE + 1):
        if off + VERNEED_SIZE > len(raw):
            raise ElfError("corrupt ELF: .gnu.version_r entry out of bounds")
        _ver, cnt, file_off, aux, nxt = struct.unpack_from(e + "HHIII", raw, off)
        file = names.text(file_off)
        a = off + aux
        for j in range(cnt):
            if a + 16 > len(raw):
                raise ElfError("corrupt ELF: .gnu.version_r aux entry out of bounds")
            if a in seen:
                raise ElfError(f"corrupt ELF: .gnu.version_r aux entry at offset {a} is reached "
                               "twice (a looping or shared chain)")
            seen.add(a)
            _hash, _flags, other, name_off, anext = struct.unpack_from(e + "IHHII", raw, a)
            name = names.text(name_off)
            out[other & 0x7FFF] = (name, file)
            needs.setdefault(file, []).append(name)
            if not anext or j == cnt - 1:
                break
            _step(anext, 16, ".gnu.version_r aux entry", a)
            a += anext
        if not nxt or i == count - 1:
            break
        _step(nxt, VERNEED_SIZE, ".gnu.version_r entry", off)
        off += nxt
    return out, {k: tuple(v) for k, v in needs.items()}


def read_verdef(raw: bytes, names: Strings, e: str, count: int) -> dict[int, str]:
    """Version index -> version name from ``.gnu.version_d`` (the base version excluded)."""
    out: dict[int, str] = {}
    off = 0
    for i in range(count or len(raw) // VERDEF_SIZE + 1):
        if off + VERDEF_SIZE > len(raw):
            raise ElfError("corrupt ELF: .gnu.version_d entry out of bounds")
        _ver, flags, ndx, cnt, _hash, aux, nxt = struct.unpack_from(e + "HHHHIII", raw, off)
        if cnt and not flags & 1:  # VER_FLG_BASE names the file itself, not a version
            if off + aux + VERDAUX_SIZE > len(raw):
                raise ElfError("corrupt ELF: .gnu.version_d aux entry out of bounds")
            out[ndx & 0x7FFF] = names.text(struct.unpack_from(e + "I", raw, off + aux)[0])
        if not nxt or i == count - 1:
            break
        _step(nxt, VERDEF_SIZE, ".gnu.version_d entry", off)
        off += nxt
    return out


def symbol_layout(elf_class: int, endian: str) -> tuple[str, int, int, int, int, int]:
    """A symbol entry's struct format, size and the indexes of name, info, other, shndx."""
    if elf_class == 64:  # name, info, other, shndx, value, size
        return endian + "IBBHQQ", 24, 0, 1, 2, 3
    # name, value, size, info, other, shndx
    return endian + "IIIBBH", 16, 0, 3, 4, 5


def version_entries(versym_raw: bytes, little: bool) -> array[int]:
    """``.gnu.version``'s entries, in this machine's byte order."""
    versym = array("H", versym_raw[: len(versym_raw) & ~1])
    if little != (struct.pack("=H", 1) == b"\x01\x00"):
        versym.byteswap()
    return versym


def add_version(dver: dict[bytes, list[str]], name: bytes, version: str, seen: bool) -> None:
    """Record a defined symbol's version ("" for an earlier unversioned definition)."""
    if name not in dver:
        dver[name] = [""] if seen else []
    dver[name].append(version)
