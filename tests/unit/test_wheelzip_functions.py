"""``WheelZip`` pinned whole: which entries become members and which problems the others are
(PKWARE APPNOTE: bit 0 of the flags is encryption, bit 11 UTF-8 names; a local header is
``PK\\x03\\x04``, 30 bytes, then the name and the extra field), where a member's data starts,
and streaming it as Python's zipfile inflates it."""

from __future__ import annotations

import struct
import warnings
import zipfile
import zlib
from pathlib import Path

import pytest

from tests.fixtures.wheels import edit_member_headers
from toolkit.core.errors import MemberError, WheelZipError
from toolkit.inspect.readers.wheelzip import Budget, WheelZip


def _zip(path: Path, entries: list[tuple[str, bytes]]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in entries:
            zf.writestr(name, data)
    return path


def test_entries_become_members_or_named_problems(tmp_path: Path) -> None:
    entries = [("pkg/a.py", b"a"), ("pkg/", b""), ("../evil", b"x"), ("pkg/a.py", b"b"),
               ("pkg/secret", b"s"), ("/abs", b"y"), ("pkg/b.py", b"b")]
    with pytest.warns(UserWarning, match="Duplicate name"):  # zipfile writes it all the same
        z = _zip(tmp_path / "w.whl", entries)
    edit_member_headers(z, "pkg/secret", 6, 8, "<H", lambda flags: flags | 1)  # "encrypted"
    with WheelZip.open(z) as wz:
        assert [i.filename for i in wz.members] == ["pkg/a.py", "pkg/b.py"]
        assert [(p.member, p.message) for p in wz.problems] == [
            ("../evil", "unsafe path in archive: '../evil'"),
            ("pkg/a.py", "duplicate archive entry 'pkg/a.py'"),
            ("pkg/secret", "encrypted archive entry 'pkg/secret'"),
            ("/abs", "unsafe path in archive: '/abs'"),
        ]
        assert wz.budget == Budget() and wz.path == z


def test_a_file_that_is_no_zip_is_bad_input(tmp_path: Path) -> None:
    bad = tmp_path / "x.whl"
    bad.write_bytes(b"PK\x03\x04 not really")
    with pytest.raises(WheelZipError) as err:
        WheelZip.open(bad)
    assert str(err.value) == f"{bad}: not a readable zip archive (File is not a zip file)"
    with pytest.raises(WheelZipError, match=r": not a readable zip archive \(.*No such file"):
        WheelZip.open(tmp_path / "missing.whl")


def _local_header_at(data: bytes, info: zipfile.ZipInfo) -> tuple[int, int]:
    sig, = struct.unpack_from("<4s", data, info.header_offset)
    assert sig == b"PK\x03\x04"
    return struct.unpack_from("<HH", data, info.header_offset + 26)


def test_a_members_data_starts_after_its_local_header_name_and_extra(tmp_path: Path) -> None:
    z = tmp_path / "w.whl"
    with zipfile.ZipFile(z, "w", zipfile.ZIP_STORED) as zf:
        info = zipfile.ZipInfo("pkg/ü.txt")
        info.extra = struct.pack("<HH", 0xCAFE, 4) + b"abcd"  # an extra field of 8 bytes
        zf.writestr(info, b"payload!")
    raw = z.read_bytes()
    with WheelZip.open(z) as wz:
        (m,) = wz.members
        assert m.flag_bits & 0x800  # a UTF-8 name
        name_len, extra_len = _local_header_at(raw, m)
        assert (name_len, extra_len) == (len("pkg/ü.txt".encode()), 8)
        at = wz.data_offset(m)
        assert at == m.header_offset + 30 + name_len + extra_len
        assert raw[at : at + 8] == b"payload!" and wz.pread(8, at) == b"payload!"


def test_a_local_header_that_is_missing_or_names_another_file(tmp_path: Path) -> None:
    z = _zip(tmp_path / "w.whl", [("pkg/aa.py", b"a" * 100)])
    raw = bytearray(z.read_bytes())
    name_at = raw.find(b"pkg/aa.py")  # the local header's copy comes first
    raw[name_at : name_at + 9] = b"pkg/bb.py"
    other = tmp_path / "other.whl"
    other.write_bytes(bytes(raw))
    with WheelZip.open(other) as wz, pytest.raises(MemberError) as err:
        wz.data_offset(wz.members[0])
    assert str(err.value) == ("pkg/aa.py: the local file header names another file ('pkg/bb.py'); "
                              "pip cannot extract this member")
    raw[0:4] = b"PK\x05\x06"
    broken = tmp_path / "broken.whl"
    broken.write_bytes(bytes(raw))
    with WheelZip.open(broken) as wz, pytest.raises(MemberError) as err:
        wz.data_offset(wz.members[0])
    assert str(err.value) == "pkg/aa.py: bad local file header"
    wz = WheelZip.open(z)
    wz.close()
    with pytest.raises(MemberError, match="^the archive is closed$"):
        wz.pread(1, 0)


def test_a_member_streams_as_zipfile_inflates_it(tmp_path: Path) -> None:
    data = bytes(range(256)) * 40
    z = _zip(tmp_path / "w.whl", [("pkg/d.bin", data)])
    with WheelZip.open(z) as wz:
        (m,) = wz.members
        pieces = list(wz.stream(m, 1000))
        assert [len(p) for p in pieces] == [1000] * 10 + [240]
        assert b"".join(pieces) == data == wz.read_small(m)
    with WheelZip.open(z, Budget(member_bytes=100)) as wz, pytest.raises(MemberError) as err:
        list(wz.stream(wz.members[0]))
    assert str(err.value).startswith(f"pkg/d.bin declares {len(data)} inflated bytes, over the ")


def test_a_corrupt_member_streams_to_a_named_error(tmp_path: Path) -> None:
    z = _zip(tmp_path / "w.whl", [("pkg/d.bin", b"hello" * 1000)])
    raw = bytearray(z.read_bytes())
    with zipfile.ZipFile(z) as zf:
        info = zf.getinfo("pkg/d.bin")
    start = info.header_offset + 30 + len("pkg/d.bin")
    raw[start] = 0x07  # a reserved deflate block type
    z.write_bytes(bytes(raw))
    with zipfile.ZipFile(z) as zf, pytest.raises(Exception) as truth:
        zf.read("pkg/d.bin")
    with WheelZip.open(z) as wz, pytest.raises(MemberError) as err:
        list(wz.stream(wz.members[0]))
    assert str(err.value) == f"pkg/d.bin: corrupt or truncated archive member ({truth.value})"


def test_a_name_without_the_utf8_flag_is_read_as_cp437_whatever_the_other_flags(tmp_path: Path) -> None:
    z = _zip(tmp_path / "w.whl", [("pkg/X.txt", b"data")])
    raw = bytearray(z.read_bytes())
    for at in (i for i in range(len(raw)) if raw.startswith(b"pkg/X.txt", i)):
        raw[at + 4] = 0x82  # "é" in code page 437 (APPNOTE appendix D), not valid UTF-8 alone
    z.write_bytes(bytes(raw))
    with zipfile.ZipFile(z) as zf:
        (info,) = zf.infolist()
    assert info.filename == "pkg/é.txt" and not info.flag_bits & 0x800
    info.flag_bits |= 1  # other flag bits (here "encrypted") do not change the name's encoding
    with WheelZip.open(z) as wz:
        at = wz.data_offset(info)
    assert zlib.decompress(bytes(raw[at : at + info.compress_size]), -15) == b"data"


def test_a_duplicate_archive_entry_is_a_problem_of_that_member(tmp_path: Path) -> None:
    path = tmp_path / "pkg-1.0-py3-none-any.whl"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns on the duplicate name, and writes it
        with zipfile.ZipFile(path, "w") as zf:
            zf.writestr("pkg/a.py", b"1")
            zf.writestr("pkg/a.py", b"2")
    assert [i.filename for i in zipfile.ZipFile(path).infolist()] == ["pkg/a.py", "pkg/a.py"]
    with WheelZip.open(path, Budget()) as wz:
        assert [(p.member, p.message) for p in wz.problems] == [
            ("pkg/a.py", "duplicate archive entry 'pkg/a.py'")]


def test_a_local_extra_field_over_32_kib_is_an_unsigned_length(tmp_path: Path) -> None:
    """APPNOTE 4.4.11: the extra field length is an unsigned 2-byte value (0..65535); one of
    40,000 bytes puts the data 40,000 bytes on, where Python's zipfile reads it."""
    z = tmp_path / "w.whl"
    with zipfile.ZipFile(z, "w", zipfile.ZIP_STORED) as zf:
        info = zipfile.ZipInfo("pkg/big_extra.txt")
        info.extra = struct.pack("<HH", 0xCAFE, 39_996) + b"e" * 39_996
        zf.writestr(info, b"payload!")
    raw = z.read_bytes()
    with zipfile.ZipFile(z) as zf:
        assert zf.read("pkg/big_extra.txt") == b"payload!"
    with WheelZip.open(z) as wz:
        (m,) = wz.members
        at = wz.data_offset(m)
        assert at == m.header_offset + 30 + len("pkg/big_extra.txt") + 40_000
        assert wz.pread(8, at) == b"payload!" == raw[at : at + 8]
