"""Program headers and version definitions read as binutils' readelf reads them (64- and
32-bit files), and ``.gnu.version_d`` chains laid out by hand from the ELF gABI / LSB
(Elfxx_Verdef: 20 bytes, vd_flags VER_FLG_BASE = 1; Elfxx_Verdaux: 8 bytes)."""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from toolkit.core.errors import ElfError
from toolkit.inspect.readers import members
from toolkit.inspect.readers.elf import (
    ElfInfo,
    Image,
    _read_verdef,
    parse_header,
    read_sections,
    segment_ranges,
)
from toolkit.inspect.readers.members import load_file

pytestmark = pytest.mark.skipif(shutil.which("readelf") is None, reason="needs readelf")

FILES = [p for p in (Path("/usr/lib/x86_64-linux-gnu/libc.so.6"), Path("/usr/lib32/libc.so.6"),
                     Path("/bin/true")) if p.exists()]


def _readelf(*args: str) -> str:
    return subprocess.run(["readelf", *args], capture_output=True, text=True, check=True).stdout


def _segments(path: Path) -> list[tuple[str, int, int, str]]:
    """(type, offset, filesz, flags) per program header, from ``readelf -lW``."""
    out = []
    for line in _readelf("-lW", str(path)).splitlines():
        m = re.match(r"\s+([A-Z_]+|LOOS\+\w+)\s+0x([0-9a-f]+)\s+0x[0-9a-f]+\s+0x[0-9a-f]+\s+"
                     r"0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+([RWE ]+?)\s+0x", line)
        if m:
            out.append((m.group(1), int(m.group(2), 16), int(m.group(3), 16), m.group(5)))
    return out


@pytest.mark.parametrize("path", FILES, ids=str)
def test_segment_ranges_are_the_program_headers_readelf_lists(path: Path) -> None:
    data = path.read_bytes()
    img = Image.whole(data)
    hdr = parse_header(img)
    segs = _segments(path)
    loads = [(o, o + s) for t, o, s, _ in segs if t == "LOAD"]
    assert len(loads) >= 2
    assert segment_ranges(img, hdr, 1) == loads
    # not executable: the loads without E
    assert segment_ranges(img, hdr, 1, without_flags=1) == [
        (o, o + s) for t, o, s, fl in segs if t == "LOAD" and "E" not in fl]
    assert segment_ranges(img, hdr, 2) == [(o, o + s) for t, o, s, _ in segs if t == "DYNAMIC"]


def test_a_writable_segment_ends_at_its_file_size_not_its_memory_size() -> None:
    path = Path("/usr/lib/x86_64-linux-gnu/libc.so.6")
    rows = [line.split() for line in _readelf("-lW", str(path)).splitlines()
            if line.strip().startswith("LOAD") and " RW " in line]
    assert rows and int(rows[0][4], 16) != int(rows[0][5], 16)  # .bss: memsz > filesz
    img = Image.whole(path.read_bytes())
    off, filesz = int(rows[0][1], 16), int(rows[0][4], 16)
    assert (off, off + filesz) in segment_ranges(img, parse_header(img), 1)


@pytest.mark.parametrize("path", FILES[:2], ids=str)
def test_version_definitions_are_those_readelf_lists(path: Path) -> None:
    text = _readelf("-VW", str(path))
    section = text.split("Version definition section")[1].split("Version needs section")[0]
    names = re.findall(r"Name: (\S+)", section)
    flags = re.findall(r"Flags: (\w+)", section)
    # the first definition (Flags: BASE) names the file itself, not a version
    assert flags[0] == "BASE"
    want = {n for n, f in zip(names, flags, strict=False) if f != "BASE"}
    assert "GLIBC_2.0" in want or "GLIBC_2.2.5" in want
    assert load_file(path).version_defs == want


def _verdef(flags: int, ndx: int, cnt: int, aux: int, nxt: int) -> bytes:
    return struct.pack("<HHHHIII", 1, flags, ndx, cnt, 0, aux, nxt)


STRTAB = b"\0libdemo.so\0DEMO_1.0\0DEMO_2.0\0"


def _info() -> ElfInfo:
    return ElfInfo(machine=62, elf_class=64, type=3)


