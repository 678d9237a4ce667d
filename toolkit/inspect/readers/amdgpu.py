"""AMDGPU code objects: the target id (``gfx90a:xnack+``) a code object's ELF header names.

The processor is ``e_flags & EF_AMDGPU_MACH``; the xnack/sramecc settings are further
``e_flags`` bits whose meaning depends on the code object version (``EI_ABIVERSION``).
Code object v2 (``EI_ABIVERSION`` 0) leaves ``EF_AMDGPU_MACH`` zero and names its ISA in an
``"AMD"`` note instead (LLVM AMDGPUUsage, "Code Object V2 Note Records"):
``NT_AMD_HSA_ISA_VERSION`` (3: vendor/architecture name sizes, then major, minor, stepping)
or ``NT_AMD_HSA_ISA_NAME`` (11: a target triple such as ``amdgcn-amd-amdhsa--gfx900+xnack``).
"""

from __future__ import annotations

import struct

# EF_AMDGPU_MACH_* (LLVM BinaryFormat/ELF.h, AMDGPUUsage "AMDGPU EF_AMDGPU_MACH Values").
AMDGPU_MACH: dict[int, str] = {
    0x20: "gfx600",
    0x21: "gfx601",
    0x22: "gfx700",
    0x23: "gfx701",
    0x24: "gfx702",
    0x25: "gfx703",
    0x26: "gfx704",
    0x28: "gfx801",
    0x29: "gfx802",
    0x2A: "gfx803",
    0x2B: "gfx810",
    0x2C: "gfx900",
    0x2D: "gfx902",
    0x2E: "gfx904",
    0x2F: "gfx906",
    0x30: "gfx908",
    0x31: "gfx909",
    0x32: "gfx90c",
    0x33: "gfx1010",
    0x34: "gfx1011",
    0x35: "gfx1012",
    0x36: "gfx1030",
    0x37: "gfx1031",
    0x38: "gfx1032",
    0x39: "gfx1033",
    0x3A: "gfx602",
    0x3B: "gfx705",
    0x3C: "gfx805",
    0x3D: "gfx1035",
    0x3E: "gfx1034",
    0x3F: "gfx90a",
    0x40: "gfx940",
    0x41: "gfx1100",
    0x42: "gfx1013",
    0x43: "gfx1150",
    0x44: "gfx1103",
    0x45: "gfx1036",
    0x46: "gfx1101",
    0x47: "gfx1102",
    0x48: "gfx1200",
    0x49: "gfx1250",
    0x4A: "gfx1151",
    0x4B: "gfx941",
    0x4C: "gfx942",
    0x4E: "gfx1201",
    0x4F: "gfx950",
    0x50: "gfx1310",
    0x51: "gfx9-generic",
    0x52: "gfx10-1-generic",
    0x53: "gfx10-3-generic",
    0x54: "gfx11-generic",
    0x55: "gfx1152",
    0x57: "gfx1154",
    0x58: "gfx1153",
    0x59: "gfx12-generic",
    0x5A: "gfx1251",
    0x5B: "gfx12-5-generic",
    0x5C: "gfx1172",
    0x5D: "gfx1170",
    0x5E: "gfx1171",
    0x5F: "gfx9-4-generic",
}
ELFABIVERSION_AMDGPU_HSA_V3, ELFABIVERSION_AMDGPU_HSA_V4 = 1, 2


def amdgpu_target(flags: int, abiversion: int) -> str:
    """The target id (``gfx90a:xnack+``) of an AMDGPU code object from ``e_flags``."""
    mach = flags & 0xFF
    name = AMDGPU_MACH.get(mach, f"unknown-amdgpu-mach-0x{mach:02x}")
    feats: list[str] = []
    if abiversion >= ELFABIVERSION_AMDGPU_HSA_V4:
        sram = {0x800: "sramecc-", 0xC00: "sramecc+"}.get(flags & 0xC00)
        xnack = {0x200: "xnack-", 0x300: "xnack+"}.get(flags & 0x300)
        feats = [f for f in (sram, xnack) if f]
    elif abiversion == ELFABIVERSION_AMDGPU_HSA_V3:
        feats = [f for bit, f in ((0x200, "sramecc+"), (0x100, "xnack+")) if flags & bit]
    return ":".join([name, *feats])


EM_AMDGPU = 224
ELFOSABI_AMDGPU_HSA = 64
ELF64_HEADER = 64
SHT_NOTE = 7
NT_AMD_HSA_ISA_VERSION, NT_AMD_HSA_ISA_NAME = 3, 11
V2_MAX_BYTES = 64 << 20  # a v2 code object read whole to find its note (the runtime's are ~15 KiB)


def needs_note(target: str, abiversion: int) -> bool:
    """A code object v2 whose header names no processor: its ISA is in a note."""
    return abiversion == 0 and target.startswith("unknown-amdgpu-mach-0x00")


