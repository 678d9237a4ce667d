"""The dynamic symbols and their versions as binutils' readelf shows them (``--dyn-syms`` for
binding, visibility and section; ``-V`` for each entry's ``.gnu.version`` index and name), on
libraries built with gcc (64-bit) and ld (32-bit) and a version script that defines one name
twice: ``foo@VER_1`` (a ``.symver`` alias) and plain ``foo`` (``*global*``, index 1). A name
with at least one real version lists every definition in table order, ``""`` for the
unversioned one; the patched copy with the two ``foo`` entries swapped must list them swapped.
"""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from tests.fixtures.native import compile_shared, section
from tests.fixtures.sparse import parse_in_rounds
from toolkit.core.proc import run
from toolkit.inspect.readers.elf import ElfInfo, Header, Image, _read_symbols, parse_elf, read_elf_bytes

SOURCE = """
#include <stdlib.h>
int foo_old(void) { return 1; }
__asm__(".symver foo_old, foo@VER_1");
int foo(void) { return 2; }
int bar(void) { return 3; }
__attribute__((weak)) int weakdef(void) { return 4; }
__attribute__((visibility("protected"))) int prot(void) { return 5; }
__attribute__((visibility("hidden"))) int hid(void) { return 6; }
void *grab(void) { return malloc(1); }
"""
SCRIPT = "VER_1 { global: bar; };\n"


def _readelf_symbols(path: Path) -> list[tuple[int, str, str, str, str, str]]:
    """(index, bind, visibility, ndx, name without version, .gnu.version name) per entry."""
    syms = run(["readelf", "--dyn-syms", "-W", str(path)]).stdout
    vers = run(["readelf", "-V", "-W", str(path)]).stdout
    table = vers.split("Version symbols section")[1].split("Version ")[0]
    names: list[str] = []
    for line in table.splitlines():
        if re.match(r"\s+[0-9a-f]+:", line):
            names += [m.group(1) for m in re.finditer(r"\d+h?\s*\(([^)]*)\)", line)]
    out = []
    for line in syms.splitlines():
        m = re.match(r"\s+(\d+):\s+\S+\s+\S+\s+\S+\s+(\S+)\s+(\S+)\s+(\S+)\s*(\S*)", line)
        if m:
            i = int(m.group(1))
            out.append((i, m.group(2), m.group(3), m.group(4), m.group(5).split("@")[0], names[i]))
    return out


def _expected(path: Path) -> tuple[set[bytes], dict[bytes, tuple[str, ...]], set[tuple[bytes, str | None]]]:
    """What the gABI and the GNU versioning rules say the checks may use: exported definitions
    (GLOBAL, WEAK or UNIQUE; DEFAULT or PROTECTED), the versions of every name defined at a
    real version ("" for the base/global index), and the GLOBAL undefined names with the
    version they need."""
    defined: set[bytes] = set()
    versions: dict[bytes, list[str]] = {}
    undefined: set[tuple[bytes, str | None]] = set()
    for _i, bind, vis, ndx, name, ver in _readelf_symbols(path):
        if not name:
            continue
        real = None if ver in ("*local*", "*global*") else ver
        if ndx == "UND":
            if bind == "GLOBAL":
                undefined.add((name.encode(), real))
            continue
        if bind in ("GLOBAL", "WEAK", "UNIQUE") and vis in ("DEFAULT", "PROTECTED"):
            defined.add(name.encode())
            versions.setdefault(name.encode(), []).append(real or "")
    kept = {n: tuple(v) for n, v in versions.items() if any(v)}
    return defined, kept, undefined


def _check(path: Path) -> ElfInfo:
    defined, versions, undefined = _expected(path)
    data = path.read_bytes()
    for pack in (False, True):
        info = parse_elf(Image.whole(data), pack)
        if pack:
            assert info.defined == frozenset() and info.undefined == []
            info.narrow(frozenset(n for batch in info.defined_batches() for n in batch))
        assert info.defined == defined
        assert info.defined_versions == versions
        assert set(info.undefined) == undefined and len(info.undefined) == len(undefined)
        assert info.has_versym
    return read_elf_bytes(data)


