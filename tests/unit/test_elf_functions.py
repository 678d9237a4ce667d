"""Whole-function tests of toolkit.inspect.readers.elf's table readers: string tables (gABI
"String Table": NUL-terminated names at byte offsets) and the dynamic section (Elf64_Dyn
``d_tag`` sxword + ``d_val`` xword, Elf32_Dyn sword + word; DT_NULL ends it), against
binutils' readelf on gcc-built libraries and hand-computed bytes."""

from __future__ import annotations

import re
import struct
from pathlib import Path

import pytest

from tests.fixtures.handmade_elf import EM_X86_64, shared_object
from tests.fixtures.native import compile_shared
from tests.fixtures.sparse import parse_in_rounds
from toolkit.core.errors import ElfError
from toolkit.core.proc import run
from toolkit.inspect.checks import _kind
from toolkit.inspect.readers.elf import (
    ElfInfo,
    Header,
    Image,
    _cstr,
    _read_dynamic,
    _str,
    parse_header,
    read_elf_bytes,
    read_sections,
)

TABLE = b"\0libfoo.so\0a:b\0"  # offsets: 0 "", 1 "libfoo.so", 4 "foo.so", 11 "a:b", 14 ""


@pytest.mark.parametrize(("offset", "text"), [(0, b""), (1, b"libfoo.so"), (4, b"foo.so"), (11, b"a:b"),
                                              (13, b"b"), (14, b"")])
def test_a_string_runs_from_its_offset_to_the_next_nul(offset: int, text: bytes) -> None:
    assert _cstr(TABLE, offset) == text
    assert _str(TABLE, offset) == text.decode()


@pytest.mark.parametrize("offset", [-1, -15, 15, 16, 1 << 40])
def test_an_offset_outside_the_table_is_named(offset: int) -> None:
    for read in (_cstr, _str):
        with pytest.raises(ElfError) as err:
            read(TABLE, offset)
        assert str(err.value) == f"corrupt ELF: string offset {offset} outside its table (15 bytes)"


def test_a_string_without_its_nul_is_outside_the_table() -> None:
    with pytest.raises(ElfError) as err:
        _cstr(b"\0abc", 1)
    assert str(err.value) == "corrupt ELF: string offset 1 outside its table (4 bytes)"
    with pytest.raises(ElfError):
        _cstr(b"", 0)


def _hdr(elf_class: int, little: bool) -> Header:
    return Header(elf_class, little, 0, 0, 3, 62, 0, 0, 0, 0, 0, 0, 0, 0)


@pytest.mark.parametrize(("elf_class", "little"), [(64, True), (64, False), (32, True), (32, False)])
def test_the_dynamic_section_is_read_until_dt_null(elf_class: int, little: bool) -> None:
    e = "<" if little else ">"
    fmt = e + ("qQ" if elf_class == 64 else "iI")
    strtab = b"\0liba.so\0libb.so\0libme.so.1\0$ORIGIN::/opt\0/x:\0/late.so\0"
    # offsets: liba 1, libb 9, libme 17, rpath 28, runpath 42, late 46
    entries = [(1, 1), (0x6FFFFFF0, 5), (1, 9), (14, 17), (15, 28), (29, 42), (15, 42), (12, 999),
               (0, 0), (1, 46), (14, 46)]
    raw = b"".join(struct.pack(fmt, t, v) for t, v in entries) + b"\x01\x02\x03"  # a cut entry
    info = ElfInfo(machine=62, elf_class=elf_class, type=3)
    _read_dynamic(info, raw, strtab, _hdr(elf_class, little))
    assert info.needed == ("liba.so", "libb.so")
    assert info.soname == "libme.so.1"
    assert info.rpath == ("$ORIGIN", "", "/opt", "/x", "")  # two DT_RPATH entries, empty kept
    assert info.runpath == ("/x", "")


def test_a_dynamic_section_without_dt_null_or_entries() -> None:
    info = ElfInfo(machine=62, elf_class=64, type=3, soname="kept")
    _read_dynamic(info, struct.pack("<qQ", 1, 1), b"\0liba.so\0", _hdr(64, True))
    assert info.needed == ("liba.so",) and info.soname == "kept"
    _read_dynamic(info, b"\0" * 15, b"\0", _hdr(64, True))  # shorter than one entry: nothing
    assert (info.needed, info.rpath, info.runpath, info.soname) == ((), (), (), "kept")
    # a negative 32-bit tag (DT_LOPROC range as signed) is not DT_NULL and not known
    _read_dynamic(info, struct.pack("<iIiI", -1, 1, 1, 1), b"\0liba.so\0", _hdr(32, True))
    assert info.needed == ("liba.so",)


def _readelf_dynamic(path: Path) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for line in run(["readelf", "-d", "-W", str(path)]).stdout.splitlines():
        m = re.search(r"\((NEEDED|SONAME|RPATH|RUNPATH)\)\s+[^\[]*\[([^\]]*)\]", line)
        if m:
            out.setdefault(m.group(1), []).append(m.group(2))
    return out


