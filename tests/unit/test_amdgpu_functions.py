"""Whole-function tests of toolkit.inspect.readers.amdgpu against the specs, field by field.

``code_object_at``: an Elf64_Ehdr laid out by hand from the gABI (e_ident at 0, e_type 16,
e_machine 18, e_version 20, e_phoff 32, e_shoff 40, e_flags 48, e_ehsize 52, e_phentsize 54,
e_phnum 56, e_shentsize 58, e_shnum 60), with the values LLVM AMDGPUUsage requires of an HSA
code object (ELFCLASS64, ELFDATA2LSB, EV_CURRENT, ELFOSABI_AMDGPU_HSA 64, EM_AMDGPU 224,
ET_REL or ET_DYN). The valid header is cross-checked with binutils' readelf. Each field set
wrong on its own turns it down; the size is the end of the furthest table.

``_isa`` / ``note_target``: the code object v2 notes of AMDGPUUsage ("Code Object V2 Note
Records"), NT_AMD_HSA_ISA_VERSION (3) and NT_AMD_HSA_ISA_NAME (11), named as the gfx ids.
"""

from __future__ import annotations

import re
import struct
from pathlib import Path

import pytest

from tests.fixtures.handmade_elf import _note, code_object_v2, isa_name_note, isa_version_note
from toolkit.core.proc import run
from toolkit.inspect.readers.amdgpu import _isa, amdgpu_target, code_object_at, needs_note, note_target


def _ehdr(**over: int) -> bytearray:
    f = {"cls": 2, "data": 1, "ver": 1, "osabi": 64, "abi": 2, "type": 3, "machine": 224,
         "version": 1, "phoff": 64, "shoff": 176, "flags": 0x3F, "ehsize": 64, "phentsize": 56,
         "phnum": 2, "shentsize": 64, "shnum": 3}
    f.update(over)
    ident = b"\x7fELF" + bytes([f["cls"], f["data"], f["ver"], f["osabi"], f["abi"]]) + bytes(7)
    return bytearray(ident + struct.pack(
        "<HHIQQQIHHHHHH", f["type"], f["machine"], f["version"], 0, f["phoff"], f["shoff"], f["flags"],
        f["ehsize"], f["phentsize"], f["phnum"], f["shentsize"], f["shnum"], 0))


END = 176 + 3 * 64  # the section table (after two 56-byte program headers) ends at 368


def test_the_hand_made_header_is_what_readelf_reads(tmp_path: Path) -> None:
    path = tmp_path / "co.o"
    path.write_bytes(bytes(_ehdr()) + bytes(END - 64))
    out = run(["readelf", "-h", "-W", str(path)], check=False).stdout
    assert re.search(r"Class:\s+ELF64", out) and re.search(r"Machine:\s+AMD GPU", out)
    assert re.search(r"OS/ABI:\s+AMD HSA", out) and re.search(r"Type:\s+DYN", out)
    assert re.search(r"Start of program headers:\s+64 ", out)
    assert re.search(r"Start of section headers:\s+176 ", out)
    assert re.search(r"Flags:\s+0x3f", out)
    assert code_object_at(bytes(_ehdr()), END) == ("gfx90a", END)


@pytest.mark.parametrize(("field", "bad", "good"), [
    ("cls", 1, 2), ("data", 2, 1), ("ver", 0, 1), ("ver", 2, 1), ("osabi", 0, 64), ("osabi", 65, 64),
    ("machine", 62, 224), ("type", 2, 1), ("type", 4, 3), ("type", 0, 3), ("version", 0, 1),
    ("version", 2, 1), ("ehsize", 52, 64), ("ehsize", 65, 64), ("phentsize", 55, 56),
    ("phentsize", 57, 56), ("shentsize", 40, 64), ("shentsize", 65, 64),
])
def test_each_field_set_wrong_on_its_own_turns_the_header_down(field: str, bad: int, good: int) -> None:
    assert code_object_at(_ehdr(**{field: bad}), 1 << 20) is None
    assert code_object_at(_ehdr(**{field: good}), 1 << 20) == ("gfx90a", END)


