"""A compact ELF reader: exactly what the wheel checks need, nothing more.

It reads the ELF header, the section headers and the dynamic-linking sections
(``.dynsym``, ``.dynstr``, ``.gnu.version*``, ``.dynamic``), and names the sections that
may hold GPU code (:func:`scan_ranges`) for :mod:`toolkit.inspect.readers.gpuscan`.

Data comes from an :class:`Image`: a whole file (bytes or mmap) or
a *sparse* image holding only some byte ranges of a member still compressed in a wheel.
When a sparse image lacks a range, parsing raises :class:`NeedRanges` listing every range
it needs, so the caller can inflate once more and retry.

Every offset read from the file is bounds-checked; malformed input raises
:class:`ElfError` (a ``UsageError``), never ``struct.error``/``IndexError``.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from toolkit.core.errors import ElfError
from toolkit.core.gfx import sort_key
from toolkit.inspect.readers.amdgpu import V2_MAX_BYTES, amdgpu_target, needs_note, note_target
from toolkit.inspect.readers.elftables import (
    Strings,
    add_version,
    read_dynamic,
    read_verdef,
    read_verneed,
    strings,
    symbol_layout,
    version_entries,
)
from toolkit.inspect.readers.gpuscan import CodeObject, ScanRange
from toolkit.inspect.readers.inflate import name_batches, pack_bytes, pack_pairs, unpack_pairs
from toolkit.inspect.readers.kpack import KpackRef, elf_kpack, wanted

ELF_MAGIC = b"\x7fELF"
EM_AMDGPU = 224
SHT_DYNAMIC, SHT_NOBITS, SHT_DYNSYM = 6, 8, 11
SHN_XINDEX = 0xFFFF  # e_shstrndx escape: the real index is in section 0 (gABI)
SHT_VERDEF, SHT_VERNEED, SHT_VERSYM = 0x6FFFFFFD, 0x6FFFFFFE, 0x6FFFFFFF
# tables and unwind data the loader or the linker reads; never GPU code
NOT_SCANNED = frozenset({0, 2, 3, 4, 5, 6, 8, 9, 11, 17, 18, 19, 0x6FFFFFF6, 0x70000001,
                         SHT_VERDEF, SHT_VERNEED, SHT_VERSYM})
SHF_ALLOC, SHF_EXECINSTR = 0x2, 0x4
STB_GLOBAL, STB_WEAK, STB_GNU_UNIQUE = 1, 2, 10
ET_REL, ET_EXEC, ET_DYN = 1, 2, 3
FATBIN_SECTION = ".hip_fatbin"


class NeedRanges(Exception):
    """A sparse image lacks these ``(start, end)`` byte ranges; inflate them and retry."""

    def __init__(self, ranges: list[tuple[int, int]]) -> None:
        super().__init__(f"need {len(ranges)} more byte range(s)")
        self.ranges = ranges


class Image:
    """Random access to an ELF file's bytes: whole (``pieces={0: data}``) or sparse."""

    def __init__(self, size: int, pieces: Iterable[tuple[int, bytes | bytearray | memoryview]]) -> None:
        self.size = size
        self._pieces = sorted(((a, memoryview(d)) for a, d in pieces), key=lambda p: p[0])

    @classmethod
    def whole(cls, data: bytes | bytearray | memoryview) -> Image:
        view = memoryview(data)
        return cls(len(view), [(0, view)])

    def add(self, start: int, data: bytes | bytearray | memoryview) -> None:
        self._pieces = sorted([*self._pieces, (start, memoryview(data))], key=lambda p: p[0])

    def has(self, offset: int, length: int) -> bool:
        return self._find(offset, length) is not None

    def _find(self, offset: int, length: int) -> memoryview | None:
        for start, view in self._pieces:
            if start <= offset and offset + length <= start + len(view):
                return view[offset - start : offset - start + length]
        return None

    def view(self, offset: int, length: int, what: str = "data") -> memoryview:
        if offset < 0 or length < 0 or offset + length > self.size:
            raise ElfError(
                f"truncated or corrupt ELF: {what} at offset {offset} (+{length}) lies past "
                f"the end of the file ({self.size} bytes)"
            )
        found = self._find(offset, length)
        if found is None:
            raise NeedRanges([(offset, offset + length)])
        return found

    def require(self, ranges: Iterable[tuple[int, int]]) -> None:
        """Raise ``NeedRanges`` for every in-file range that is not held (all at once)."""
        missing = [(a, b) for a, b in ranges if 0 <= a <= b <= self.size and not self.has(a, b - a)]
        if missing:
            raise NeedRanges(missing)