@pytest.mark.parametrize("kind", ["rpath", "runpath"])
def test_a_built_librarys_dynamic_section_is_what_readelf_shows(tmp_path: Path, kind: str) -> None:
    path = "$ORIGIN/../lib::/opt/rocm/lib"
    lib = compile_shared(tmp_path, "libdyn.so", "#include <math.h>\ndouble f(double x) { return sin(x); }\n",
                         lang="c", flags=["-lm", "-lz"] if Path("/usr/lib/x86_64-linux-gnu/libz.so").exists()
                         else ["-lm"], soname="libdyn.so.2", **{kind: path})
    want = _readelf_dynamic(lib)
    info = read_elf_bytes(lib.read_bytes())
    assert list(info.needed) == want["NEEDED"] and "libm.so.6" in info.needed
    assert [info.soname] == want["SONAME"] == ["libdyn.so.2"]
    got = info.rpath if kind == "rpath" else info.runpath
    other = info.runpath if kind == "rpath" else info.rpath
    assert [":".join(got)] == want[kind.upper()] and got == ("$ORIGIN/../lib", "", "/opt/rocm/lib")
    assert other == ()


# Elf64_Verneed / Elf32_Verneed (16 bytes): vn_version u16, vn_cnt u16, vn_file u32, vn_aux u32,
# vn_next u32; Vernaux (16 bytes): vna_hash u32, vna_flags u16, vna_other u16, vna_name u32,
# vna_next u32. vna_other is the index .gnu.version uses (bit 15: hidden).
NEED_STR = b"\0libc.so.6\0GLIBC_2.2.5\0GLIBC_2.34\0libm.so.6\0GLIBC_2.29\0"
# offsets: libc.so.6 1, GLIBC_2.2.5 11, GLIBC_2.34 23, libm.so.6 34, GLIBC_2.29 44


def _need(e: str, cnt: int, file: int, aux: int, nxt: int) -> bytes:
    return struct.pack(e + "HHIII", 1, cnt, file, aux, nxt)


def _aux(e: str, other: int, name: int, nxt: int) -> bytes:
    return struct.pack(e + "IHHII", 0x1234, 0, other, name, nxt)


def _chain(e: str) -> bytes:
    return (_need(e, 2, 1, 16, 48) + _aux(e, 2, 11, 16) + _aux(e, 0x8003, 23, 0)
            + _need(e, 1, 34, 16, 0) + _aux(e, 4, 44, 0))


@pytest.mark.parametrize("e", ["<", ">"])
def test_version_needs_are_read_per_file_in_chain_order(e: str) -> None:
    from toolkit.inspect.readers.elf import _read_verneed

    info = ElfInfo(machine=62, elf_class=64, type=3)
    got = _read_verneed(info, _chain(e), NEED_STR, e, 2)
    assert got == {2: ("GLIBC_2.2.5", "libc.so.6"), 3: ("GLIBC_2.34", "libc.so.6"),
                   4: ("GLIBC_2.29", "libm.so.6")}
    assert info.version_needs == {"libc.so.6": ("GLIBC_2.2.5", "GLIBC_2.34"), "libm.so.6": ("GLIBC_2.29",)}
    # sh_info counts the Verneed entries: 1 reads only libc's; 0 (unset) follows the chain
    one = ElfInfo(machine=62, elf_class=64, type=3)
    assert _read_verneed(one, _chain(e), NEED_STR, e, 1) == {2: ("GLIBC_2.2.5", "libc.so.6"),
                                                             3: ("GLIBC_2.34", "libc.so.6")}
    assert one.version_needs == {"libc.so.6": ("GLIBC_2.2.5", "GLIBC_2.34")}
    assert _read_verneed(ElfInfo(machine=62, elf_class=64, type=3), _chain(e), NEED_STR, e, 0) == got


def test_vn_cnt_and_the_next_links_bound_the_aux_entries() -> None:
    from toolkit.inspect.readers.elf import _read_verneed

    # vn_cnt 1: the second aux is not read although the first links to it
    raw = _need("<", 1, 1, 16, 0) + _aux("<", 2, 11, 16) + _aux("<", 3, 23, 0)
    assert _read_verneed(ElfInfo(machine=62, elf_class=64, type=3), raw, NEED_STR, "<", 1) == {
        2: ("GLIBC_2.2.5", "libc.so.6")}
    # vna_next 0 ends the list before vn_cnt does; vn_cnt 0 reads none
    raw = _need("<", 5, 1, 16, 0) + _aux("<", 2, 11, 0) + _aux("<", 3, 23, 0)
    assert _read_verneed(ElfInfo(machine=62, elf_class=64, type=3), raw, NEED_STR, "<", 1) == {
        2: ("GLIBC_2.2.5", "libc.so.6")}
    info = ElfInfo(machine=62, elf_class=64, type=3)
    assert _read_verneed(info, _need("<", 0, 1, 16, 0), NEED_STR, "<", 1) == {}
    assert info.version_needs == {}