@pytest.fixture(scope="module")
def libs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("symver")
    (tmp / "v.map").write_text(SCRIPT)
    out = {"64": compile_shared(tmp, "libv64.so", SOURCE, lang="c",
                                flags=[f"-Wl,--version-script={tmp / 'v.map'}"])}
    if shutil.which("ld"):
        src = tmp / "v32.c"
        src.write_text(SOURCE.replace("#include <stdlib.h>", "void *malloc(unsigned long);"))
        obj = tmp / "v32.o"
        got = run(["gcc", "-m32", "-fPIC", "-c", str(src), "-o", str(obj)], check=False)
        if got.returncode == 0:
            linked = run(["ld", "-m", "elf_i386", "-shared", "-o", str(tmp / "libv32.so"), str(obj),
                          f"--version-script={tmp / 'v.map'}", "-soname", "libv32.so"], check=False)
            if linked.returncode == 0:
                out["32"] = tmp / "libv32.so"
    return out


def _swap_foo(path: Path, dest: Path) -> Path:
    """A copy whose ``foo@VER_1`` and ``foo`` entries (and their .gnu.version halves) trade places."""
    rows = _readelf_symbols(path)
    foos = [i for i, _b, _v, ndx, name, _ver in rows if name == "foo" and ndx != "UND"]
    assert len(foos) == 2, rows
    a, b = foos
    size = 24 if run(["readelf", "-h", str(path)]).stdout.count("ELF64") else 16
    data = bytearray(path.read_bytes())
    for sec, width in ((".dynsym", size), (".gnu.version", 2)):
        off, _ = section(path, sec)
        x, y = data[off + a * width : off + (a + 1) * width], data[off + b * width : off + (b + 1) * width]
        data[off + a * width : off + (a + 1) * width], data[off + b * width : off + (b + 1) * width] = y, x
    dest.write_bytes(bytes(data))
    return dest


@pytest.mark.parametrize("bits", ["64", "32"])
def test_a_name_defined_with_and_without_a_version_lists_both(libs: dict[str, Path], bits: str,
                                                              tmp_path: Path) -> None:
    if bits not in libs:
        pytest.skip("no 32-bit compiler")
    lib = libs[bits]
    info = _check(lib)
    # the fixture did what it says: readelf shows foo twice, at VER_1 and unversioned
    foo = [(ver) for _i, _b, _v, ndx, name, ver in _readelf_symbols(lib) if name == "foo" and ndx != "UND"]
    assert sorted(foo) == ["*global*", "VER_1"]
    assert info.version_defs == frozenset({"VER_1"})
    assert b"hid" not in info.defined and {b"weakdef", b"prot", b"bar"} <= info.defined
    first = info.defined_versions[b"foo"]
    swapped = _swap_foo(lib, tmp_path / "swapped.so")
    again = _check(swapped)
    assert again.defined_versions[b"foo"] == first[::-1]
    assert set(first) == {"VER_1", ""}


def test_versions_are_read_from_a_big_endian_table() -> None:
    """A hand-made ELF64 big-endian .dynsym/.gnu.version pair (gABI layout): the versym
    halves are read in the file's byte order, so index 2 is 0x0002, not 0x0200."""
    from toolkit.inspect.readers.elf import Header, _read_symbols

    hdr = Header(64, False, 0, 0, 3, 21, 0, 0, 0, 0, 0, 0, 0, 0)
    strtab = b"\0foo\0VER_1\0"
    def sym(name: int, info: int, shndx: int) -> bytes:
        return struct.pack(">IBBHQQ", name, info, 0, shndx, 0x1000, 4)
    raw = sym(0, 0, 0) + sym(1, 0x12, 7) + sym(1, 0x12, 7)
    versym = struct.pack(">HHH", 0, 1, 2)
    info = ElfInfo(machine=21, elf_class=64, type=3)
    _read_symbols(info, raw, strtab, versym, hdr, {}, {2: "VER_1"})
    assert info.defined == {b"foo"}
    assert info.defined_versions == {b"foo": ("", "VER_1")}


def test_a_library_without_version_definitions_packs_every_exported_name(tmp_path: Path) -> None:
    # no version script: no .gnu.version_d, so pack builds the names without a set
    source = SOURCE.replace('__asm__(".symver foo_old, foo@VER_1");', "")
    lib = compile_shared(tmp_path, "libplain.so", source, lang="c")
    defined, versions, undefined = _expected(lib)
    assert versions == {} and {b"foo", b"foo_old", b"bar", b"weakdef", b"prot"} <= defined
    info = _check(lib)
    assert info.version_defs == frozenset() and info.defined_versions == {}
    packed = parse_elf(Image.whole(lib.read_bytes()), True)
    assert packed.packed is not None and packed.defined == frozenset()
    names = [n for batch in packed.defined_batches(size=8) for n in batch]
    assert sorted(names) == sorted(defined)  # each once, none cut or run together
    assert (b"malloc", "GLIBC_2.2.5") in undefined