@dataclass(frozen=True)
class Header:
    elf_class: int  # 32 or 64
    little: bool
    osabi: int
    abiversion: int
    type: int
    machine: int
    flags: int
    phoff: int
    shoff: int
    phentsize: int
    phnum: int
    shentsize: int
    shnum: int
    shstrndx: int

    @property
    def endian(self) -> str:
        return "<" if self.little else ">"


@dataclass(frozen=True)
class Section:
    name: str
    type: int
    offset: int
    size: int
    link: int
    info: int
    entsize: int
    flags: int = 0


@dataclass
class ElfInfo:
    """What the checks need from one ELF file; small and picklable."""

    machine: int
    elf_class: int
    type: int
    flags: int = 0
    little: bool = True  # data encoding: ELFDATA2LSB
    soname: str | None = None
    needed: tuple[str, ...] = ()
    rpath: tuple[str, ...] = ()
    runpath: tuple[str, ...] = ()
    version_needs: dict[str, tuple[str, ...]] = field(default_factory=dict)  # file -> versions
    version_defs: frozenset[str] = frozenset()
    undefined: list[tuple[bytes, str | None]] = field(default_factory=list)
    defined: frozenset[bytes] = frozenset()
    defined_versions: dict[bytes, tuple[str, ...]] = field(default_factory=dict)
    has_versym: bool = False
    has_sections: bool = True
    gpu_code: tuple[CodeObject, ...] = ()  # every device code object found
    scan: tuple[ScanRange, ...] = ()  # sections still to scan for GPU code (then cleared)
    problems: list[str] = field(default_factory=list)  # what could not be judged: errors
    gpu_problems: list[str] = field(default_factory=list)  # GPU sections that are unreadable
    kpack: KpackRef | None = None  # a split binary's marker: its device code is in kpack archives
    packed: bytes | None = None  # ``defined`` NUL-terminated and deflated, between pack and narrow
    packed_undefined: bytes | None = None  # ``undefined`` likewise (``pack_pairs``), until narrow

    def pack(self) -> None:
        """``defined`` as one small bytes object (a worker's result: one object, not one per name)."""
        if self.packed is None:
            self.packed, self.defined = pack_bytes(b"".join(n + b"\0" for n in self.defined)), frozenset()

    def defined_batches(self, size: int = 1 << 20) -> Iterator[Collection[bytes]]:
        """Every defined name, packed or not, in batches (never all at once as objects)."""
        return iter((self.defined,)) if self.packed is None else name_batches(self.packed, size)

    def unpack_undefined(self) -> list[tuple[bytes, str | None]]:  # (``narrow`` unpacks too)
        if self.packed_undefined is not None:
            self.undefined, self.packed_undefined = unpack_pairs(self.packed_undefined), None
        return self.undefined

    def narrow(self, keep: frozenset[bytes] | set[bytes]) -> None:
        """Keep only the defined names in ``keep`` (what the later rules can ask about)."""
        self.unpack_undefined()
        self.defined = frozenset(keep)
        self.defined_versions = {n: v for n, v in self.defined_versions.items() if n in keep}
        self.packed = None

    @property
    def is_gpu_code_object(self) -> bool:
        return self.machine == EM_AMDGPU

    @property
    def gpu_targets(self) -> tuple[str, ...]:
        """Distinct targets of the GPU code, by family then number (gfx90a before gfx1030);
        a mislabelled bundle entry (``CodeObject.label``) counts for none."""
        return tuple(sorted({c.target for c in self.gpu_code if not c.label}, key=sort_key))


def is_elf(head: bytes | memoryview) -> bool:
    return bytes(head[:4]) == ELF_MAGIC


def parse_header(img: Image) -> Header:
    ident = img.view(0, 16, "ELF identification")
    if bytes(ident[:4]) != ELF_MAGIC:
        raise ElfError("not an ELF file (bad magic)")
    cls, data = ident[4], ident[5]
    if cls not in (1, 2) or data not in (1, 2):
        raise ElfError(f"corrupt ELF: unknown class {cls} or data encoding {data}")
    e = "<" if data == 1 else ">"
    if cls == 2:
        raw = struct.unpack(e + "HHIQQQIHHHHHH", img.view(16, 48, "ELF header"))
    else:
        raw = struct.unpack(e + "HHIIIIIHHHHHH", img.view(16, 36, "ELF header"))
    etype, machine, _ver, _entry, phoff, shoff, flags, _eh, phes, phnum, shes, shnum, shstr = raw
    hdr = Header(
        elf_class=64 if cls == 2 else 32, little=data == 1, osabi=ident[7], abiversion=ident[8],
        type=etype, machine=machine, flags=flags, phoff=phoff, shoff=shoff, phentsize=phes,
        phnum=phnum, shentsize=shes, shnum=shnum, shstrndx=shstr,
    )
    if hdr.shoff and (hdr.shnum == 0 or hdr.shstrndx == SHN_XINDEX):
        # extended numbering (gABI, "Sections"): section 0's sh_size holds the section count,
        # its sh_link the index of the section name table
        sh0 = _section_header(img, hdr, 0)
        strndx = sh0[6] if hdr.shstrndx == SHN_XINDEX else hdr.shstrndx
        hdr = Header(**{**hdr.__dict__, "shnum": hdr.shnum or sh0[5], "shstrndx": strndx})
    return hdr