def test_an_unset_entry_count_follows_the_chain_to_its_last_file() -> None:
    """sh_info 0 (unset): every Verneed up to the one whose vn_next is 0 is read, however
    many; a set sh_info ends the list at that entry, whatever its vn_next says (the link of
    the last counted entry is not followed, so a stray value there is no corruption)."""
    from toolkit.inspect.readers.elf import _read_verneed

    # offsets: liba.so 1, A_1 9, libb.so 13, B_1 21, libc.so 25, C_1 33
    strtab = b"\0liba.so\0A_1\0libb.so\0B_1\0libc.so\0C_1\0"
    raw = (_need("<", 1, 1, 16, 32) + _aux("<", 2, 9, 0) + _need("<", 1, 13, 16, 32) + _aux("<", 3, 21, 0)
           + _need("<", 1, 25, 16, 0) + _aux("<", 4, 33, 0))
    three = {2: ("A_1", "liba.so"), 3: ("B_1", "libb.so"), 4: ("C_1", "libc.so")}
    info = ElfInfo(machine=62, elf_class=64, type=3)
    assert _read_verneed(info, raw, strtab, "<", 0) == three
    assert info.version_needs == {"liba.so": ("A_1",), "libb.so": ("B_1",), "libc.so": ("C_1",)}
    assert _read_verneed(ElfInfo(machine=62, elf_class=64, type=3), raw, strtab, "<", 3) == three
    # sh_info 1: the one entry's vn_next of 4 bytes would point inside itself, but is not followed
    stray = _need("<", 1, 1, 16, 4) + _aux("<", 2, 9, 0)
    assert _read_verneed(ElfInfo(machine=62, elf_class=64, type=3), stray, strtab, "<", 1) == {
        2: ("A_1", "liba.so")}


@pytest.mark.parametrize(("raw", "what"), [
    (_need("<", 1, 1, 16, 0)[:15], ".gnu.version_r entry"),
    (_need("<", 0, 1, 16, 16), ".gnu.version_r entry"),  # vn_next to an entry past the end
    (_need("<", 1, 1, 16, 0) + _aux("<", 2, 11, 0)[:15], ".gnu.version_r aux entry"),
    (_need("<", 2, 1, 16, 0) + _aux("<", 2, 11, 16), ".gnu.version_r aux entry"),
    (_need("<", 1, 1, 0xFFFFFFF0, 0), ".gnu.version_r aux entry"),
])
def test_a_version_need_out_of_bounds_is_named(raw: bytes, what: str) -> None:
    from toolkit.inspect.readers.elf import _read_verneed

    with pytest.raises(ElfError) as err:
        _read_verneed(ElfInfo(machine=62, elf_class=64, type=3), raw, NEED_STR, "<", 2)
    assert str(err.value) == f"corrupt ELF: {what} out of bounds"


def test_an_entry_ending_exactly_at_the_section_end_is_read() -> None:
    from toolkit.inspect.readers.elf import _read_verneed

    raw = _need("<", 1, 1, 16, 0) + _aux("<", 2, 11, 0)
    assert len(raw) == 32
    assert _read_verneed(ElfInfo(machine=62, elf_class=64, type=3), raw, NEED_STR, "<", 1) == {
        2: ("GLIBC_2.2.5", "libc.so.6")}


# --- parse_elf: what it reads of a file as a whole ------------------------------------------

def test_a_v2_code_object_is_read_whole_for_its_note_only_up_to_the_bound() -> None:
    from tests.fixtures.handmade_elf import code_object_v2, isa_version_note
    from toolkit.inspect.readers.amdgpu import V2_MAX_BYTES
    from toolkit.inspect.readers.elf import Image, NeedRanges, parse_elf

    obj = code_object_v2(isa_version_note(9, 0, 6))
    info = parse_elf(Image.whole(obj))
    assert [(c.target, c.size, c.where) for c in info.gpu_code] == [("gfx906", len(obj), "file")]
    assert (info.machine, info.elf_class, info.type, info.little) == (224, 64, 3, True)
    assert info.needed == () and info.scan == () and info.problems == []
    # a sparse image of exactly the bound asks for the whole object; one byte more is not read
    with pytest.raises(NeedRanges) as need:
        parse_elf(Image(V2_MAX_BYTES, [(0, obj)]))
    assert need.value.ranges == [(0, V2_MAX_BYTES)]
    big = parse_elf(Image(V2_MAX_BYTES + 1, [(0, obj)]))
    assert [(c.target, c.size) for c in big.gpu_code] == [("unknown-amdgpu-mach-0x00", V2_MAX_BYTES + 1)]
    # from code object v3 on (EI_ABIVERSION 1) the note is not looked at
    v3 = bytearray(obj)
    v3[8] = 1
    assert parse_elf(Image.whole(bytes(v3))).gpu_targets == ("unknown-amdgpu-mach-0x00",)
    # a processor in e_flags wins over the note
    named = bytearray(obj)
    struct.pack_into("<I", named, 48, 0x3F)
    assert parse_elf(Image.whole(bytes(named))).gpu_targets == ("gfx90a",)