@pytest.mark.parametrize(("elf_class", "little"), [(64, True), (32, True), (32, False)])
def test_hand_made_symbols_by_binding_visibility_and_version(elf_class: int, little: bool) -> None:
    """Elf64_Sym (name u32, info u8, other u8, shndx u16, value, size) / Elf32_Sym (name,
    value, size, info, other, shndx); st_info >> 4 is the binding (LOCAL 0, GLOBAL 1, WEAK 2,
    GNU_UNIQUE 10), st_other & 3 the visibility (DEFAULT 0, INTERNAL 1, HIDDEN 2, PROTECTED 3)."""
    from toolkit.inspect.readers.elf import Header, _read_symbols

    e = "<" if little else ">"
    names = [b"glob", b"weak", b"uniq", b"prot", b"hid", b"intern", b"loc", b"und", b"wund", b"vund", b"past"]
    strtab = b"\0" + b"".join(n + b"\0" for n in names)
    off = {n: strtab.index(b"\0" + n + b"\0") + 1 for n in names}

    def sym(name: bytes | None, bind: int, other: int, shndx: int) -> bytes:
        n = off[name] if name else 0
        if elf_class == 64:
            return struct.pack(e + "IBBHQQ", n, bind << 4 | 2, other, shndx, 0, 0)
        return struct.pack(e + "IIIBBH", n, 0, 0, bind << 4 | 2, other, shndx)

    rows = [(None, 0, 0, 0, 0), (b"glob", 1, 0, 7, 2), (b"weak", 2, 0, 7, 0x8003), (b"uniq", 10, 0, 7, 1),
            (b"prot", 1, 3, 7, 0), (b"hid", 1, 2, 7, 0), (b"intern", 1, 1, 7, 0), (b"loc", 0, 0, 7, 0),
            (None, 1, 0, 7, 2), (b"und", 1, 0, 0, 4), (b"wund", 2, 0, 0, 4), (b"vund", 1, 0, 0, 0x8005),
            (b"past", 1, 0, 0, 1)]
    raw = b"".join(sym(n, b, o, s) for n, b, o, s, _v in rows) + b"\x01\x02"  # a cut entry: ignored
    # the last symbol has no .gnu.version entry (the table is one short, plus a stray byte)
    versym = b"".join(struct.pack(e + "H", v) for *_x, v in rows[:-1]) + b"\x07"
    hdr = Header(elf_class, little, 0, 0, 3, 62, 0, 0, 0, 0, 0, 0, 0, 0)
    info = ElfInfo(machine=62, elf_class=elf_class, type=3)
    need = {4: ("GLIBC_2.2.5", "libc.so.6"), 5: ("GLIBC_2.34", "libc.so.6")}
    _read_symbols(info, raw, strtab, versym, hdr, need, {2: "V2", 3: "V3"})
    assert info.defined == {b"glob", b"weak", b"uniq", b"prot"}
    assert info.defined_versions == {b"glob": ("V2",), b"weak": ("V3",)}  # index 0x8003: hidden bit off
    assert info.undefined == [(b"und", "GLIBC_2.2.5"), (b"vund", "GLIBC_2.34"), (b"past", None)]
    assert info.has_versym
    bare = ElfInfo(machine=62, elf_class=elf_class, type=3)
    _read_symbols(bare, raw, strtab, b"", hdr, need, {})
    assert not bare.has_versym and bare.defined_versions == {}
    assert bare.undefined == [(b"und", None), (b"vund", None), (b"past", None)]


@pytest.mark.parametrize("cut", [0, 1])
def test_a_symbol_name_outside_dynstr_is_corrupt(cut: int) -> None:
    from toolkit.core.errors import ElfError
    from toolkit.inspect.readers.elf import Header, _read_symbols

    hdr = Header(64, True, 0, 0, 3, 62, 0, 0, 0, 0, 0, 0, 0, 0)
    strtab = b"\0abc\0" if not cut else b"\0abc"  # offset 5 past the end / "abc" without its NUL
    raw = struct.pack("<IBBHQQ", 5 if not cut else 1, 0x12, 0, 7, 0, 0)
    with pytest.raises(ElfError) as err:
        _read_symbols(ElfInfo(machine=62, elf_class=64, type=3), raw, strtab, b"", hdr, {}, {})
    assert str(err.value) == f"corrupt ELF: symbol name offset {5 if not cut else 1} outside .dynstr"
    # the last offset inside the table (its final NUL) is an empty name, not an error
    raw = struct.pack("<IBBHQQ", 4, 0x12, 0, 7, 0, 0)
    info = ElfInfo(machine=62, elf_class=64, type=3)
    _read_symbols(info, raw, b"\0abc\0", b"", hdr, {}, {})
    assert info.defined == {b""}


