"""toolkit.inspect.readers.elf against pyelftools (an independent reader) on real system libraries."""

from __future__ import annotations

import re
import struct
from pathlib import Path

import pytest
from elftools.elf.dynamic import DynamicSection
from elftools.elf.elffile import ELFFile
from elftools.elf.gnuversions import GNUVerNeedSection

from tests.fixtures.native import compile_shared
from tests.fixtures.sparse import parse_in_rounds
from toolkit.core.errors import ElfError, UsageError
from toolkit.core.proc import run
from toolkit.inspect.readers.amdgpu import amdgpu_target
from toolkit.inspect.readers.elf import EM_AMDGPU, Image, NeedRanges, parse_elf, read_elf_bytes
from toolkit.inspect.readers.members import load_file


def _system_lib(name: str) -> Path:
    for d in ("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64"):
        p = Path(d) / name
        if p.exists():
            return p.resolve()
    pytest.skip(f"{name} not found")


@pytest.fixture(scope="module", params=["libstdc++.so.6", "libz.so.1", "libm.so.6"])
def system_lib(request: pytest.FixtureRequest) -> Path:
    return _system_lib(request.param)


def _oracle(path: Path) -> dict[str, object]:
    with open(path, "rb") as f:
        elf = ELFFile(f)
        dyn = next(s for s in elf.iter_sections() if isinstance(s, DynamicSection))
        needed = [t.needed for t in dyn.iter_tags() if t.entry.d_tag == "DT_NEEDED"]
        vneed = next((s for s in elf.iter_sections() if isinstance(s, GNUVerNeedSection)), None)
        needs: dict[str, set[str]] = {}
        if vneed is not None:
            for v, auxes in vneed.iter_versions():
                needs[v.name] = {a.name for a in auxes}
        dynsym = elf.get_section_by_name(".dynsym")
        undef, defined = set(), set()
        for sym in dynsym.iter_symbols():
            if not sym.name:
                continue
            if sym["st_shndx"] == "SHN_UNDEF":
                if sym["st_info"]["bind"] == "STB_GLOBAL":
                    undef.add(sym.name)
            elif sym["st_info"]["bind"] in ("STB_GLOBAL", "STB_WEAK", "STB_LOOS") and sym["st_other"][
                "visibility"
            ] in ("STV_DEFAULT", "STV_PROTECTED"):
                defined.add(sym.name)
    return {"needed": needed, "needs": needs, "undef": undef, "defined": defined}


def _readelf_soname(path: Path) -> str | None:
    """DT_SONAME as binutils' ``readelf -d`` prints it (``Library soname: [libz.so.1]``)."""
    out = run(["readelf", "-d", "-W", str(path)]).stdout
    found = re.findall(r"\(SONAME\)\s+Library soname: \[([^\]]*)\]", out)
    assert len(found) <= 1, out
    return found[0] if found else None


def test_matches_pyelftools(system_lib: Path) -> None:
    ours = load_file(system_lib)
    ref = _oracle(system_lib)
    assert list(ours.needed) == ref["needed"]
    assert {k: set(v) for k, v in ours.version_needs.items()} == ref["needs"]
    assert {n.decode() for n, _ in ours.undefined} == ref["undef"]
    assert {n.decode() for n in ours.defined} == ref["defined"]
    expected = _readelf_soname(system_lib)
    assert expected is not None, f"readelf finds no SONAME in {system_lib}"
    assert ours.soname == expected


@pytest.mark.parametrize("soname", ["libexact.so.3", "libother-name.so"])
def test_soname_is_the_one_the_linker_was_given(tmp_path: Path, soname: str) -> None:
    """Built with ``g++ -Wl,-soname,<soname>`` under a different file name."""
    lib = compile_shared(tmp_path, "libfile.so", "int f() { return 1; }\n", soname=soname)
    assert _readelf_soname(lib) == soname  # the fixture did what it says
    assert load_file(lib).soname == soname
    assert read_elf_bytes(lib.read_bytes()).soname == soname


def test_no_soname(tmp_path: Path) -> None:
    lib = compile_shared(tmp_path, "libnone.so", "int f() { return 1; }\n", soname="")
    assert _readelf_soname(lib) is None
    assert load_file(lib).soname is None


def test_versions_of_undefined_and_defined_symbols() -> None:
    info = load_file(_system_lib("libstdc++.so.6"))
    versions = dict(info.undefined)
    assert versions[b"malloc"] is not None and versions[b"malloc"].startswith("GLIBC_")
    assert "GLIBCXX_3.4" in info.version_defs
    # std::terminate() is defined at GLIBCXX_3.4
    assert "GLIBCXX_3.4" in info.defined_versions[b"_ZSt9terminatev"]


def test_whole_vs_sparse_image_need_ranges() -> None:
    data = _system_lib("libz.so.1").read_bytes()
    whole = read_elf_bytes(data)
    sparse = Image(len(data), [(0, data[:64])])
    with pytest.raises(NeedRanges):
        parse_elf(sparse)
    got, _ = parse_in_rounds(data, most=5)  # given what it asks for until it succeeds
    assert got.defined == whole.defined and got.needed == whole.needed


@pytest.mark.parametrize(
    "data",
    [b"", b"\x7fEL", b"not an elf at all", b"\x7fELF\x09\x01" + b"\0" * 60, b"\x7fELF\x02\x01\x01"],
)
def test_bad_input_raises_elf_error(data: bytes) -> None:
    with pytest.raises(ElfError) as err:
        read_elf_bytes(data)
    assert isinstance(err.value, UsageError)


def test_truncated_library_is_an_elf_error() -> None:
    data = _system_lib("libz.so.1").read_bytes()
    with pytest.raises(ElfError, match="truncated|corrupt"):
        read_elf_bytes(data[: len(data) // 2])


def _code_object(flags: int, abiversion: int) -> bytes:
    ident = b"\x7fELF" + bytes([2, 1, 1, 64, abiversion]) + b"\0" * 7
    return ident + struct.pack("<HHIQQQIHHHHHH", 3, EM_AMDGPU, 1, 0, 0, 0, flags, 64, 56, 0, 64, 0, 0)


@pytest.mark.parametrize(
    ("flags", "abi", "target"),
    [
        (0x3F, 2, "gfx90a"),
        (0x3F | 0x300, 2, "gfx90a:xnack+"),
        (0x30 | 0x200 | 0xC00, 2, "gfx908:sramecc+:xnack-"),
        (0x4C | 0x100 | 0x400, 3, "gfx942"),  # "any" settings carry no feature
        (0x2F | 0x100, 1, "gfx906:xnack+"),  # code object v3
        (0x51, 4, "gfx9-generic"),
    ],
)
def test_amdgpu_code_object_target(flags: int, abi: int, target: str) -> None:
    assert amdgpu_target(flags, abi) == target
    info = read_elf_bytes(_code_object(flags, abi))
    assert info.is_gpu_code_object and info.gpu_targets == (target,)