def test_a_file_without_section_headers_cannot_be_judged() -> None:
    from toolkit.inspect.readers.elf import Image, parse_elf

    ident = b"\x7fELF" + bytes([1, 2, 1, 0, 0]) + bytes(7)  # ELF32 big-endian, PowerPC, ET_DYN
    hdr = struct.pack(">HHIIIIIHHHHHH", 3, 20, 1, 0, 0, 0, 0x80000001, 52, 0, 0, 40, 0, 0)
    info = parse_elf(Image.whole(ident + hdr))
    assert (info.machine, info.elf_class, info.type, info.flags, info.little) == (
        20, 32, 3, 0x80000001, False)
    assert info.has_sections is False
    assert info.problems == ["no section headers: its symbols, versions and GPU code cannot be read, so it "
                             "cannot be judged"]


@pytest.mark.parametrize(("etype", "problem"), [
    (3, ["a shared object without a dynamic section: it cannot be judged"]), (2, []), (1, [])])
def test_only_a_shared_object_needs_a_dynamic_section(etype: int, problem: list[str]) -> None:
    from tests.fixtures.handmade_elf import shared_object
    from toolkit.inspect.readers.elf import Image, parse_elf

    data = bytearray(shared_object(64, True, 62, needed=["liba.so"], defined=["f"]))
    struct.pack_into("<H", data, 16, etype)
    assert parse_elf(Image.whole(bytes(data))).problems == []
    (shoff,) = struct.unpack_from("<Q", data, 40)
    struct.pack_into("<I", data, shoff + 3 * 64 + 4, 1)  # .dynamic (section 3) made SHT_PROGBITS
    info = parse_elf(Image.whole(bytes(data)))
    assert info.problems == problem
    assert info.needed == () and info.defined == {b"f"} and info.has_sections


# --- the header and the section table, laid out by hand (gABI Elf64_Shdr / Elf32_Shdr) --------

SHSTR = b"\0.text\0.bss\0.shstrtab\0"  # .text 1, .bss 7, .shstrtab 12


def _elf(elf_class: int = 64, little: bool = True, shentsize: int = 0, shstrndx: int = 3,
         shnum_field: int | None = None, sh0: tuple[int, int, int, int] = (0, 0, 0, 0)) -> bytes:
    """Header, the name table at 128, then 4 section headers: NULL (its offset, size, link,
    info from ``sh0``), .text (PROGBITS, AX), .bss (NOBITS, WA, size 0x40), .shstrtab."""
    e = "<" if little else ">"
    is64 = elf_class == 64
    ent = shentsize or (64 if is64 else 40)
    fmt = e + ("IIQQQQIIQQ" if is64 else "IIIIIIIIII")
    rows = [(0, 0, 0, 0, sh0[0], sh0[1], sh0[2], sh0[3], 0, 0),
            (1, 1, 6, 0x1000, 160, 16, 0, 0, 16, 0),
            (7, 8, 3, 0x2000, 176, 0x40, 0, 0, 32, 0),
            (12, 3, 0, 0, 128, len(SHSTR), 0, 0, 1, 0)]
    table = b"".join(struct.pack(fmt, *r).ljust(ent, b"\xee") for r in rows)
    shnum = len(rows) if shnum_field is None else shnum_field
    ident = b"\x7fELF" + bytes([2 if is64 else 1, 1 if little else 2, 1, 3, 7]) + bytes(7)
    if is64:
        hdr = ident + struct.pack(e + "HHIQQQIHHHHHH", 3, 62, 1, 0, 0, 192, 0x11, 64, 0, 0, ent, shnum,
                                  shstrndx)
    else:
        hdr = ident + struct.pack(e + "HHIIIIIHHHHHH", 3, 3, 1, 0, 0, 192, 0x11, 52, 0, 0, ent, shnum,
                                  shstrndx)
    body = bytearray(hdr.ljust(128, b"\0"))
    body += SHSTR.ljust(32, b"\0") + b"\x90" * 16 + b"\0" * 16
    assert len(body) == 192
    return bytes(body + table)


def _sections(data: bytes) -> list[tuple[str, int, int, int, int, int, int, int]]:
    from toolkit.inspect.readers.elf import parse_header, read_sections

    img = Image.whole(data)
    return [(s.name, s.type, s.offset, s.size, s.link, s.info, s.entsize, s.flags)
            for s in read_sections(img, parse_header(img))]


WANT = [("", 0, 0, 0, 0, 0, 0, 0), (".text", 1, 160, 16, 0, 0, 0, 6), (".bss", 8, 176, 0, 0, 0, 0, 3),
        (".shstrtab", 3, 128, len(SHSTR), 0, 0, 0, 0)]


@pytest.mark.parametrize(("elf_class", "little", "shentsize"), [
    (64, True, 0), (64, False, 0), (32, True, 0), (32, False, 0), (64, True, 80), (32, True, 48)])
