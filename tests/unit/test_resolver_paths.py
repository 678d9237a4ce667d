"""Finding needed libraries as ld.so(8) does: ``$ORIGIN``/``${ORIGIN}`` are the needing
object's folder, an empty element is left out (the current directory is never the
wheel's), absolute entries count only for files on disk; ``--with`` locations are indexed
by file name and by SONAME; a library loads only where its ELF class, data encoding and
machine match (a 32-bit libc never satisfies a 64-bit library)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.fixtures.native import system_lib
from tests.fixtures.wheels import make_wheel
from toolkit.core.errors import UsageError
from toolkit.inspect.readers.elf import ElfInfo
from toolkit.inspect.readers.members import load_file
from toolkit.inspect.readers.resolver import Lib, Resolver, _expand, compatible, defines, with_libraries

LIB32 = Path("/usr/lib32/libc.so.6")
LIB64 = Path("/usr/lib/x86_64-linux-gnu/libc.so.6")


def _lib(origin: str) -> Lib:
    return Lib("x.so", origin, ElfInfo(machine=62, elf_class=64, type=3))


@pytest.mark.parametrize(("entries", "origin", "want"), [
    (["$ORIGIN"], "wheel:demo", ["wheel:demo"]),
    (["${ORIGIN}/../demo.libs"], "wheel:demo", ["wheel:demo.libs"]),
    (["$ORIGIN/lib"], "wheel:", ["wheel:lib"]),  # a library at the wheel's top
    (["", "$ORIGIN"], "wheel:demo", ["wheel:demo"]),  # the empty element is dropped
    (["/usr/lib", "rel"], "wheel:demo", []),  # neither is the wheel's
    (["$ORIGIN/../lib"], "/opt/app/bin", ["/opt/app/lib"]),
    (["${ORIGIN}"], "/opt/app", ["/opt/app"]),
    (["/usr/lib", "rel"], "/opt/app", ["/usr/lib"]),
])
def test_search_path_entries_expand_as_ld_so_expands_them(
    entries: list[str], origin: str, want: list[str]
) -> None:
    assert _expand(entries, _lib(origin)) == want


@pytest.mark.skipif(not LIB32.exists(), reason="needs the 32-bit libc (libc6-i386)")
def test_only_a_library_of_the_same_class_encoding_and_machine_loads() -> None:
    a, b = load_file(LIB64), load_file(LIB32)
    assert compatible(a, a) and not compatible(a, b)
    assert not compatible(a, ElfInfo(machine=62, elf_class=64, type=3, little=False))
    assert not compatible(a, ElfInfo(machine=183, elf_class=64, type=3))
    r = Resolver({}, ["/usr/lib32", str(LIB64.parent)])
    assert r.on_host("libc.so.6", a) == str(LIB64)  # the 32-bit copy comes first but cannot load
    assert r.on_host("libc.so.6", b) == str(LIB32)
    assert r.on_host("libc.so.6", None) == str(LIB32)
    assert r.on_host("libnosuch.so.9", a) is None
    assert r.fs_lib(str(LIB64)) is r.fs_lib(str(LIB64))  # read once


def test_defines_follows_symbol_versions() -> None:
    info = ElfInfo(machine=62, elf_class=64, type=3, defined=frozenset({b"f", b"g", b"h"}),
                   defined_versions={b"f": ("V_1", "V_2"), b"h": ("",)})
    lib = Lib("l.so", "/", info)
    assert defines(lib, b"f", None) and defines(lib, b"f", "V_2") and not defines(lib, b"f", "V_3")
    assert defines(lib, b"g", "ANY_1")  # defined without versions: any reference binds
    assert defines(lib, b"h", "ANY_1")  # the base version
    assert not defines(lib, b"nope", None) and not defines(Lib("u", "/", None), b"f", None)


def test_with_locations_are_indexed_by_file_name_and_soname(tmp_path: Path) -> None:
    libz = system_lib("libz.so.1")
    d = tmp_path / "dir"
    d.mkdir()
    shutil.copy(libz, d / "libz.so.1")
    (d / "README").write_text("x")
    renamed = tmp_path / "libz-copy.so"
    shutil.copy(libz, renamed)
    found = with_libraries([d, renamed])
    assert sorted(found) == ["README", "libz-copy.so", "libz.so.1"]
    assert [lib.path for lib in found["libz.so.1"]] == [str(d / "libz.so.1"), str(renamed)]
    lazy = found["libz.so.1"][0]
    assert lazy.info is None and lazy.loader is not None  # loaded on first use
    lazy.load()
    assert lazy.info is not None and lazy.info.soname == "libz.so.1" and lazy.loader is None
    readme = found["README"][0]
    readme.load()
    assert readme.info is None and readme.error  # not ELF: an error, not a crash
    with pytest.raises(UsageError) as err:
        with_libraries([tmp_path / "nope"])
    assert str(err.value) == f"--with {tmp_path / 'nope'}: no such file or directory"
    (tmp_path / "bad.so").write_text("text")
    with pytest.raises(UsageError) as err:
        with_libraries([tmp_path / "bad.so"])
    assert str(err.value).startswith(f"--with {tmp_path / 'bad.so'}: not a readable ELF library (")


def test_a_folder_library_finds_its_neighbour_through_origin(tmp_path: Path) -> None:
    libz = system_lib("libz.so.1")
    shutil.copy(libz, tmp_path / "libz.so.1")
    user_info = ElfInfo(machine=62, elf_class=64, type=3, needed=("libz.so.1", "libc.so.6", "libq.so"),
                        runpath=("$ORIGIN",))
    user = Lib(str(tmp_path / "user.so"), str(tmp_path), user_info)
    r = Resolver({}, allowed=frozenset({"libc.so.6"}))
    order, missing, by_name, assumed = r.closure(user, {})
    assert [lib.path for lib in order] == [str(user.path), os.path.join(str(tmp_path), "libz.so.1")]
    assert by_name["libz.so.1"] is order[1]
    assert assumed == ["libc.so.6"] and missing == [("libq.so", str(user.path))]


def test_a_with_wheel_indexes_its_libraries_with_their_folder_as_origin(tmp_path: Path) -> None:
    whl = make_wheel(tmp_path, "provider", "1.0", "py3-none-linux_x86_64",
                     {"provider/lib/libz.so.1": system_lib("libz.so.1"), "provider/x.py": ""})
    found = with_libraries([whl])
    (lib,) = found["libz.so.1"]
    assert (lib.path, lib.origin, lib.info) == (
        f"{whl.name}:provider/lib/libz.so.1", "wheel:provider/lib", None)
    lib.load()
    assert lib.info is not None and lib.info.soname == "libz.so.1"
    assert "x.py" not in found