def test_a_hand_made_chain_reads_its_versions_and_skips_the_base() -> None:
    raw = (_verdef(1, 1, 1, 20, 28) + struct.pack("<II", 1, 0)      # the file itself
           + _verdef(0, 2, 1, 20, 28) + struct.pack("<II", 12, 0)   # DEMO_1.0
           + _verdef(0, 0x8003, 1, 20, 0) + struct.pack("<II", 21, 0))  # DEMO_2.0, hidden bit
    info = _info()
    assert _read_verdef(info, raw, STRTAB, "<", 3) == {2: "DEMO_1.0", 3: "DEMO_2.0"}
    assert info.version_defs == {"DEMO_1.0", "DEMO_2.0"}
    # vd_cnt 0: a definition without a name is skipped; the count bounds the chain
    assert _read_verdef(_info(), _verdef(0, 2, 0, 20, 0), STRTAB, "<", 1) == {}
    assert _read_verdef(_info(), raw, STRTAB, "<", 2) == {2: "DEMO_1.0"}


def test_a_last_definition_ending_at_the_section_end_is_read() -> None:
    # a definition, its aux entry, then a nameless last definition whose 20 bytes end the data
    exact = _verdef(0, 2, 1, 20, 28) + struct.pack("<II", 12, 0) + _verdef(0, 3, 0, 0, 0)
    assert len(exact) == 48
    assert _read_verdef(_info(), exact, STRTAB, "<", 2) == {2: "DEMO_1.0"}
    with pytest.raises(ElfError, match=r"^corrupt ELF: \.gnu\.version_d entry out of bounds$"):
        _read_verdef(_info(), exact[:-1], STRTAB, "<", 2)


@pytest.mark.parametrize("aux", [20, 21, 1 << 20])
def test_an_aux_entry_past_the_section_is_named(aux: int) -> None:
    raw = _verdef(0, 2, 1, aux, 0) + b"\0" * 7  # 27 bytes: an aux at 20 needs 28
    with pytest.raises(ElfError, match=r"^corrupt ELF: \.gnu\.version_d aux entry out of bounds$"):
        _read_verdef(_info(), raw, STRTAB, "<", 1)
    assert _read_verdef(_info(), _verdef(0, 2, 1, 20, 0) + struct.pack("<II", 21, 0), STRTAB,
                        "<", 1) == {2: "DEMO_2.0"}  # 28 bytes: the aux fits exactly


def _header_fields(path: Path) -> dict[str, int]:
    text = _readelf("-hW", str(path))
    get = {k.strip(): v.strip() for k, _, v in (ln.partition(":") for ln in text.splitlines()) if v}

    def num(key: str) -> int:
        return int(get[key].split()[0], 0)

    return {"phoff": num("Start of program headers"), "shoff": num("Start of section headers"),
            "flags": num("Flags"), "phentsize": num("Size of program headers"),
            "phnum": num("Number of program headers"), "shentsize": num("Size of section headers"),
            "shnum": num("Number of section headers"),
            "shstrndx": num("Section header string table index"),
            "elf_class": 64 if get["Class"] == "ELF64" else 32,
            "type": {"EXEC": 2, "DYN": 3}[get["Type"].split()[0]],
            "machine": {"Advanced Micro Devices X86-64": 62, "Intel 80386": 3}[get["Machine"]],
            "little": get["Data"].startswith("2's complement, little endian")}


@pytest.mark.parametrize("path", FILES, ids=str)
def test_the_header_and_sections_are_those_readelf_shows(path: Path) -> None:
    img = Image.whole(path.read_bytes())
    hdr = parse_header(img)
    assert {k: getattr(hdr, k) for k in _header_fields(path)} == _header_fields(path)
    rows = []
    for line in _readelf("-SW", str(path)).splitlines():
        m = re.match(r"\s+\[\s*\d+\]\s+(\S*)\s+(\S+)\s+[0-9a-f]+\s+([0-9a-f]+)\s+([0-9a-f]+)\s+"
                     r"([0-9a-f]+)\s+([A-Za-z]*)\s+(\d+)\s+(\d+)\s+\d+$", line)
        if m:
            rows.append(m.groups())
    sections = read_sections(img, hdr)
    assert len(rows) == len(sections) == hdr.shnum
    for s, (name, typ, off, size, es, _flg, lk, inf) in zip(sections[1:], rows[1:], strict=True):
        assert (s.name, s.offset, s.link, s.info, s.entsize) == (
            name, int(off, 16), int(lk), int(inf), int(es, 16))
        assert s.size == (0 if typ == "NOBITS" else int(size, 16))  # .bss holds no file bytes