def test_sections_are_read_at_the_entry_size_in_the_files_byte_order(
        elf_class: int, little: bool, shentsize: int, tmp_path: Path) -> None:
    from toolkit.inspect.readers.elf import parse_header

    data = _elf(elf_class, little, shentsize)
    assert _sections(data) == WANT  # .bss (NOBITS) holds no file bytes
    hdr = parse_header(Image.whole(data))
    assert (hdr.osabi, hdr.abiversion, hdr.flags, hdr.shnum, hdr.shstrndx, hdr.little) == (
        3, 7, 0x11, 4, 3, little)
    if shentsize:
        return  # (readelf refuses entry sizes other than the format's; the gABI allows them)
    path = tmp_path / "hand.o"
    path.write_bytes(data)
    shown = run(["readelf", "-S", "-W", str(path)], check=False).stdout
    for name in (".text", ".bss", ".shstrtab"):
        assert name in shown  # binutils reads the same table


@pytest.mark.parametrize(("elf_class", "small"), [(64, 63), (64, 40), (32, 39)])
def test_an_entry_size_below_the_formats_is_corrupt(elf_class: int, small: int) -> None:
    from toolkit.inspect.readers.elf import parse_header, read_sections

    full = 64 if elf_class == 64 else 40
    data = bytearray(_elf(elf_class, True, full))
    at = 58 if elf_class == 64 else 46  # e_shentsize
    struct.pack_into("<H", data, at, small)
    img = Image.whole(bytes(data))
    with pytest.raises(ElfError) as err:
        read_sections(img, parse_header(img))
    assert str(err.value) == f"corrupt ELF: section header entry size {small} < {full}"


@pytest.mark.parametrize("shstrndx", [0, 4, 0xFF00, 2])
def test_without_a_usable_name_table_sections_have_no_names(shstrndx: int) -> None:
    # 0: SHN_UNDEF; 4 and 0xff00: past the table; 2: .bss, a NOBITS section
    assert [s[0] for s in _sections(_elf(shstrndx=shstrndx))] == ["", "", "", ""]
    assert [s[1:] for s in _sections(_elf(shstrndx=shstrndx))] == [w[1:] for w in WANT]


def test_extended_numbering_reads_the_count_and_name_table_from_section_0() -> None:
    from toolkit.inspect.readers.elf import parse_header

    # e_shnum 0: the count is section 0's sh_size; e_shstrndx SHN_XINDEX: the index is its sh_link
    data = _elf(shnum_field=0, shstrndx=0xFFFF, sh0=(0, 4, 3, 9))
    hdr = parse_header(Image.whole(data))
    assert (hdr.shnum, hdr.shstrndx) == (4, 3)
    got = _sections(data)
    assert [g[0] for g in got] == ["", ".text", ".bss", ".shstrtab"] and got[0][3:6] == (4, 3, 9)
    # only the count escaped: the name table index is e_shstrndx; e_shstrndx 0 means none,
    # even though section 0 then has a size (it is not a name table)
    assert parse_header(Image.whole(_elf(shnum_field=0, shstrndx=3, sh0=(0, 4, 1, 9)))).shstrndx == 3
    assert [g[0] for g in _sections(_elf(shnum_field=0, shstrndx=0, sh0=(0, 4, 3, 9)))] == [""] * 4
    # only the index escaped: e_shnum stands
    hdr = parse_header(Image.whole(_elf(shnum_field=4, shstrndx=0xFFFF, sh0=(0, 99, 3, 9))))
    assert (hdr.shnum, hdr.shstrndx) == (4, 3)
    # no section table at all: section 0 is not read
    bare = bytearray(_elf(shnum_field=0))
    struct.pack_into("<Q", bare, 40, 0)
    hdr = parse_header(Image.whole(bytes(bare[:64])))
    assert (hdr.shoff, hdr.shnum, hdr.shstrndx) == (0, 0, 3)


@pytest.mark.parametrize(("ident", "message"), [
    (b"\x7fELG\x02\x01", "not an ELF file (bad magic)"),
    (b"\x7fELF\x00\x01", "corrupt ELF: unknown class 0 or data encoding 1"),
    (b"\x7fELF\x03\x01", "corrupt ELF: unknown class 3 or data encoding 1"),
    (b"\x7fELF\x02\x00", "corrupt ELF: unknown class 2 or data encoding 0"),
    (b"\x7fELF\x01\x03", "corrupt ELF: unknown class 1 or data encoding 3"),
])
def test_the_identification_names_what_is_wrong(ident: bytes, message: str) -> None:
    from toolkit.inspect.readers.elf import parse_header

    with pytest.raises(ElfError) as err:
        parse_header(Image.whole(ident + _elf()[6:]))
    assert str(err.value) == message


# --- Image: a file's bytes, whole or in pieces -----------------------------------------------

