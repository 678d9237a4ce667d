"""RECORD read line by line as PEP 376 / the wheel spec define it (CSV rows ``path,hash,size``;
the hash ``algorithm=urlsafe-b64`` or empty, the size a decimal or empty; RECORD itself in
the one top-level ``.dist-info`` folder), and the algorithm each member is hashed with."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from tests.fixtures.wheels import make_wheel
from toolkit.inspect.readers.wheelzip import Budget, WheelZip
from toolkit.inspect.rules.record import Entry, algorithm, read_record, record_findings, record_member

RECORD = "demo-1.0.dist-info/RECORD"


def _wheel(tmp_path: Path, record: bytes | None, extra: dict[str, bytes] | None = None) -> Path:
    full = make_wheel(tmp_path / "full", "demo", "1.0", "py3-none-any", {"demo/x.py": "x = 1\n"})
    whl = tmp_path / full.name
    with zipfile.ZipFile(full) as src, zipfile.ZipFile(whl, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            if info.filename == RECORD:
                if record is not None:
                    dst.writestr(info, record)
            else:
                dst.writestr(info, src.read(info))
        for name, data in (extra or {}).items():
            dst.writestr(name, data)
    return whl


def test_record_lines_become_entries_by_normalised_path(tmp_path: Path) -> None:
    text = (b"demo/x.py,sha256=AAA,6\n\n./demo/y.py,sha384=BBB,\n"
            b"\"demo/with,comma.py\",,12\ndemo-1.0.dist-info/RECORD,,\n")
    with WheelZip.open(_wheel(tmp_path, text), Budget()) as wz:
        entries, found = read_record(wz)
    assert found == []
    assert entries == {
        "demo/x.py": Entry("sha256", "sha256=AAA", 6),
        "demo/y.py": Entry("sha384", "sha384=BBB", None),
        "demo/with,comma.py": Entry(None, None, 12),
        RECORD: Entry(None, None, None),
    }


@pytest.mark.parametrize(("line", "fields"), [(b"demo/x.py,sha256=AAA", 2), (b"demo/x.py,a,1,extra", 4),
                                               (b"demo/x.py", 1)])
def test_a_line_without_three_fields_is_named(tmp_path: Path, line: bytes, fields: int) -> None:
    with WheelZip.open(_wheel(tmp_path, b"demo/ok.py,,1\n" + line + b"\n"), Budget()) as wz:
        entries, found = read_record(wz)
    assert entries == {"demo/ok.py": Entry(None, None, 1)}
    assert [(f.check, f.severity, f.library, f.cause, f.message) for f in found] == [
        ("record", "error", None, "malformed RECORD line",
         f"{RECORD} line 2: expected path,hash,size, got {fields} fields")]


def test_only_one_top_level_record_counts(tmp_path: Path) -> None:
    with WheelZip.open(_wheel(tmp_path, b""), Budget()) as wz:
        found = record_member(wz)
        assert found is not None and found.filename == RECORD
    nested = _wheel(tmp_path / "n", None, {"demo/sub.dist-info/RECORD": b""})
    with WheelZip.open(nested, Budget()) as wz:
        assert record_member(wz) is None  # not in a top-level .dist-info folder
    two = _wheel(tmp_path / "t", b"", {"other-1.0.dist-info/RECORD": b""})
    with WheelZip.open(two, Budget()) as wz:
        assert record_member(wz) is None
        entries, why = read_record(wz)
    assert entries is None and [f.cause for f in why] == ["no RECORD"]


@pytest.mark.parametrize(("entry", "algo"), [
    (Entry("sha256", "sha256=A", 1), "sha256"),
    (Entry("sha512", "sha512=A", 1), "sha512"),
    (Entry("blake2b", "blake2b=A", 1), "blake2b"),
    (Entry("nosuchhash", "nosuchhash=A", 1), "sha256"),  # not a hashlib algorithm
    (Entry(None, None, 1), "sha256"),
    (Entry("", None, 1), "sha256"),
    (None, "sha256"),
])
def test_members_are_hashed_with_the_algorithm_record_names(entry: Entry | None, algo: str) -> None:
    assert algorithm(entry) == algo


def test_a_record_size_mismatch_names_its_cause() -> None:
    # PEP 376: RECORD gives each member's size; a member whose hash agrees but size does not
    (f,) = record_findings({"b.py": Entry("sha256", "sha256=B", 3)}, {"b.py": ("sha256=B", 4)},
                           set())
    assert (f.check, f.severity, f.library, f.cause, f.message) == (
        "record", "error", "b.py", "size differs from RECORD", "b.py: RECORD says 3 bytes, the member has 4")
