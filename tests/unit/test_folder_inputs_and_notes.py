"""A folder of libraries as ``toolkit check`` reads it (every ELF file by its path, a damaged
one kept with its folder as ``$ORIGIN`` and its error, symlinks resolving to their targets,
files named like libraries that are not ELF named), the note for glibc symbols an extension
uses without linking their library, and the content key of a wheel (METADATA included)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.fixtures.native import system_lib
from tests.fixtures.wheels import make_wheel
from toolkit.core.errors import UsageError
from toolkit.inspect.checks import _interpreter_notes, check_paths
from toolkit.inspect.inputs import Input, collect_dir, open_input
from toolkit.inspect.readers.elf import ElfInfo
from toolkit.inspect.report import WheelResult


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    d = tmp_path / "libs"
    (d / "sub").mkdir(parents=True)
    shutil.copy(system_lib("libz.so.1"), d / "libz.so.1")
    os.symlink("libz.so.1", d / "libz.so")
    (d / "sub" / "libbad.so").write_bytes(b"\x7fELF" + b"\x02\x01\x01" + b"\0" * 9)  # header cut
    (d / "libfake.so.2").write_text("not a library\n")
    (d / "README").write_text("ignored\n")
    return d


def _collect(path: Path) -> Input:
    inp = open_input(path)
    inp.result = WheelResult(str(path))
    collect_dir(inp)
    return inp


def test_a_folder_is_read_file_by_file(folder: Path) -> None:
    inp = _collect(folder)
    by_path = {lib.path: lib for lib in inp.libs}
    good, bad = by_path[str(folder / "libz.so.1")], by_path[str(folder / "sub" / "libbad.so")]
    assert set(by_path) == {str(folder / "libz.so.1"), str(folder / "sub" / "libbad.so")}
    assert good.info is not None and good.info.soname == "libz.so.1" and good.error is None
    assert good.origin == str(folder.resolve())
    # a damaged library keeps its folder (its $ORIGIN) and says why it cannot be read
    assert bad.info is None and bad.error and bad.origin == str((folder / "sub").resolve())
    assert [(f.check, f.severity, f.library, f.message) for f in inp.result.findings] == [
        ("elf", "error", str(folder / "libfake.so.2"),
         f"{folder / 'libfake.so.2'} is named like a library but is not an ELF file")]
    # the symlink is indexed under its own name, pointing at its target's library
    assert inp.index[os.path.normpath(str(folder.resolve() / "libz.so"))] is good
    assert inp.index[os.path.normpath(str((folder / "libz.so.1").resolve()))] is good
    assert sorted(inp.names) == sorted(str(p) for p in folder.rglob("*") if p.is_file()
                                       and not p.is_symlink())


def test_one_library_is_its_own_input(folder: Path) -> None:
    inp = _collect(folder / "libz.so.1")
    assert [lib.path for lib in inp.libs] == [str(folder / "libz.so.1")] and inp.names == [inp.libs[0].path]


def test_a_folder_without_elf_files_is_bad_input(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(UsageError) as err:
        _collect(tmp_path)
    assert str(err.value) == (f"{tmp_path}: no ELF files found (give wheels, folders of .so files "
                              "or .so files)")


def _info() -> ElfInfo:
    return ElfInfo(machine=62, elf_class=64, type=3)


def test_interpreter_symbols_are_noted_once_per_library_with_the_flag_to_link_it() -> None:
    provided = {"libm.so.6": ["cos", "sin", "exp", "log", "pow", "tan", "sqrt"],
                "libpthread.so.0": ["pthread_create"]}
    notes = _interpreter_notes("demo/_ext.so", provided, _info())
    assert [(f.check, f.severity, f.library, f.cause) for f in notes] == [
        ("interpreter-symbols", "info", "demo/_ext.so", "uses libm.so.6 without linking it"),
        ("interpreter-symbols", "info", "demo/_ext.so", "uses libpthread.so.0 without linking it")]
    assert notes[0].message == (
        "demo/_ext.so uses 7 libm.so.6 symbols (cos, sin, exp, log, pow and 2 more) without linking "
        "libm.so.6: the interpreter provides them, so the import works; link m explicitly (-lm)")
    assert notes[1].message == (
        "demo/_ext.so uses 1 libpthread.so.0 symbol (pthread_create) without linking "
        "libpthread.so.0: the interpreter provides them, so the import works; link pthread "
        "explicitly (-lpthread)")
    five = _interpreter_notes("x.so", {"libdl.so.2": ["a", "b", "c", "d", "e"]}, _info())
    assert "(a, b, c, d, e) without" in five[0].message and "(-ldl)" in five[0].message
    assert _interpreter_notes("x.so", {}, _info()) == []


def test_wheels_differing_only_in_metadata_have_different_content_keys(tmp_path: Path) -> None:
    files = {"demo/__init__.py": "x = 1\n"}
    a = make_wheel(tmp_path / "a", "demo", "1.0", "py3-none-any", files)
    b = make_wheel(tmp_path / "b", "demo", "1.0", "py3-none-any", files, requires=["torch"])
    c = make_wheel(tmp_path / "c", "demo", "1.0", "py3-none-any", files)
    ka, kb, kc = (check_paths([w]).wheels[0].content_key for w in (a, b, c))
    assert ka is not None and ka == kc  # the same contents, the same key
    assert kb != ka  # a Requires-Dist line changes what installing the wheel does


def test_a_folder_check_reports_each_library_and_the_unreadable_one(folder: Path) -> None:
    report = check_paths([folder], system_path=[])
    (w,) = report.wheels
    kinds = {lr.path: lr.kind for lr in w.libraries}
    assert kinds == {str(folder / "libz.so.1"): "shared-library",
                     str(folder / "sub" / "libbad.so"): "unreadable"}
    libz = next(lr for lr in w.libraries if lr.kind == "shared-library")
    assert libz.needed == ["libc.so.6"]  # readelf -d libz.so.1: NEEDED libc.so.6 only
    bad = str(folder / "sub" / "libbad.so")
    (elf,) = [f for f in w.findings if f.library == bad]
    assert (elf.check, elf.severity, elf.cause) == ("elf", "error", "corrupt or unreadable ELF")
    assert elf.message.startswith(f"{bad}: corrupt or unreadable ELF (") and elf.message.endswith(
        "): it cannot be judged")
    assert not w.ok and w.failed_checks["elf"] == 2  # the damaged library and the fake one
    assert w.tags == [] and w.content_key is None  # a folder has neither
