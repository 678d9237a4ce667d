"""What the check reports for damaged wheels, as the user reads it: members that fail the same
way grouped under one line per check and cause (``toolkit check`` without ``--verbose``), a
missing WHEEL file, an encrypted member, a corrupt library. The wheels are written with Python's
zipfile and damaged by hand; zipfile and readelf judge the damage."""

from __future__ import annotations

import struct
import zipfile
from pathlib import Path

import pytest

from tests.fixtures.native import system_lib
from tests.fixtures.wheels import edit_member_headers, make_wheel, wrong_crc
from toolkit.cli.commands.check import lines
from toolkit.inspect.checks import check_paths

TAG = "cp311-cp311-manylinux_2_28_x86_64"



def test_unreadable_members_and_fake_libraries_are_grouped_by_cause(tmp_path: Path) -> None:
    whl = make_wheel(tmp_path, "demo", "1.0", TAG, {
        "demo/a.txt": "a" * 100, "demo/b.txt": "b" * 100,
        "demo/liba.so": "not a library", "demo/libb.so": "nor this",
    })
    wrong_crc(whl, "demo/a.txt")
    wrong_crc(whl, "demo/b.txt")
    with zipfile.ZipFile(whl) as zf:  # the judge: zipfile finds the same two damaged members
        bad = []
        for name in ("demo/a.txt", "demo/b.txt", "demo/liba.so"):
            try:
                zf.read(name)
            except zipfile.BadZipFile:
                bad.append(name)
        assert bad == ["demo/a.txt", "demo/b.txt"]
    (w,) = check_paths([whl]).wheels
    shown = lines(w)
    i = shown.index("  error [archive] unreadable member: 2 findings, 2 libraries")
    assert shown[i + 1] == "      demo/a.txt, demo/b.txt"
    i = shown.index("  error [elf] named like a library, not ELF: 2 findings, 2 libraries")
    assert shown[i + 1] == "      demo/liba.so, demo/libb.so"


def test_a_wheel_without_its_wheel_file_is_a_metadata_error(tmp_path: Path) -> None:
    full = make_wheel(tmp_path / "full", "demo", "1.0", "py3-none-any", {"demo/__init__.py": ""})
    whl = tmp_path / full.name
    with zipfile.ZipFile(full) as src, zipfile.ZipFile(whl, "w") as dst:
        for info in src.infolist():
            if info.filename != "demo-1.0.dist-info/WHEEL":
                dst.writestr(info, src.read(info))
    (w,) = check_paths([whl]).wheels
    assert "  error [metadata] the wheel has no WHEEL file" in lines(w)


def test_a_corrupt_library_says_nothing_about_the_platform_tag(tmp_path: Path) -> None:
    # a library that cannot be read is an error of its own; whether it is native code cannot be
    # told, so neither "native code in a -any wheel" nor "no native code" is claimed
    data = system_lib("libz.so.1").read_bytes()
    for tag in ("py3-none-any", TAG):
        whl = make_wheel(tmp_path / tag, "demo", "1.0", tag, {"demo/_c.so": data[: len(data) // 3]})
        (w,) = check_paths([whl]).wheels
        assert [f.check for f in w.findings if f.severity == "error"] == ["elf"], tag
        assert not [f for f in w.findings if f.check == "platform-tag"], tag


def test_libraries_without_section_headers_are_grouped_as_not_judged(tmp_path: Path) -> None:
    from toolkit.core.proc import run

    data = bytearray(system_lib("libz.so.1").read_bytes())
    # ELF64: e_shoff (u64 at 40) and e_shnum (u16 at 60) zero: no section header table
    struct.pack_into("<Q", data, 40, 0)
    struct.pack_into("<H", data, 60, 0)
    lib = tmp_path / "libnosec.so"
    lib.write_bytes(bytes(data))
    assert "There are no sections in this file" in run(["readelf", "-S", str(lib)]).stdout
    whl = make_wheel(tmp_path / "w", "demo", "1.0", TAG, {"demo/liba.so": lib, "demo/libb.so": lib})
    (w,) = check_paths([whl]).wheels
    shown = lines(w)
    i = shown.index("  error [elf] ELF cannot be judged: 2 findings, 2 libraries")
    assert shown[i + 1] == "      demo/liba.so, demo/libb.so"


def test_an_encrypted_member_is_an_unsafe_archive(tmp_path: Path) -> None:
    whl = make_wheel(tmp_path, "demo", "1.0", "py3-none-any", {"demo/secret.txt": "s" * 50})
    # APPNOTE 4.4.4: general purpose bit 0, encrypted
    edit_member_headers(whl, "demo/secret.txt", 6, 8, "<H", lambda flags: flags | 1)
    with zipfile.ZipFile(whl) as zf, pytest.raises(RuntimeError, match="encrypted"):
        zf.read("demo/secret.txt")  # the judge: zipfile wants a password
    (w,) = check_paths([whl]).wheels
    (f,) = [f for f in w.findings if f.check == "archive"]
    assert (f.severity, f.library, f.message, f.cause) == (
        "error", "demo/secret.txt", "encrypted archive entry 'demo/secret.txt'", "unsafe archive")