def _section_header(img: Image, hdr: Header, index: int) -> tuple[int, ...]:
    if hdr.elf_class == 64:
        fmt, size = hdr.endian + "IIQQQQIIQQ", 64
    else:
        fmt, size = hdr.endian + "IIIIIIIIII", 40
    if hdr.shentsize < size:
        raise ElfError(f"corrupt ELF: section header entry size {hdr.shentsize} < {size}")
    return struct.unpack(fmt, img.view(hdr.shoff + index * hdr.shentsize, size, "section header"))


def section_table_range(hdr: Header) -> tuple[int, int]:
    return hdr.shoff, hdr.shoff + hdr.shnum * hdr.shentsize


def segment_ranges(img: Image, hdr: Header, ptype: int, without_flags: int = 0) -> list[tuple[int, int]]:
    """File ranges of the program headers of one type (PT_DYNAMIC = 2, PT_LOAD = 1) whose
    flags have none of ``without_flags`` (PF_X = 1: not executable)."""
    fmt = hdr.endian + ("IIQQQQQQ" if hdr.elf_class == 64 else "IIIIIIII")
    size = struct.calcsize(fmt)
    if hdr.phentsize < size or hdr.phnum > 1 << 16:
        return []
    out = []
    for i in range(hdr.phnum):
        f = struct.unpack(fmt, img.view(hdr.phoff + i * hdr.phentsize, size, "program header"))
        off, filesz, flags = (f[2], f[5], f[1]) if hdr.elf_class == 64 else (f[1], f[4], f[6])
        if f[0] == ptype and not flags & without_flags:
            out.append((off, off + filesz))
    return out


def read_sections(img: Image, hdr: Header) -> list[Section]:
    if not hdr.shoff or not hdr.shnum:
        return []
    if hdr.shnum > 1 << 20:
        raise ElfError(f"corrupt ELF: {hdr.shnum} sections")
    start, end = section_table_range(hdr)
    img.view(start, end - start, "section header table")
    raw = [_section_header(img, hdr, i) for i in range(hdr.shnum)]
    # (name, type, flags, addr, offset, size, link, info, align, entsize)
    names: bytes = b""
    if 0 < hdr.shstrndx < len(raw):
        s = raw[hdr.shstrndx]
        if s[1] != SHT_NOBITS:
            names = bytes(img.view(s[4], s[5], "section name table"))
    table = Strings(names, "section name table")
    out = []
    for r in raw:
        name = table.text(r[0]) if names else ""
        size = 0 if r[1] == SHT_NOBITS else r[5]
        out.append(Section(name, r[1], r[4], size, r[6], r[7], r[9], r[2]))
    return out


def scan_ranges(sections: Iterable[Section], file_size: int) -> tuple[ScanRange, ...]:
    """Sections that may hold GPU code: ``.hip_fatbin`` and every other loaded section that
    is neither machine code nor a table the loader reads (non-loaded sections such as debug
    info cannot be used at run time). Raises ``ElfError`` for one lying past the end."""
    out = []
    for s in sections:
        fatbin = s.name == FATBIN_SECTION
        if not s.size or s.type in NOT_SCANNED or s.flags & SHF_EXECINSTR:
            continue
        if not fatbin and not s.flags & SHF_ALLOC:
            continue
        if s.offset + s.size > file_size:
            raise ElfError(f"truncated or corrupt ELF: section {s.name or '?'} lies past the end")
        out.append(ScanRange(s.name, s.offset, s.size))
    return tuple(sorted(out, key=lambda r: r.offset))


def _cstr(table: bytes, offset: int) -> bytes:
    return Strings(table).raw(offset)


def _str(table: bytes, offset: int) -> str:
    return Strings(table).text(offset)