def test_entry_sizes_only_matter_for_tables_that_exist() -> None:
    # no program headers: e_phentsize is not looked at (but the section table still is)
    assert code_object_at(_ehdr(phnum=0, phentsize=0, phoff=0), 1 << 20) == ("gfx90a", END)
    assert code_object_at(_ehdr(phnum=0, phentsize=55), 1 << 20) == ("gfx90a", END)
    assert code_object_at(_ehdr(phnum=0, phentsize=55, shentsize=40), 1 << 20) is None
    # no sections: e_shentsize is not looked at, the program headers still are
    assert code_object_at(_ehdr(shnum=0, shentsize=0, shoff=0), 1 << 20) == ("gfx90a", 64 + 2 * 56)
    assert code_object_at(_ehdr(shnum=0, shentsize=40), 1 << 20) == ("gfx90a", 64 + 2 * 56)
    assert code_object_at(_ehdr(shnum=0, shentsize=40, phentsize=55), 1 << 20) is None
    # neither: the object is its header
    assert code_object_at(_ehdr(shnum=0, phnum=0, phoff=0, shoff=0), 64) == ("gfx90a", 64)


def test_the_size_is_the_end_of_the_furthest_table_and_must_fit_the_room() -> None:
    # program headers after the section table: they end last
    head = _ehdr(shoff=64, shnum=1, phoff=400, phnum=3)
    assert code_object_at(head, 400 + 3 * 56) == ("gfx90a", 568)
    assert code_object_at(head, 567) is None
    assert code_object_at(_ehdr(), END) == ("gfx90a", END)
    assert code_object_at(_ehdr(), END - 1) is None
    # a table starting inside the 64-byte header is not a code object; at 64 it is
    assert code_object_at(_ehdr(phoff=63), 1 << 20) is None
    assert code_object_at(_ehdr(shoff=63, phnum=0), 1 << 20) is None
    assert code_object_at(_ehdr(shoff=64, phnum=0), 1 << 20) == ("gfx90a", 64 + 3 * 64)
    assert code_object_at(_ehdr(phoff=0, phnum=0), 1 << 20) == ("gfx90a", END)


def test_the_header_must_be_whole_and_start_with_the_magic() -> None:
    head = _ehdr()
    assert code_object_at(head[:63], 1 << 20) is None
    assert code_object_at(bytes(head[:64]), 1 << 20) == ("gfx90a", END)
    for i in range(4):
        bad = bytearray(head)
        bad[i] ^= 0x20
        assert code_object_at(bad, 1 << 20) is None


@pytest.mark.parametrize(("abi", "flags", "target"), [
    (1, 0x2F | 0x100, "gfx906:xnack+"),  # code object v3: xnack 0x100, sramecc 0x200
    (1, 0x2F | 0x300, "gfx906:sramecc+:xnack+"),
    (2, 0x3F | 0x300, "gfx90a:xnack+"),  # v4: xnack in 0x300 (0x100 any, 0x200 off, 0x300 on)
    (2, 0x3F | 0x800 | 0x200, "gfx90a:sramecc-:xnack-"),
    (3, 0x4C | 0xC00, "gfx942:sramecc+"),
    (2, 0x3F | 0x100 | 0x400, "gfx90a"),  # "any" settings name no feature
    (0, 0x3F | 0x300, "gfx90a"),  # v2 has no feature bits
    (2, 0xFF, "unknown-amdgpu-mach-0xff"),
])
def test_the_target_comes_from_e_flags_read_for_the_abi_version(abi: int, flags: int, target: str) -> None:
    assert amdgpu_target(flags, abi) == target
    assert code_object_at(_ehdr(abi=abi, flags=flags), 1 << 20) == (target, END)


# --- code object v2 notes -------------------------------------------------------------------

def test_an_isa_version_note_needs_its_whole_descriptor() -> None:
    desc = struct.pack("<HHIII", 4, 7, 9, 0, 6)  # vendor/arch name sizes, major, minor, stepping
    assert _isa(3, desc) == "gfx906"
    assert _isa(3, desc[:15]) is None
    assert _isa(3, struct.pack("<HHIII", 4, 7, 0, 0, 6)) is None  # no major: no processor
    assert _isa(3, struct.pack("<HHIII", 4, 7, 10, 1, 0)) == "gfx1010"
    assert _isa(3, struct.pack("<HHIII", 4, 7, 8, 0, 3)) == "gfx803"
    assert _isa(4, desc) is None and _isa(0, desc) is None  # other note types name nothing