def test_a_sparse_image_serves_ranges_inside_one_piece_only() -> None:
    from toolkit.inspect.readers.elf import NeedRanges

    data = bytes(range(100))
    img = Image(100, [(60, data[60:80]), (10, data[10:30])])  # given out of order
    assert bytes(img.view(10, 20)) == data[10:30] and bytes(img.view(65, 15)) == data[65:80]
    assert bytes(img.view(30, 0)) == b"" and img.has(80, 0)
    assert img.has(10, 20) and not img.has(9, 2) and not img.has(29, 2) and not img.has(25, 40)
    with pytest.raises(NeedRanges) as need:
        img.view(25, 40)  # spans two pieces and the gap: never joined
    assert need.value.ranges == [(25, 65)] and str(need.value) == "need 1 more byte range(s)"
    img.add(25, data[25:65])
    assert bytes(img.view(25, 40)) == data[25:65]
    img.add(0, data[:5])  # added before the others: still found
    assert bytes(img.view(0, 5)) == data[:5]


@pytest.mark.parametrize(("offset", "length"), [(-1, 1), (0, -1), (90, 11), (101, 0), (0, 101)])
def test_a_range_outside_the_file_is_corrupt_not_missing(offset: int, length: int) -> None:
    img = Image(100, [])
    with pytest.raises(ElfError) as err:
        img.view(offset, length, "the table")
    assert str(err.value) == (f"truncated or corrupt ELF: the table at offset {offset} (+{length}) lies "
                              "past the end of the file (100 bytes)")
    with pytest.raises(ElfError, match=r"^truncated or corrupt ELF: data at offset"):
        img.view(offset, length)


def test_require_names_every_missing_range_inside_the_file_at_once() -> None:
    from toolkit.inspect.readers.elf import NeedRanges

    img = Image(100, [(0, bytes(40))])
    img.require([(0, 40), (10, 10), (200, 300), (50, 40), (-5, 3)])  # held, empty, outside: nothing
    with pytest.raises(NeedRanges) as need:
        img.require([(0, 40), (30, 50), (90, 100), (95, 101), (60, 70)])
    assert need.value.ranges == [(30, 50), (90, 100), (60, 70)]
    assert str(need.value) == "need 3 more byte range(s)"
    same = Image(10, [(0, b"ab"), (0, b"abcd")])  # two pieces from one offset: either serves
    assert bytes(same.view(0, 4)) == b"abcd" and bytes(same.view(0, 1)) == b"a"
    whole = Image.whole(bytearray(b"abc"))
    assert whole.size == 3 and bytes(whole.view(1, 2)) == b"bc"


# --- which sections may hold GPU code ---------------------------------------------------------

def test_scan_ranges_are_loaded_data_sections_and_the_fatbin_by_offset() -> None:
    from toolkit.inspect.readers.elf import Section, scan_ranges

    a, ax, wa = 0x2, 0x6, 0x3  # SHF_ALLOC, + SHF_EXECINSTR, + SHF_WRITE
    secs = [
        Section(".rodata", 1, 500, 10, 0, 0, 0, a),
        Section(".hip_fatbin", 1, 300, 20, 0, 0, 0, 0),  # not loaded, but named: scanned
        Section(".data", 1, 400, 8, 0, 0, 0, wa),
        Section(".note.x", 7, 100, 4, 0, 0, 0, a),
        Section(".comment", 1, 50, 30, 0, 0, 0, 0),  # not loaded: never used at run time
        Section(".text", 1, 600, 40, 0, 0, 0, ax),  # machine code
        Section(".hip_fatbin", 1, 700, 4, 0, 0, 0, ax),  # executable: not data
        Section(".empty", 1, 650, 0, 0, 0, 0, a),
        Section(".bss", 8, 660, 0, 0, 0, 0, wa),
        *[Section(f"t{t:x}", t, 800, 8, 0, 0, 0, a)  # loader and linker tables
          for t in (0, 2, 3, 4, 5, 6, 9, 11, 17, 18, 19, 0x6FFFFFF6, 0x6FFFFFFD, 0x6FFFFFFE, 0x6FFFFFFF,
                    0x70000001)],
    ]
    got = scan_ranges(secs, 808)
    assert [(r.name, r.offset, r.size) for r in got] == [
        (".note.x", 100, 4), (".hip_fatbin", 300, 20), (".data", 400, 8), (".rodata", 500, 10)]


@pytest.mark.parametrize(("name", "shown"), [(".rodata", ".rodata"), ("", "?")])
def test_a_scanned_section_past_the_end_is_named(name: str, shown: str) -> None:
    from toolkit.inspect.readers.elf import Section, scan_ranges

    sec = Section(name, 1, 90, 11, 0, 0, 0, 0x2)
    assert [(r.offset, r.size) for r in scan_ranges([sec], 101)] == [(90, 11)]  # ends at the end
    with pytest.raises(ElfError) as err:
        scan_ranges([sec], 100)
    assert str(err.value) == f"truncated or corrupt ELF: section {shown} lies past the end"
    # a section that is not scanned is not checked either
    assert scan_ranges([Section(name, 1, 90, 11, 0, 0, 0, 0)], 100) == ()


# --- ElfInfo: packing for a worker's result, narrowing for the later rules -----------------------

