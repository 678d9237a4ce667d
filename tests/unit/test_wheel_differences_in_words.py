"""What ``repro`` says differs between two wheels (``toolkit.verify.compare``), in its own
words, for cases the other tests leave out. ELF sections are located with binutils'
``readelf -S`` (an independent reader) in a real executable of this system."""

from __future__ import annotations

import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from toolkit.core.errors import UsageError
from toolkit.verify.compare import section_differences, wheel_differences

ELF = Path("/bin/true")


Date = tuple[int, int, int, int, int, int]


def _wheel(path: Path, members: dict[str, bytes], date: Date = (2020, 1, 1, 0, 0, 0)) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members.items():
            zf.writestr(zipfile.ZipInfo(name, date), data)
    return path


def _section_offset(path: Path, name: str) -> int:
    out = subprocess.run(["readelf", "-S", "--wide", str(path)], check=True, capture_output=True,
                         text=True).stdout
    m = re.search(rf"\s{re.escape(name)}\s+\S+\s+[0-9a-f]+\s+([0-9a-f]+)\s", out)
    assert m, out
    return int(m.group(1), 16)


def test_same_members_in_the_same_order_differ_only_in_times_or_modes(tmp_path: Path) -> None:
    a = _wheel(tmp_path / "a.whl", {"x": b"1", "y": b"2"})
    b = _wheel(tmp_path / "b.whl", {"x": b"1", "y": b"2"}, (2021, 2, 2, 0, 0, 0))
    assert wheel_differences(a, b) == ["same members and contents; the archive differs (member "
                                       "order same, times or modes)"]


def test_folders_are_no_members_and_other_bytes_are_contents(tmp_path: Path) -> None:
    a = _wheel(tmp_path / "a.whl", {"p/": b"", "p/x": b"1"})
    b = _wheel(tmp_path / "b.whl", {"p/x": b"2"})
    assert wheel_differences(a, b) == ["p/x: contents"]


@pytest.mark.skipif(shutil.which("readelf") is None or not ELF.is_file(), reason="no readelf")
def test_elf_members_name_their_differing_sections_or_only_the_headers(tmp_path: Path) -> None:
    original = ELF.read_bytes()
    assert section_differences(original, original) == []
    data = bytearray(original)
    data[_section_offset(ELF, ".rodata")] ^= 0xFF
    header = bytearray(original)
    header[9] ^= 0xFF  # e_ident padding: in no section
    a = _wheel(tmp_path / "a.whl", {"bin/t": original, "bin/u": original, "bin/v": original})
    b = _wheel(tmp_path / "b.whl", {"bin/t": bytes(data), "bin/u": bytes(header),
                                    "bin/v": original[:64]})
    t, u, v = wheel_differences(a, b)
    assert t == "bin/t: sections .rodata"
    assert u == "bin/u: sections (headers only)"
    assert v.startswith("bin/v: sections (sections unreadable: ")


def test_a_file_that_is_no_zip_is_one_line_naming_it(tmp_path: Path) -> None:
    bad = tmp_path / "bad.whl"
    bad.write_bytes(b"not a zip")
    good = _wheel(tmp_path / "good.whl", {"x": b"1"})
    with pytest.raises(UsageError) as err:
        wheel_differences(good, bad)
    assert err.value.message.startswith(f"{bad}: not a readable wheel (")
    with pytest.raises(UsageError) as err:
        wheel_differences(tmp_path / "gone.whl", good)
    assert err.value.message.startswith(f"{tmp_path / 'gone.whl'}: not a readable wheel (")