@pytest.mark.parametrize("path", FILES, ids=str)
def test_a_members_first_chunk_names_the_ranges_to_keep(path: Path) -> None:
    data = path.read_bytes()
    hdr = _header_fields(path)
    segs = _segments(path)
    dyn = [(o, o + s) for t, o, s, _ in segs if t == "DYNAMIC"]
    table = (max(0, hdr["shoff"] - members.TAIL_KEEP), hdr["shoff"] + hdr["shnum"] * hdr["shentsize"])
    assert members._header_ranges(data[:4096], len(data)) == [*dyn, table]
    # a member declared shorter than the table: every range cut at its end
    cut = hdr["shoff"] + 10
    assert members._header_ranges(data[:4096], cut) == [*dyn, (table[0], cut)]
    assert members._header_ranges(b"not an ELF file" * 10, 150) == []
    assert members._header_ranges(data[:10], len(data)) == []  # the header is not all there
    # read-only data segments (neither executable nor writable) are where GPU code is noted
    readonly = [(o, o + s) for t, o, s, fl in segs if t == "LOAD" and fl.strip() == "R"]
    assert readonly  # the ELF header's own segment at least
    assert members._start_hits(data[:4096], members.HITS_MIN - 1) is None  # too small to bother
    hits = members._start_hits(data[:4096], members.HITS_MIN)
    assert hits is not None and hits.ranges == readonly
    assert members._start_hits(b"\0" * 100, members.HITS_MIN) is None


def _with_phdrs(elf_class: int, phdrs: list[tuple[int, int, int, int, int]], phentsize: int = 0) -> Image:
    """An ELF header and program headers laid out from the gABI: (type, offset, vaddr, filesz,
    flags) each, memsz twice filesz, the virtual addresses unlike the offsets."""
    if elf_class == 64:
        ent, ident = 56, b"\x7fELF" + bytes([2, 1, 1]) + bytes(9)
        head = ident + struct.pack("<HHIQQQIHHHHHH", 3, 62, 1, 0, 64, 0, 0, 64, phentsize or ent,
                                   len(phdrs), 64, 0, 0)
        body = b"".join(struct.pack("<IIQQQQQQ", t, fl, off, va, va, fs, 2 * fs, 8)
                        for t, off, va, fs, fl in phdrs)
    else:
        ent, ident = 32, b"\x7fELF" + bytes([1, 1, 1]) + bytes(9)
        head = ident + struct.pack("<HHIIIIIHHHHHH", 3, 3, 1, 0, 52, 0, 0, 52, phentsize or ent,
                                   len(phdrs), 40, 0, 0)
        body = b"".join(struct.pack("<IIIIIIII", t, off, va, va, fs, 2 * fs, fl, 4)
                        for t, off, va, fs, fl in phdrs)
    return Image.whole(head + body)


@pytest.mark.parametrize("elf_class", [32, 64])
def test_hand_made_program_headers_give_file_ranges(elf_class: int) -> None:
    big = (1 << 31) if elf_class == 32 else (1 << 63)  # unsigned fields (gABI)
    img = _with_phdrs(elf_class, [(1, 0x100, 0x8100, 0x40, 5), (2, 0x200, 0xA200, 0x10, 6),
                                  (1, big, 0x1000, 0x20, 4)])
    hdr = parse_header(img)
    assert segment_ranges(img, hdr, 1) == [(0x100, 0x140), (big, big + 0x20)]
    assert segment_ranges(img, hdr, 1, without_flags=1) == [(big, big + 0x20)]  # PF_X = 1
    assert segment_ranges(img, hdr, 2) == [(0x200, 0x210)]
    assert segment_ranges(img, hdr, 2, without_flags=2) == []  # PF_W = 2
    short = _with_phdrs(elf_class, [(1, 0x100, 0x8100, 0x40, 5)], phentsize=16)
    assert segment_ranges(short, parse_header(short), 1) == []  # entries smaller than the format