def test_pack_then_narrow_keeps_the_asked_names_and_every_undefined_pair() -> None:
    import zlib

    from toolkit.inspect.readers.elf import ElfInfo
    from toolkit.inspect.readers.inflate import pack_pairs

    names = {b"alpha", b"beta", b"_ZN3foo3barEv"}
    info = ElfInfo(machine=62, elf_class=64, type=3, defined=frozenset(names),
                   defined_versions={b"alpha": ("V1", ""), b"beta": ("V2",)})
    assert list(info.defined_batches()) == [frozenset(names)]
    info.pack()
    assert info.defined == frozenset() and info.packed is not None
    assert sorted(zlib.decompress(info.packed).split(b"\0")[:-1]) == sorted(names)  # NUL-terminated
    first = info.packed
    info.pack()  # packing twice changes nothing
    assert info.packed is first
    assert sorted(n for batch in info.defined_batches(4) for n in batch) == sorted(names)
    pairs = [(b"malloc", "GLIBC_2.2.5"), (b"g", None)]
    info.packed_undefined, info.undefined = pack_pairs(pairs), []
    info.narrow({b"alpha", b"beta"})
    assert info.defined == {b"alpha", b"beta"} and isinstance(info.defined, frozenset)
    assert info.defined_versions == {b"alpha": ("V1", ""), b"beta": ("V2",)}
    info.narrow(frozenset({b"alpha"}))
    assert info.defined == {b"alpha"} and info.defined_versions == {b"alpha": ("V1", "")}
    assert info.packed is None and info.packed_undefined is None and info.undefined == pairs
    assert list(info.defined_batches()) == [frozenset({b"alpha"})]
    assert info.unpack_undefined() == pairs  # nothing left to unpack: the same list


def test_gpu_targets_are_distinct_by_family_then_number() -> None:
    from toolkit.inspect.readers.elf import EM_AMDGPU, ElfInfo
    from toolkit.inspect.readers.gpuscan import CodeObject

    objs = tuple(CodeObject(t, 1, "x") for t in ("gfx1030", "gfx90a", "gfx906", "gfx90a", "gfx1100"))
    info = ElfInfo(machine=62, elf_class=64, type=3, gpu_code=objs)
    assert info.gpu_targets == ("gfx906", "gfx90a", "gfx1030", "gfx1100")
    assert not info.is_gpu_code_object and ElfInfo(machine=EM_AMDGPU, elf_class=64, type=3).is_gpu_code_object
    assert ElfInfo(machine=62, elf_class=64, type=3).gpu_targets == ()


# --- parse_elf on a hand-made shared object (tests/fixtures/handmade_elf.shared_object: sections
# 0 NULL, 1 .dynstr, 2 .dynsym (link 1), 3 .dynamic (link 1), 4 .shstrtab, 5 .text) ---------------

def _so() -> tuple[bytearray, int]:
    from tests.fixtures.handmade_elf import shared_object

    data = bytearray(shared_object(64, True, 62, needed=["liba.so"], soname="libme.so", defined=["f", "g"]))
    (shoff,) = struct.unpack_from("<Q", data, 40)
    return data, shoff


def test_a_hand_made_shared_object_reads_whole_and_in_pieces() -> None:
    from toolkit.inspect.readers.elf import parse_elf

    data, shoff = _so()
    info = parse_elf(Image.whole(bytes(data)))
    assert (info.needed, info.soname, info.defined, info.undefined) == (
        ("liba.so",), "libme.so", {b"f", b"g"}, [])
    assert info.has_versym is False and info.defined_versions == {} and info.problems == []
    # in pieces: the third round asks for .dynsym, .dynamic and .dynstr (section 1) together
    secs = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * 64) for i in range(6)]
    rng = {i: (secs[i][4], secs[i][4] + secs[i][5]) for i in (1, 2, 3)}
    got, asked = parse_in_rounds(bytes(data), most=5)
    assert asked[2] == {rng[1], rng[2], rng[3]} and len(asked) == 3
    assert (got.needed, got.defined) == (info.needed, info.defined)


@pytest.mark.parametrize("which", [2, 3])
def test_a_table_linked_to_no_string_table_is_not_read(which: int) -> None:
    from toolkit.inspect.readers.elf import parse_elf

    for link in (0, 6, 7):  # SHN_UNDEF, or one past the last section (6 sections): nothing to read
        data, shoff = _so()
        struct.pack_into("<I", data, shoff + which * 64 + 40, link)  # sh_link
        info = parse_elf(Image.whole(bytes(data)))
        if which == 2:  # .dynsym: no names to read, the dynamic section still is
            assert info.defined == frozenset() and info.needed == ("liba.so",)
        else:
            assert info.needed == () and info.soname is None and info.defined == {b"f", b"g"}
        assert info.problems == []


def test_section_header_fields_are_unsigned() -> None:
    from toolkit.inspect.readers.elf import parse_header, read_sections

    data, shoff = _so()
    struct.pack_into("<I", data, shoff + 5 * 64, 0x80000000)  # .text's sh_name past the name table
    img = Image.whole(bytes(data))
    with pytest.raises(ElfError) as err:
        read_sections(img, parse_header(img))
    assert str(err.value).startswith("corrupt ELF: string offset 2147483648 outside its table")
    data, shoff = _so()
    struct.pack_into("<IQ", data, shoff + 5 * 64 + 4, 0x80000001, 1 << 63)  # sh_type, sh_flags
    img = Image.whole(bytes(data))
    text = read_sections(img, parse_header(img))[5]
    assert (text.name, text.type, text.flags) == (".text", 0x80000001, 1 << 63)


