"""Whole-function tests of toolkit.inspect.readers.elf's table readers: string tables (gABI
"String Table": NUL-terminated names at byte offsets) and the dynamic section (Elf64_Dyn
``d_tag`` sxword + ``d_val`` xword, Elf32_Dyn sword + word; DT_NULL ends it), against
binutils' readelf on gcc-built libraries and hand-computed bytes."""

from __future__ import annotations

import re
import struct
from pathlib import Path

import pytest

from tests.fixtures.native import compile_shared
from toolkit.core.proc import run
from toolkit.inspect.readers.elf import (
    ElfError,
    ElfInfo,
    Header,
    _cstr,
    _read_dynamic,
    _str,
    read_elf_bytes,
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
