"""Whole-function tests of toolkit/inspect/inputs.py (issue 19, part 8: session 25): a folder
read file by file, a wheel's members read once, and what a path given to ``toolkit check`` is.

Truths: PEP 376's RECORD hash format (computed here with hashlib and base64), readelf on the
system's libz.so.1, ld.so(8)'s $ORIGIN (a library's own folder), and the project's rule that
outside input is never printed raw.
"""

from __future__ import annotations

import os
import shutil
import zipfile
from pathlib import Path

import pytest

from tests.fixtures.native import system_lib
from tests.fixtures.wheels import make_wheel, record_digest, wrong_crc
from toolkit.core.errors import UsageError
from toolkit.inspect import inputs
from toolkit.inspect.checks import check_paths
from toolkit.inspect.inputs import Input, collect_dir, collect_wheel, open_input
from toolkit.inspect.report import Finding, WheelResult

# --- collect_dir: a folder read file by file ---------------------------------------------

def _collect(path: Path) -> Input:
    inp = open_input(path)
    inp.result = WheelResult(str(path))
    collect_dir(inp)
    return inp


def test_an_unreadable_file_is_an_error_naming_it_and_the_reason(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    # root reads any file whatever its mode, so a refused open(2) stands in for chmod 000
    shutil.copy(system_lib("libz.so.1"), tmp_path / "libz.so.1")
    locked = tmp_path / "liblocked.so"
    locked.write_bytes(b"\x7fELF")
    real_open = open

    def refuse(path: Path, *args: object, **kw: object) -> object:
        if Path(path) == locked:
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args, **kw)  # type: ignore[call-overload]

    monkeypatch.setattr(inputs, "open", refuse, raising=False)
    inp = _collect(tmp_path)
    assert inp.result.findings == [Finding(
        "elf", "error", str(locked), f"{locked}: unreadable ([Errno 13] Permission denied: '{locked}')")]
    assert [lib.path for lib in inp.libs] == [str(tmp_path / "libz.so.1")]  # the rest is still read
    assert inp.names == [str(locked), str(tmp_path / "libz.so.1")]  # in sorted order


def test_a_folder_whose_only_files_failed_is_judged_not_refused(tmp_path: Path) -> None:
    # nothing readable, but something named like a library: a finding, not bad input
    (tmp_path / "libfake.so").write_text("text\n")
    inp = _collect(tmp_path)
    assert inp.libs == [] and [f.message for f in inp.result.findings] == [
        f"{tmp_path / 'libfake.so'} is named like a library but is not an ELF file"]
    # a plain file not named like a library is no finding, and the folder is bad input
    other = tmp_path / "other"
    other.mkdir()
    (other / "data.bin").write_bytes(b"\x7fEL")
    with pytest.raises(UsageError, match="no ELF files found"):
        _collect(other)


def test_symlinks_are_names_of_their_targets_and_never_read_twice(tmp_path: Path) -> None:
    shutil.copy(system_lib("libz.so.1"), tmp_path / "libz.so.1")
    os.symlink("libz.so.1", tmp_path / "libz.so")
    os.symlink("libgone.so.1", tmp_path / "libgone.so")  # dangling: ignored
    os.symlink(system_lib("libz.so.1"), tmp_path / "libelsewhere.so")  # target outside the folder
    inp = _collect(tmp_path)
    (lib,) = inp.libs
    assert inp.names == [str(tmp_path / "libz.so.1")]
    root = tmp_path.resolve()
    assert inp.index == {str(root / "libz.so.1"): lib, str(root / "libz.so"): lib}


def test_an_elf_file_that_cannot_be_parsed_is_kept_with_its_error(tmp_path: Path) -> None:
    bad = tmp_path / "deep" / "libcut.so"
    bad.parent.mkdir()
    bad.write_bytes(b"\x7fELF\x02\x01\x01" + b"\0" * 9)  # e_ident only: the header is cut
    inp = _collect(tmp_path)
    (lib,) = inp.libs
    assert (lib.path, lib.origin, lib.info) == (str(bad), str(bad.parent.resolve()), None)
    # the kept error is the reader's: the file is cut short, at its 16 bytes (an ELF64 header is 64)
    assert lib.error is not None and "truncated" in lib.error and "16 bytes" in lib.error
    assert inp.index == {str(bad.resolve()): lib} and inp.result.findings == []


# --- _collect_wheel: every member read once ----------------------------------------------

def test_a_wheels_members_are_hashed_and_its_elf_files_indexed(tmp_path: Path) -> None:
    libz = system_lib("libz.so.1")
    whl = make_wheel(tmp_path, "demo", "1.0", "cp312-cp312-linux_x86_64",
                     {"demo/lib/libz.so.1": libz, "demo/__init__.py": "x = 1\n"})
    inp = open_input(whl)
    inp.result = WheelResult(str(whl))
    assert inp.wheel is not None
    with inp.wheel as wz:
        collect_wheel(inp, wz, 1)
    with zipfile.ZipFile(whl) as zf:
        names = [i.filename for i in zf.infolist()]
        want = {n: record_digest(zf.read(n)) for n in names}
    assert inp.names == names and inp.result.members == len(names)
    assert inp.digests == want  # RECORD itself too, hashed like any member
    assert inp.result.findings == []  # RECORD agrees with every member
    (lib,) = inp.libs
    assert (lib.path, lib.origin, lib.error) == ("demo/lib/libz.so.1", "wheel:demo/lib", None)
    assert lib.info is not None and lib.info.soname == "libz.so.1"  # readelf -d: SONAME libz.so.1
    assert inp.index == {"demo/lib/libz.so.1": lib}


def test_a_damaged_member_has_no_digest_and_no_content_key(tmp_path: Path) -> None:
    whl = make_wheel(tmp_path, "demo", "1.0", "py3-none-any", {"demo/a.py": "a = 1\n", "demo/b.py": "b\n"})
    wrong_crc(whl, "demo/a.py")
    (w,) = check_paths([whl]).wheels
    assert [(f.check, f.cause, f.library) for f in w.findings] == [
        ("archive", "unreadable member", "demo/a.py")]  # no RECORD hash error on top of it
    assert w.content_key is None  # a wheel not wholly read is nobody's twin


# --- open_input: what a path given to ``toolkit check`` is --------------------------------

def test_an_input_is_a_folder_a_wheel_or_an_elf_file_and_anything_else_one_line(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.whl")
    with pytest.raises(UsageError) as err:
        open_input(tmp_path / "pipe.whl")  # never blocks on a FIFO
    assert str(err.value).startswith(f"wheel {tmp_path / 'pipe.whl'}: not a regular file")
    # a name with an escape byte is shown escaped, never raw (the terminal would act on it)
    with pytest.raises(UsageError) as err:
        open_input(tmp_path / "x\x1b[2J.whl")
    assert "\x1b" not in str(err.value) and str(err.value).endswith(": no such file or directory")
    os.symlink(tmp_path, tmp_path / "link")
    folder = open_input(tmp_path / "link")  # a link to a folder is that folder
    assert (folder.path, folder.wheel) == (tmp_path / "link", None)
    whl = make_wheel(tmp_path / "w", "demo", "1.0", "py3-none-any", {"demo/__init__.py": ""})
    inp = open_input(whl)
    assert inp.path == whl and inp.wheel is not None and inp.libs == [] and inp.names == []
    inp.close()
    short = tmp_path / "short"
    short.write_bytes(b"\x7fEL")  # three bytes of the ELF magic are not an ELF file
    with pytest.raises(UsageError, match="not a wheel, a directory or an ELF file"):
        open_input(short)