@pytest.mark.parametrize(("e_type", "kind"), [(1, "object"), (2, "executable"), (3, "shared-library"),
                                              (4, "other")])
def test_the_kind_of_an_elf_file_is_its_e_type(e_type: int, kind: str) -> None:
    # System V gABI: ET_REL 1, ET_EXEC 2, ET_DYN 3, ET_CORE 4
    assert _kind(ElfInfo(machine=62, elf_class=64, type=e_type)) == kind


def test_a_read_past_the_end_names_the_data_offset_and_size() -> None:
    from toolkit.inspect.readers.elf import Image

    with pytest.raises(ElfError) as err:
        Image.whole(memoryview(b"1234")).view(2, 10)
    assert str(err.value) == ("truncated or corrupt ELF: data at offset 2 (+10) lies past the end "
                              "of the file (4 bytes)")


def _true_elf() -> bytearray:
    data = bytearray(Path("/bin/true").read_bytes())
    assert data[:4] == b"\x7fELF" and data[4] == 2 and data[5] == 1  # ELF64, little-endian
    return data


def test_a_section_name_index_one_past_the_last_section_reads_no_names() -> None:
    import struct

    from toolkit.inspect.readers.elf import read_elf_bytes

    # ELF64 header: e_shnum at 60, e_shstrndx at 62; index shnum names no section
    data = _true_elf()
    (shnum,) = struct.unpack_from("<H", data, 60)
    struct.pack_into("<H", data, 62, shnum)
    info = read_elf_bytes(bytes(data))
    assert info.needed == ("libc.so.6",)  # readelf -d /bin/true: NEEDED libc.so.6


def test_a_file_without_section_headers_says_it_has_none() -> None:
    import struct

    from toolkit.inspect.readers.elf import read_elf_bytes

    data = _true_elf()
    struct.pack_into("<Q", data, 40, 0)  # ELF64 e_shoff
    struct.pack_into("<HH", data, 60, 0, 0)  # e_shnum, e_shstrndx
    info = read_elf_bytes(bytes(data))
    assert info.has_sections is False
    assert info.problems and info.problems[0].startswith("no section headers")


def test_read_elf_bytes_packs_the_defined_names_when_asked() -> None:
    from toolkit.inspect.readers.elf import read_elf_bytes

    data = bytes(_true_elf())
    plain, packed = read_elf_bytes(data), read_elf_bytes(data, pack=True)
    assert plain.packed is None and plain.defined
    assert packed.packed is not None and packed.defined == frozenset()


def test_a_section_header_offset_is_unsigned() -> None:
    import struct

    from tests.fixtures.handmade_elf import code_object_v2, isa_version_note
    from toolkit.inspect.readers.amdgpu import note_target

    # ELF64 e_shoff (offset 40) is an Elf64_Off, unsigned: 2**64 - n lies past any file, it
    # never counts back from the end
    obj = bytearray(code_object_v2(isa_version_note(9, 0, 10)))
    assert note_target(bytes(obj)) == "gfx90a"
    (shoff,) = struct.unpack_from("<Q", obj, 40)
    struct.pack_into("<Q", obj, 40, 2**64 - (len(obj) - shoff))
    assert note_target(bytes(obj)) is None


def test_a_section_ending_at_the_last_byte_is_scanned_and_one_past_it_is_refused() -> None:
    from toolkit.inspect.readers.elf import Section, scan_ranges

    # ELF spec: a section occupies sh_size bytes from sh_offset, so [96, 100) fits a
    # 100-byte file and [96, 101) does not (type 1 SHT_PROGBITS, flags 2 SHF_ALLOC)
    fits = Section(".hip_fatbin", 1, 96, 4, 0, 0, 0, 2)
    assert [(r.name, r.offset, r.size) for r in scan_ranges([fits], 100)] == [(".hip_fatbin", 96, 4)]
    with pytest.raises(ElfError) as err:
        scan_ranges([Section(".hip_fatbin", 1, 96, 5, 0, 0, 0, 2)], 100)
    assert str(err.value) == "truncated or corrupt ELF: section .hip_fatbin lies past the end"


def test_a_section_name_that_is_not_utf8_reads_with_replacement_characters() -> None:
    lib = bytearray(shared_object(64, True, EM_X86_64, needed=("libc.so.6",)))
    at = lib.index(b".dynstr\0")
    lib[at : at + 7] = b".dy\xffstr"  # one byte that no UTF-8 sequence starts with
    img = Image.whole(bytes(lib))
    names = [s.name for s in read_sections(img, parse_header(img))]
    assert ".dy\N{REPLACEMENT CHARACTER}str" in names and ".dynstr" not in names
