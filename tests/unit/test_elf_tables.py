"""ELF tables read as binutils' readelf reads them: a .gnu.version_r pointing outside itself
is corrupt and named, and extended section numbering (gABI) reads as the plain file."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from tests.fixtures.bundles import make_bundle
from tests.fixtures.native import compile_shared, section
from toolkit.core.errors import ElfError
from toolkit.core.proc import run
from toolkit.inspect.readers.elf import read_elf_bytes


@pytest.fixture(scope="module")
def libv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # puts@GLIBC_2.2.5: one Verneed entry (libc.so.6) with one Vernaux
    tmp = tmp_path_factory.mktemp("verneed")
    return compile_shared(tmp, "libv.so", '#include <stdio.h>\nint p() { return puts("p"); }\n', lang="c")


# Elf64_Verneed: vn_version u16, vn_cnt u16, vn_file u32, vn_aux u32 (at 8: where its first
# Vernaux lies, from the entry), vn_next u32
def test_a_version_need_aux_entry_out_of_bounds_is_named(libv: Path, tmp_path: Path) -> None:
    off, _ = section(libv, ".gnu.version_r")
    data = bytearray(libv.read_bytes())
    assert struct.unpack_from("<HH", data, off) == (1, 1)  # version 1, one Vernaux
    struct.pack_into("<I", data, off + 8, 0x7FFF0000)
    bad = tmp_path / "bad.so"
    bad.write_bytes(bytes(data))
    readelf = run(["readelf", "-V", "-W", str(bad)], check=False)
    assert "past end of file for version need aux" in readelf.stderr
    with pytest.raises(ElfError) as err:
        read_elf_bytes(bytes(data))
    assert str(err.value) == "corrupt ELF: .gnu.version_r aux entry out of bounds"


@pytest.fixture(scope="module")
def libfat(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A g++-built library with a clang offload bundle (gfx90a) in its .hip_fatbin section."""
    tmp = tmp_path_factory.mktemp("fat")
    bundle = make_bundle([("host-x86_64-unknown-linux-gnu", b""),
                          ("hipv4-amdgcn-amd-amdhsa--gfx90a", b"\x7fELF" + bytes(2000))])
    (tmp / "b.bin").write_bytes(bundle)
    src = (f'asm(".section .hip_fatbin,\\"a\\"\\n.balign 4096\\n.incbin \\"{tmp / "b.bin"}\\"\\n'
           '.previous\\n");\nextern "C" int f() { return 1; }\n')
    return compile_shared(tmp, "libfat.so", src)


# ELF64 header: e_shoff u64 at 40, e_shnum u16 at 60, e_shstrndx u16 at 62; section headers:
# sh_size u64 at 32, sh_link u32 at 40
@pytest.mark.parametrize("escape", ["e_shnum", "e_shstrndx", "both"])
def test_extended_section_numbering_reads_as_the_plain_file(
    libfat: Path, tmp_path: Path, escape: str
) -> None:
    # gABI "Sections": e_shnum 0 (SHN_UNDEF) puts the count in section 0's sh_size, e_shstrndx
    # SHN_XINDEX (0xffff) the name table's index in its sh_link; what linkers write for 65280+
    # sections, and readelf reads ("0 (28)")
    plain = libfat.read_bytes()
    data = bytearray(plain)
    shoff = struct.unpack_from("<Q", data, 40)[0]
    shnum, shstrndx = struct.unpack_from("<HH", data, 60)
    if escape in ("e_shnum", "both"):
        struct.pack_into("<Q", data, shoff + 32, shnum)
        struct.pack_into("<H", data, 60, 0)
    if escape in ("e_shstrndx", "both"):
        struct.pack_into("<I", data, shoff + 40, shstrndx)
        struct.pack_into("<H", data, 62, 0xFFFF)
    ext = tmp_path / "libext.so"
    ext.write_bytes(bytes(data))
    shown = run(["readelf", "-h", "-S", "-W", str(ext)]).stdout
    assert ".dynsym" in shown and ".hip_fatbin" in shown  # readelf finds every section by name
    if escape != "e_shstrndx":
        assert f"Number of section headers:         0 ({shnum})" in shown
    got, want = read_elf_bytes(bytes(data)), read_elf_bytes(plain)
    assert not got.problems and (got.needed, got.soname) == (want.needed, want.soname)
    assert got.defined == want.defined and got.version_needs == want.version_needs
    assert got.gpu_code == want.gpu_code and [o.target for o in got.gpu_code] == ["gfx90a"]


def _section_headers(data: bytes | bytearray) -> list[tuple[int, ...]]:
    """ELF64 little-endian section headers, read by hand (gABI layout)."""
    shoff = struct.unpack_from("<Q", data, 40)[0]
    shentsize, shnum = struct.unpack_from("<HH", data, 58)
    return [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]


@pytest.mark.parametrize("named", [True, False])
def test_a_section_past_the_end_of_the_file_is_named_in_the_error(libv: Path, named: bool) -> None:
    data = bytearray(libv.read_bytes())
    shoff = struct.unpack_from("<Q", data, 40)[0]
    (i, dynsym), = [(i, h) for i, h in enumerate(_section_headers(data)) if h[1] == 11]  # SHT_DYNSYM
    at = shoff + i * 64
    struct.pack_into("<Q", data, at + 32, len(data))  # sh_size: the whole file, from its offset on
    if not named:
        struct.pack_into("<I", data, at, 0)  # sh_name 0: the empty name
    with pytest.raises(ElfError) as err:
        read_elf_bytes(bytes(data))
    what = ".dynsym" if named else "section"
    assert str(err.value) == (f"truncated or corrupt ELF: {what} at offset {dynsym[4]} (+{len(data)}) lies "
                              f"past the end of the file ({len(data)} bytes)")
