"""ELF headers laid out by hand from the gABI (Elf64_Ehdr: 64 bytes, Elf32_Ehdr: 52; every
field unsigned), read at their bounds: a file cut inside its identification or its header
names which, a 32-bit header's fields above 2^15 and 2^31 read as unsigned, dynamic-entry
values above 2^63 stay unsigned, names that are not UTF-8 are shown with U+FFFD, a
section table of only SHT_NULL entries is named as such, and the section name table
(e_shstrndx, Elf64_Shdr: 64 bytes) is named when it lies past the end of the file or when
the sections' names read from it run over its name budget."""

from __future__ import annotations

import struct

import pytest

from toolkit.core.errors import ElfError
from toolkit.inspect.readers.elf import (
    ElfInfo,
    Image,
    _read_dynamic,
    _str,
    parse_elf,
    parse_header,
    read_sections,
)


def _ehdr64(etype: int = 3, shoff: int = 0, shnum: int = 0, shstrndx: int = 0) -> bytes:
    ident = b"\x7fELF" + bytes([2, 1, 1, 0, 0]) + bytes(7)
    return ident + struct.pack("<HHIQQQIHHHHHH", etype, 62, 1, 0, 0, shoff, 0, 64, 0, 0, 64, shnum, shstrndx)


def test_a_file_cut_short_names_the_part_it_lacks() -> None:
    with pytest.raises(ElfError) as err:
        parse_header(Image.whole(b"\x7fELF\x02\x01"))
    assert str(err.value) == ("truncated or corrupt ELF: ELF identification at offset 0 (+16) lies past "
                              "the end of the file (6 bytes)")
    with pytest.raises(ElfError) as err:
        parse_header(Image.whole(_ehdr64()[:40]))
    assert str(err.value) == ("truncated or corrupt ELF: ELF header at offset 16 (+48) lies past the end "
                              "of the file (40 bytes)")
    ident32 = b"\x7fELF" + bytes([1, 1, 1]) + bytes(9)
    with pytest.raises(ElfError) as err:
        parse_header(Image.whole(ident32 + bytes(20)))
    assert str(err.value) == ("truncated or corrupt ELF: ELF header at offset 16 (+36) lies past the end "
                              "of the file (36 bytes)")


def test_a_32_bit_header_is_read_unsigned() -> None:
    ident = b"\x7fELF" + bytes([1, 1, 1]) + bytes(9)
    body = struct.pack("<HHIIIIIHHHHHH", 0xFE00, 0xF00D, 1, 0x80000000, 0x80000034, 0, 0x80000001,
                       52, 32, 0x8001, 40, 0, 0)
    hdr = parse_header(Image.whole(ident + body))
    assert (hdr.elf_class, hdr.type, hdr.machine, hdr.phoff, hdr.flags, hdr.phnum) == (
        32, 0xFE00, 0xF00D, 0x80000034, 0x80000001, 0x8001)


def test_dynamic_values_are_unsigned() -> None:
    hdr = parse_header(Image.whole(_ehdr64()))
    info = ElfInfo(machine=62, elf_class=64, type=3)
    raw = struct.pack("<qQ", 1, 1 << 63) + struct.pack("<qQ", 0, 0)  # DT_NEEDED at 2^63
    with pytest.raises(ElfError) as err:
        _read_dynamic(info, raw, b"\0libx.so\0", hdr)
    assert str(err.value) == f"corrupt ELF: string offset {1 << 63} outside its table (9 bytes)"
    ok = struct.pack("<qQ", 1, 1) + struct.pack("<qQ", 14, 1) + struct.pack("<qQ", 0, 0)
    _read_dynamic(info, ok, b"\0libx.so\0", hdr)
    assert (info.needed, info.soname) == (("libx.so",), "libx.so")


def test_names_that_are_not_utf8_are_shown_with_the_replacement_character() -> None:
    assert _str(b"\0ab\xffc\0", 1) == "ab\ufffdc"
    assert _str(b"\0ab\xffc\0", 5) == ""


def test_the_section_count_bound_is_inclusive() -> None:
    # extended numbering: e_shnum 0, section 0's sh_size holds the count (gABI)
    def with_count(n: int) -> Image:
        sh0 = struct.pack("<IIQQQQIIQQ", 0, 0, 0, 0, 0, n, 0, 0, 0, 0)
        return Image.whole(_ehdr64(shoff=64) + sh0)

    img = with_count(1 << 20)
    with pytest.raises(ElfError) as err:
        read_sections(img, parse_header(img))
    assert str(err.value).startswith("truncated or corrupt ELF: section header table at offset 64")
    img = with_count((1 << 20) + 1)
    with pytest.raises(ElfError) as err:
        read_sections(img, parse_header(img))
    assert str(err.value) == f"corrupt ELF: {(1 << 20) + 1} sections"


def test_a_section_table_of_only_null_entries_is_named() -> None:
    info = parse_elf(Image.whole(_ehdr64(shoff=64, shnum=2) + bytes(128)))
    assert info.problems == ["its section header table is empty (every entry SHT_NULL): it cannot be judged"]


def _shdr64(name: int = 0, stype: int = 0, offset: int = 0, size: int = 0) -> bytes:
    # Elf64_Shdr: sh_name, sh_type, sh_flags, sh_addr, sh_offset, sh_size, sh_link, sh_info,
    # sh_addralign, sh_entsize (64 bytes)
    return struct.pack("<IIQQQQIIQQ", name, stype, 0, 0, offset, size, 0, 0, 0, 0)


def test_a_section_name_table_past_the_end_of_the_file_is_named_as_such() -> None:
    # e_shstrndx 1: a SHT_STRTAB (3) of 100 bytes at offset 192, where the 192-byte file ends
    data = _ehdr64(shoff=64, shnum=2, shstrndx=1) + _shdr64() + _shdr64(stype=3, offset=192, size=100)
    img = Image.whole(data)
    with pytest.raises(ElfError) as err:
        read_sections(img, parse_header(img))
    assert str(err.value).endswith("section name table at offset 192 (+100) lies past the end of the file "
                                   "(192 bytes)")


def test_section_names_read_over_and_over_name_the_section_name_table() -> None:
    # 200 sections all naming the same 100-byte name of a 102-byte table: 20000 bytes of names,
    # over 8 times the table plus 16 KiB (17200)
    n = 200
    names = b"\0" + b"x" * 100 + b"\0"
    table_at = 64 + n * 64
    headers = _shdr64() + _shdr64(stype=3, offset=table_at, size=len(names))
    headers += b"".join(_shdr64(name=1, stype=1) for _ in range(n - 2))
    img = Image.whole(_ehdr64(shoff=64, shnum=n, shstrndx=1) + headers + names)
    with pytest.raises(ElfError) as err:
        read_sections(img, parse_header(img))
    said = str(err.value)
    assert said.startswith("corrupt ELF: ") and "of their section name table (102 bytes)" in said