def parse_elf(img: Image, pack: bool = False) -> ElfInfo:
    """Parse what the checks need. Raises ``ElfError`` or, for sparse images, ``NeedRanges``.

    ``pack``: the defined names come back packed (``ElfInfo.packed``), built without one
    object per name when the file defines no symbol versions (a worker's memory)."""
    hdr = parse_header(img)
    info = ElfInfo(machine=hdr.machine, elf_class=hdr.elf_class, type=hdr.type, flags=hdr.flags,
                   little=hdr.little)
    if hdr.machine == EM_AMDGPU:
        info.gpu_code = (CodeObject(_code_object_target(img, hdr), img.size, "file"),)
        return info
    sections = read_sections(img, hdr)
    if not sections:
        info.has_sections = False
        info.problems.append(
            "no section headers: its symbols, versions and GPU code cannot be read, so it "
            "cannot be judged"
        )
        return info
    by_type: dict[int, Section] = {}
    for s in sections:
        by_type.setdefault(s.type, s)
    info.problems += _table_problems(by_type, hdr)
    dynsym, dynamic = by_type.get(SHT_DYNSYM), by_type.get(SHT_DYNAMIC)
    img.require((s.offset, s.offset + s.size) for s in _read_parts(sections, by_type))

    def data(sec: Section) -> bytes:
        view = img.view(sec.offset, sec.size, sec.name or "section")
        whole = view.obj
        if isinstance(whole, bytes) and len(whole) == view.nbytes:  # a piece read for it: no copy
            return whole
        return bytes(view)

    tables: dict[int, Strings] = {}  # one budget per string table, however many tables use it

    def names(index: int) -> Strings:
        if index not in tables:
            tables[index] = Strings(data(sections[index]), sections[index].name or "string table")
        return tables[index]

    if dynamic is not None and 0 < dynamic.link < len(sections):
        _read_dynamic(info, data(dynamic), names(dynamic.link), hdr)
    if dynsym is not None and 0 < dynsym.link < len(sections):
        _read_dynsym(info, by_type, dynsym, names(dynsym.link), data, hdr, pack)
    info.kpack, skip = elf_kpack(sections, data, info.gpu_problems)
    info.scan = tuple(r for r in scan_ranges(sections, img.size) if r.name not in skip)
    return info


def _read_parts(sections: list[Section], by_type: Mapping[int, Section]) -> list[Section]:
    """The sections ``parse_elf`` reads: the dynamic symbols and section, their string tables,
    the symbol versions."""
    dynsym, dynamic = by_type.get(SHT_DYNSYM), by_type.get(SHT_DYNAMIC)
    linked = [sections[s.link] for s in (dynsym, dynamic) if s and 0 < s.link < len(sections)]
    parts = [s for s in (dynsym, dynamic, *linked) if s]
    parts += [by_type[t] for t in (SHT_VERSYM, SHT_VERNEED, SHT_VERDEF) if t in by_type]
    return parts + wanted(sections)


def _read_dynsym(info: ElfInfo, by_type: Mapping[int, Section], dynsym: Section, strtab: Strings,
                 data: Callable[[Section], bytes], hdr: Header, pack: bool) -> None:
    """The dynamic symbols with their versions (needed and defined)."""
    e = hdr.endian
    vneed = by_type.get(SHT_VERNEED)
    vdef = by_type.get(SHT_VERDEF)
    need_idx = _read_verneed(info, data(vneed), strtab, e, vneed.info) if vneed else {}
    def_idx = _read_verdef(info, data(vdef), strtab, e, vdef.info) if vdef else {}
    versym = by_type.get(SHT_VERSYM)
    versym_raw = data(versym) if versym else b""
    _read_symbols(info, data(dynsym), strtab, versym_raw, hdr, need_idx, def_idx, pack)


def _code_object_target(img: Image, hdr: Header) -> str:
    """A code object's target: its header's, or (a v2 object) its ISA note's."""
    target = amdgpu_target(hdr.flags, hdr.abiversion)
    if needs_note(target, hdr.abiversion) and img.size <= V2_MAX_BYTES:
        target = note_target(img.view(0, img.size, "code object")) or target
    return target


def _table_problems(by_type: Mapping[int, Section], hdr: Header) -> list[str]:
    """Why a section table cannot be judged: all SHT_NULL, or a shared object without
    a dynamic section."""
    if set(by_type) == {0}:
        return ["its section header table is empty (every entry SHT_NULL): it cannot be judged"]
    if hdr.type == ET_DYN and SHT_DYNAMIC not in by_type:
        return ["a shared object without a dynamic section: it cannot be judged"]
    return []