@pytest.mark.parametrize(("triple", "target"), [
    ("amdgcn-amd-amdhsa--gfx900", "gfx900"),
    ("amdgcn-amd-amdhsa--gfx906+xnack", "gfx906:xnack+"),
    ("amdgcn-amd-amdhsa--gfx906+sramecc+xnack", "gfx906:sramecc+:xnack+"),
    ("amdgcn-amd-amdhsa--gfx908+foo", "gfx908"),  # only xnack and sramecc are features
    ("gfx90a", "gfx90a"),  # no dashes: the whole text is the processor
    ("amdgcn-amd-amdhsa--gfx", None),
    ("amdgcn-amd-amdhsa--sm_80", None),
    ("amdgcn-amd-amdhsa--GFX900", None),
    ("amdgcn-amd-amdhsa--", None),
])
def test_an_isa_name_note_names_the_processor_after_the_last_dash(triple: str, target: str | None) -> None:
    assert _isa(11, triple.encode() + b"\0\0\0") == target
    assert note_target(code_object_v2(isa_name_note(triple))) == target


def test_an_isa_name_that_is_not_ascii_is_read_with_replacement() -> None:
    # a stray byte in the vendor part leaves the processor readable; one in the feature
    # list drops that feature; one in the processor's name is not a processor
    assert _isa(11, b"amdgcn\xff-amd-amdhsa--gfx900\0") == "gfx900"
    assert _isa(11, b"amdgcn-amd-amdhsa--gfx906+xnack\xff\0") == "gfx906"
    assert _isa(11, b"amdgcn-amd-amdhsa--gfx9\xff6\0") is None


def test_only_notes_of_the_amd_owner_in_note_sections_count() -> None:
    assert note_target(code_object_v2(_note(b"GNU\0", 3, isa_version_note(9, 0, 6)[16:]))) is None
    assert note_target(code_object_v2(isa_version_note(9, 0, 6))) == "gfx906"
    # owner name padded with more NULs is still "AMD"; the descriptor follows at the next 4 bytes
    desc = struct.pack("<HHIII", 4, 7, 9, 0, 8) + b"AMD\0AMDGPU\0"
    assert note_target(code_object_v2(_note(b"AMD\0\0\0", 3, desc))) == "gfx908"
    # the first version note is kept; a later name note wins; a bad one does not erase
    two = isa_version_note(9, 0, 6) + isa_version_note(9, 0, 8)
    assert note_target(code_object_v2(two)) == "gfx906"
    assert note_target(code_object_v2(two + isa_name_note("amdgcn-amd-amdhsa--gfx90a"))) == "gfx90a"
    assert note_target(code_object_v2(isa_version_note(9, 0, 6) + isa_name_note("x--sm_80"))) == "gfx906"
    # a later note whose descriptor runs past the section ends the walk, earlier ones stand
    cut = isa_version_note(9, 0, 6) + struct.pack("<III", 4, 400, 11) + b"AMD\0"
    assert note_target(code_object_v2(cut)) == "gfx906"


def test_a_malformed_object_has_no_note_target() -> None:
    obj = bytearray(code_object_v2(isa_version_note(9, 0, 6)))
    assert note_target(bytes(obj)) == "gfx906"
    assert note_target(bytes(obj[:63])) is None
    bad = bytearray(obj)
    struct.pack_into("<H", bad, 58, 40)  # e_shentsize other than Elf64_Shdr's 64
    assert note_target(bytes(bad)) is None
    (shoff,) = struct.unpack_from("<Q", obj, 40)
    (shnum,) = struct.unpack_from("<H", obj, 60)
    assert shoff + shnum * 64 == len(obj)  # the table ends the file: one byte less is refused
    assert note_target(bytes(obj[:-1])) is None
    # the .note section (index 1) set to another type, or reaching past the file: no note read
    for field, value in ((4, 1), (32, len(obj))):
        bad = bytearray(obj)
        struct.pack_into("<I" if field == 4 else "<Q", bad, shoff + 64 + field, value)
        assert note_target(bytes(bad)) is None


def test_a_note_section_ending_at_the_end_of_the_object_is_read() -> None:
    notes = isa_version_note(9, 0, 8)
    obj = bytearray(code_object_v2(isa_version_note(8, 0, 3)))
    (shoff,) = struct.unpack_from("<Q", obj, 40)
    at = len(obj)
    obj += notes  # a copy of other notes after the section table, the .note section moved there
    struct.pack_into("<QQ", obj, shoff + 64 + 24, at, len(notes))  # sh_offset, sh_size
    assert at + len(notes) == len(obj)
    assert note_target(bytes(obj)) == "gfx908"
    assert note_target(bytes(obj[:-1])) is None  # one byte short: the section lies past the end