def _align4(n: int) -> int:
    return (n + 3) & ~3


def note_target(obj: bytes | bytearray | memoryview) -> str | None:
    """The target a code object's ``"AMD"`` ISA note names (None when it has none or the
    object is malformed); every offset is bounds-checked, and note sections that overlap make
    it malformed (each note is read once: linear time, however many sections there are)."""
    data = bytes(obj)
    notes = _note_sections(data)
    if notes is None:
        return None
    found: str | None = None
    for pos, end in notes:
        found = _notes_isa(data, pos, end, found)
    return found


def _note_sections(data: bytes) -> list[tuple[int, int]] | None:
    """(start, end) of each note section inside ``data``; None when the section table is
    malformed or note sections overlap."""
    if len(data) < ELF64_HEADER:
        return None
    shoff = struct.unpack_from("<Q", data, 40)[0]
    shentsize, shnum = struct.unpack_from("<HH", data, 58)
    if shentsize != 64 or shoff + shnum * 64 > len(data):
        return None
    notes = []
    for i in range(shnum):
        stype, _f, _a, off, size = struct.unpack_from("<IQQQQ", data, shoff + i * 64 + 4)
        if stype == SHT_NOTE and off + size <= len(data):
            notes.append((off, off + size))
    ordered = sorted(notes)
    if any(b > c for (_, b), (c, _) in zip(ordered, ordered[1:], strict=False)):
        return None  # note sections overlapping: each note is read once (linear time)
    return notes


def _notes_isa(data: bytes, pos: int, end: int, found: str | None) -> str | None:
    """The ISA the ``"AMD"`` notes in ``data[pos:end]`` name (an ISA name note wins over a
    version note), else ``found``."""
    while pos + 12 <= end:
        namesz, descsz, ntype = struct.unpack_from("<III", data, pos)
        name_at = pos + 12
        desc_at = name_at + _align4(namesz)
        if desc_at + descsz > end:
            break
        if data[name_at:name_at + namesz].rstrip(b"\0") == b"AMD":
            got = _isa(ntype, data[desc_at:desc_at + descsz])
            if got is not None and (found is None or ntype == NT_AMD_HSA_ISA_NAME):
                found = got
        pos = desc_at + _align4(descsz)
    return found


def _isa(ntype: int, desc: bytes) -> str | None:
    if ntype == NT_AMD_HSA_ISA_VERSION and len(desc) >= 16:
        major, minor, stepping = struct.unpack_from("<III", desc, 4)
        if major and major < 100 and minor < 16 and stepping < 16:
            return f"gfx{major}{minor:x}{stepping:x}"
        return None
    if ntype == NT_AMD_HSA_ISA_NAME:
        text = desc.rstrip(b"\0").decode("ascii", "replace")
        proc = text.rpartition("-")[2]
        name, *feats = proc.split("+")
        if not name.startswith("gfx") or not name[3:].isalnum():
            return None
        return ":".join([name, *(f"{f}+" for f in feats if f in ("xnack", "sramecc"))])
    return None


def _hsa_ident(head: bytes | bytearray) -> bool:
    """An ELF header's identification: 64-bit little-endian, version 1, the HSA OS ABI."""
    if len(head) < ELF64_HEADER or bytes(head[:4]) != b"\x7fELF":
        return False
    return not (head[4] != 2 or head[5] != 1 or head[6] != 1 or head[7] != ELFOSABI_AMDGPU_HSA)


def code_object_at(head: bytes | bytearray, room: int) -> tuple[str, int] | None:
    """(target id, bytes) of an AMDGPU code object whose ELF header starts ``head``, or None.

    Every header field is validated before the object counts (a ``\\x7fELF`` inside other
    data is not a code object): 64-bit little-endian ELF version 1 for the HSA OS ABI,
    e_machine EM_AMDGPU, a shared object or relocatable, header and table entry sizes as
    the ELF64 format has them, and section/program header tables inside the ``room`` bytes
    left (its size is the end of the furthest table).
    """
    if not _hsa_ident(head):
        return None
    e_type, machine, version = struct.unpack_from("<HHI", head, 16)
    if machine != EM_AMDGPU or e_type not in (1, 3) or version != 1:
        return None
    phoff, shoff, flags, ehsize, phentsize, phnum, shentsize, shnum = struct.unpack_from(
        "<QQIHHHHH", head, 32
    )
    if ehsize != ELF64_HEADER or (phnum and phentsize != 56) or (shnum and shentsize != 64):
        return None
    end = max(ELF64_HEADER, phoff + phnum * phentsize, shoff + shnum * shentsize)
    if end > room or (phnum and phoff < ELF64_HEADER) or (shnum and shoff < ELF64_HEADER):
        return None
    return amdgpu_target(flags, head[8]), end