def test_a_sparse_image_asks_for_every_dynamic_table_in_one_round(libs: dict[str, Path]) -> None:
    """Given only its ELF header, parsing asks for the section table, then the name table,
    then every table the symbols need at once (offsets and sizes as readelf -S lists them),
    and then parses as the whole file does."""

    lib = libs["64"]
    data = lib.read_bytes()
    hdr = run(["readelf", "-h", "-W", str(lib)]).stdout
    shoff = int(re.search(r"Start of section headers:\s+(\d+)", hdr).group(1))  # type: ignore[union-attr]
    shnum = int(re.search(r"Number of section headers:\s+(\d+)", hdr).group(1))  # type: ignore[union-attr]

    def rng(name: str) -> tuple[int, int]:
        off, size = section(lib, name)
        return off, off + size

    got, rounds = parse_in_rounds(data)
    assert rounds == [{(shoff, shoff + shnum * 64)}, {rng(".shstrtab")},
                      {rng(n) for n in (".dynsym", ".dynstr", ".dynamic", ".gnu.version", ".gnu.version_r",
                                        ".gnu.version_d")}]
    whole = parse_elf(Image.whole(data))
    assert (got.defined, got.defined_versions, got.undefined, got.needed, got.soname, got.scan) == (
        whole.defined, whole.defined_versions, whole.undefined, whole.needed, whole.soname, whole.scan)


def test_a_symbol_past_the_version_table_is_unversioned_whatever_index_1_names() -> None:
    # gABI: a symbol without a .gnu.version entry has none; index 1 (VER_NDX_GLOBAL) would
    # look it up, and a corrupt table may name index 1 (a real one never does: it is the base)
    hdr = Header(64, True, 0, 0, 3, 62, 0, 0, 0, 0, 0, 0, 0, 0)
    strtab = b"\0und\0def\0"
    raw = (bytes(24) + struct.pack("<IBBHQQ", 1, 0x12, 0, 0, 0, 0)  # und: undefined, global
           + struct.pack("<IBBHQQ", 5, 0x12, 0, 7, 0, 0))  # def: defined, global
    info = ElfInfo(machine=62, elf_class=64, type=3)
    _read_symbols(info, raw, strtab, struct.pack("<H", 0), hdr, {1: ("BOGUS", "libc.so.6")},
                  {1: "BOGUS"})
    assert info.undefined == [(b"und", None)]
    assert info.defined == {b"def"} and info.defined_versions == {}


def test_version_needs_are_read_as_many_as_the_section_says(tmp_path: Path) -> None:
    """sh_info of .gnu.version_r is its number of entries (the GNU versioning spec, LSB); a
    chain that goes on past it is not read. readelf, the judge, reads the same count."""
    source = ("#include <math.h>\n#include <stdlib.h>\n"
              "double f(double x) { return exp(x) + (double)(long)malloc(1); }\n")
    lib = compile_shared(tmp_path, "libvn.so", source, lang="c", libs=["libm.so.6"])
    data = bytearray(lib.read_bytes())
    shoff, = struct.unpack_from("<Q", data, 0x28)  # Elf64_Ehdr: e_shoff, e_shentsize
    shentsize, = struct.unpack_from("<H", data, 0x3A)
    sections = subprocess.run(["readelf", "-S", "-W", str(lib)], capture_output=True, text=True,
                              check=True).stdout
    idx = int(re.search(r"\[\s*(\d+)\] \.gnu\.version_r ", sections).group(1))  # type: ignore[union-attr]
    at = shoff + idx * shentsize + 44  # Elf64_Shdr.sh_info
    assert struct.unpack_from("<I", data, at) == (2,)  # libm's and libc's needs
    struct.pack_into("<I", data, at, 1)
    cut = tmp_path / "libvn-one.so"
    cut.write_bytes(bytes(data))
    shown = subprocess.run(["readelf", "-V", "-W", str(cut)], capture_output=True, text=True,
                           check=True).stdout
    files = re.findall(r"File: (\S+)", shown)
    assert "contains 1 entry" in shown and len(files) == 1
    info = parse_elf(Image.whole(bytes(data)))
    assert list(info.version_needs) == files
    whole = parse_elf(Image.whole(lib.read_bytes()))
    assert sorted(whole.version_needs) == ["libc.so.6", "libm.so.6"]
