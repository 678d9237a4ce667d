"""RECORD problems as the user reads them (the member they are about, the message, the cause
that groups them; PEP 376/627: ``path,algorithm=urlsafe-b64,size`` lines), and member names as
the zip format spells them. The wheels are written with zipfile; the damage is made by hand."""

from __future__ import annotations

import struct
import zipfile
from pathlib import Path

from tests.fixtures.wheels import make_wheel
from toolkit.inspect.readers.wheelzip import Budget, WheelZip
from toolkit.inspect.report import Finding
from toolkit.inspect.rules.record import Entry, read_record, record_findings

RECORD = "demo-1.0.dist-info/RECORD"


def _with_record(tmp_path: Path, record: bytes) -> Path:
    """A wheel whose RECORD is ``record`` (the other members as make_wheel writes them)."""
    full = make_wheel(tmp_path / "full", "demo", "1.0", "py3-none-any", {"demo/x.py": "x = 1\n"})
    whl = tmp_path / full.name
    with zipfile.ZipFile(full) as src, zipfile.ZipFile(whl, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            dst.writestr(info, record if info.filename == RECORD else src.read(info))
    return whl


def _read(whl: Path) -> tuple[dict[str, Entry] | None, list[Finding]]:
    with WheelZip.open(whl, Budget()) as wz:
        return read_record(wz)


def test_a_record_that_is_not_utf8_is_unreadable(tmp_path: Path) -> None:
    entries, found = _read(_with_record(tmp_path, b"demo/x.py,,\n\xff\xfe\n"))
    assert entries is None
    (f,) = found
    assert (f.check, f.severity, f.library, f.cause) == ("record", "error", RECORD, "RECORD unreadable")
    assert f.message.startswith(f"{RECORD} cannot be read: 'utf-8' codec can't decode byte 0xff")


def test_a_record_shorter_than_its_declared_size_is_unreadable(tmp_path: Path) -> None:
    whl = _with_record(tmp_path, b"demo/x.py,,\n")
    data = bytearray(whl.read_bytes())
    # the central directory declares 100 uncompressed bytes; the data and its CRC-32 are those of
    # the 12 written (zipfile reads it without complaint: it checks the CRC-32, not the size)
    pos = data.find(b"PK\x01\x02" , 0)
    while data[pos + 46 : pos + 46 + len(RECORD)] != RECORD.encode():
        pos = data.find(b"PK\x01\x02", pos + 4)
    assert struct.unpack_from("<I", data, pos + 24)[0] == 12
    struct.pack_into("<I", data, pos + 24, 100)
    whl.write_bytes(bytes(data))
    with zipfile.ZipFile(whl) as zf:
        assert zf.getinfo(RECORD).file_size == 100 and zf.read(RECORD) == b"demo/x.py,,\n"
    entries, found = _read(whl)
    assert entries is None
    (f,) = found
    assert (f.library, f.cause) == (RECORD, "RECORD unreadable")
    assert f.message == f"{RECORD} cannot be read: {RECORD}: inflated to 12 bytes, 100 declared"


def test_a_size_that_is_not_a_number_names_its_line(tmp_path: Path) -> None:
    _, found = _read(_with_record(tmp_path, b"demo/x.py,sha256=abc,6\ndemo/y.py,sha256=abc,six\n"))
    assert found == [Finding("record", "error", "demo/y.py", f"{RECORD} line 2: size 'six' is not a number",
                             cause="malformed RECORD line")]


def test_record_and_members_disagreeing_name_the_member() -> None:
    entries = {"demo/x.py": Entry("sha256", "sha256=AAAA", 6)}
    seen = {"demo/x.py": ("sha256=BBBB", 6), "demo/y.py": ("sha256=CCCC", 3)}
    assert record_findings(entries, seen, set()) == [
        Finding("record", "error", "demo/x.py", "demo/x.py: RECORD says sha256=AAAA, its content hashes "
                "to sha256=BBBB", cause="hash differs from RECORD"),
        Finding("record", "error", "demo/y.py", "demo/y.py is not listed in RECORD",
                cause="member not in RECORD"),
    ]


def test_a_member_named_in_cp437_is_read(tmp_path: Path) -> None:
    from toolkit.inspect.readers.inflate import MemberReader

    # APPNOTE 4.4.4: without general purpose bit 11 a name is in IBM code page 437, where
    # byte 0x82 is "é"; zipfile (the judge) reads it as such
    whl = tmp_path / "demo-1.0-py3-none-any.whl"
    with zipfile.ZipFile(whl, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("demo/cafX.txt", b"bonjour " * 100)
    data = whl.read_bytes()
    assert data.count(b"demo/cafX.txt") == 2  # the local and the central header
    whl.write_bytes(data.replace(b"demo/cafX.txt", b"demo/caf\x82.txt"))
    with zipfile.ZipFile(whl) as zf:
        (info,) = zf.infolist()
        assert info.filename == "demo/café.txt" and not info.flag_bits & 0x800
        assert zf.read(info) == b"bonjour " * 100
    with WheelZip.open(whl, Budget()) as wz:
        assert MemberReader(wz, wz.zf.getinfo("demo/café.txt")).read(0, 800) == b"bonjour " * 100