def _read_dynamic(info: ElfInfo, raw: bytes, strtab: bytes | Strings, hdr: Header) -> None:
    dyn = read_dynamic(raw, strings(strtab), hdr.endian, hdr.elf_class)
    info.needed, info.rpath, info.runpath = dyn.needed, dyn.rpath, dyn.runpath
    if dyn.soname is not None:
        info.soname = dyn.soname


def _read_verneed(
    info: ElfInfo, raw: bytes, strtab: bytes | Strings, e: str, count: int
) -> dict[int, tuple[str, str]]:
    """Version index -> (version name, file) from ``.gnu.version_r``."""
    out, info.version_needs = read_verneed(raw, strings(strtab), e, count)
    return out


def _read_verdef(info: ElfInfo, raw: bytes, strtab: bytes | Strings, e: str, count: int) -> dict[int, str]:
    """Version index -> version name from ``.gnu.version_d`` (the base version excluded)."""
    out = read_verdef(raw, strings(strtab), e, count)
    info.version_defs = frozenset(out.values())
    return out


def _read_symbols(
    info: ElfInfo,
    raw: bytes,
    strtab: bytes | Strings,
    versym_raw: bytes,
    hdr: Header,
    need_idx: Mapping[int, tuple[str, str]],
    def_idx: Mapping[int, str],
    pack: bool = False,
) -> None:
    fmt, size, i_name, i_info, i_other, i_shndx = symbol_layout(hdr.elf_class, hdr.endian)
    raw = raw[: len(raw) - len(raw) % size]
    versym = version_entries(versym_raw, hdr.little)
    info.has_versym = bool(versym)
    versym.extend([0] * (len(raw) // size - len(versym)))  # a symbol past the table: version 0
    undefined: list[tuple[bytes, str | None]] = []
    defined: set[bytes] = set()
    as_set = not pack or bool(def_idx)  # the version bookkeeping below asks "defined before?"
    blob = bytearray()
    dver: dict[bytes, list[str]] = {}
    table = strings(strtab)
    data = table.data
    find = data.find
    slen = len(data)
    spent = 0  # bytes of names read (``Strings``' budget, kept here for speed)
    for i, sym in enumerate(struct.iter_unpack(fmt, raw)):
        name_off = sym[i_name]
        if not name_off:
            continue
        bind = sym[i_info] >> 4
        if name_off >= slen or (end := find(b"\0", name_off)) < 0:
            raise ElfError(f"corrupt ELF: symbol name offset {name_off} outside .dynstr")
        spent += end - name_off
        if spent > table.left:
            table.spend(spent)
        name = data[name_off:end]
        ver = versym[i] & 0x7FFF
        if sym[i_shndx] == 0:  # undefined
            if bind == STB_GLOBAL:
                undefined.append((name, _needed_version(need_idx, ver)))
            continue
        if bind in (STB_GLOBAL, STB_WEAK, STB_GNU_UNIQUE) and sym[i_other] & 3 in (0, 3):
            if name in dver or ver in def_idx:
                add_version(dver, name, def_idx.get(ver, ""), name in defined)
            if as_set:
                defined.add(name)
            else:
                blob += name
                blob += b"\0"
    table.spend(spent)
    _keep_symbols(info, undefined, defined, dver, None if as_set else blob, pack)


def _needed_version(need_idx: Mapping[int, tuple[str, str]], ver: int) -> str | None:
    return need_idx[ver][0] if ver in need_idx else None


def _keep_symbols(info: ElfInfo, undefined: list[tuple[bytes, str | None]], defined: set[bytes],
                  dver: dict[bytes, list[str]], blob: bytearray | None, pack: bool) -> None:
    """Store what ``_read_symbols`` read; ``blob``: the defined names, packed (else a set)."""
    info.undefined = undefined
    info.defined = frozenset(defined)
    info.defined_versions = {k: tuple(v) for k, v in dver.items()}
    if pack:
        info.packed_undefined, info.undefined = pack_pairs(undefined), []
        info.packed = None if blob is None else pack_bytes(blob)
        info.pack()  # (when built as a set)


def read_elf_bytes(data: bytes | bytearray | memoryview, pack: bool = False) -> ElfInfo:
    """Parse a whole in-memory ELF file, GPU code included."""
    from toolkit.inspect.readers.gpuscan import scan

    view = memoryview(data)
    info = parse_elf(Image.whole(view), pack)
    if info.scan:
        found = scan(info.scan, lambda a, b: [bytes(view[a:b])])
        info.gpu_code, info.scan = tuple(found.objects), ()
        info.gpu_problems += found.problems
    return info