def _code_object_header(shoff: int, shnum: int) -> bytes:
    ident = b"\x7fELF" + bytes([2, 1, 1, 64, 3]) + bytes(7)
    return ident + struct.pack("<HHIQQQIHHHHHH", 3, 224, 1, 0, 0, shoff, 0x4C, 64, 0, 0, 64, shnum, 0)


def test_a_code_objects_section_table_must_lie_inside_its_room() -> None:
    head = _code_object_header(shoff=64, shnum=2)  # the table ends at 64 + 2 * 64 = 192
    assert code_object_at(head, 192) == ("gfx942", 192)
    assert code_object_at(head, 191) is None
    assert code_object_at(_code_object_header(shoff=32, shnum=1), 1 << 20) is None  # table inside the header


def test_only_a_v2_object_without_a_processor_keeps_its_isa_in_a_note() -> None:
    # LLVM AMDGPUUsage: code object v2 (EI_ABIVERSION 0) has EF_AMDGPU_MACH 0
    assert needs_note("unknown-amdgpu-mach-0x00", 0)
    assert not needs_note("unknown-amdgpu-mach-0x00", 1) and not needs_note("gfx90a", 0)


def _header(phoff: int, phnum: int) -> bytes:
    ident = b"\x7fELF" + bytes([2, 1, 1, 64, 3]) + bytes(7)  # ELFCLASS64, LE, HSA ABI v5
    # e_type ET_DYN, e_machine EM_AMDGPU (224), e_flags 0x4C (gfx942), 56-byte program headers
    return ident + struct.pack("<HHIQQQIHHHHHH", 3, 224, 1, 0, phoff, 0, 0x4C, 64, 56, phnum, 64, 0, 0)


def test_a_code_objects_program_headers_must_lie_inside_its_room() -> None:
    head = _header(phoff=64, phnum=2)  # the table ends at 64 + 2 * 56 = 176
    assert code_object_at(head, 176) == ("gfx942", 176)
    assert code_object_at(head, 175) is None


def test_an_isa_name_is_gfx_then_letters_and_digits_only() -> None:
    from tests.fixtures.handmade_elf import code_object_v2, isa_name_note
    from toolkit.inspect.readers.amdgpu import note_target

    # AMDGPUUsage processor names are gfx followed by alphanumerics
    assert note_target(code_object_v2(isa_name_note("amdgcn-amd-amdhsa--gfx9"))) == "gfx9"
    assert note_target(code_object_v2(isa_name_note("amdgcn-amd-amdhsa--gfx_90a"))) is None


def test_an_isa_version_note_with_a_three_digit_major_names_no_processor() -> None:
    from toolkit.inspect.readers.amdgpu import note_target

    # AMDGPUUsage processors are gfx + a one- or two-digit major + one hex digit each for
    # minor and stepping (gfx906, gfx1030, gfx1201)
    assert note_target(code_object_v2(isa_version_note(10, 3, 0))) == "gfx1030"
    assert note_target(code_object_v2(isa_version_note(99, 0, 0))) == "gfx9900"
    assert note_target(code_object_v2(isa_version_note(100, 0, 0))) is None


def test_an_isa_version_digit_is_one_hex_digit() -> None:
    from toolkit.inspect.readers.amdgpu import note_target

    # minor and stepping are one hex digit each in a processor name (gfx90c: 9, 0, 12)
    assert note_target(code_object_v2(isa_version_note(9, 0, 15))) == "gfx90f"
    assert note_target(code_object_v2(isa_version_note(9, 16, 0))) is None
    assert note_target(code_object_v2(isa_version_note(9, 0, 16))) is None


def test_the_isa_name_note_wins_over_the_version_note_in_either_order() -> None:
    from tests.fixtures.handmade_elf import isa_name_note
    from toolkit.inspect.readers.amdgpu import note_target

    # AMDGPUUsage: NT_AMD_HSA_ISA_NAME is the full target (features included); the version
    # note has only the processor
    name, version = isa_name_note("amdgcn-amd-amdhsa--gfx803+xnack"), isa_version_note(8, 0, 3)
    assert note_target(code_object_v2(name + version)) == "gfx803:xnack+"
    assert note_target(code_object_v2(version + name)) == "gfx803:xnack+"
