"""A file ``report --junit`` (and the smoke runner) cannot read as JUnit XML, in the one line
it gives (README "Exit codes": 2, bad input), written out by hand; and the file names nox's
report reader refuses, likewise."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolkit.core.errors import UsageError
from toolkit.verify import junit, report


def _refused(path: Path) -> str:
    with pytest.raises(UsageError) as err:
        junit.read(path)
    assert err.value.exit_code == 2
    return err.value.message


def test_a_missing_file_says_what_writes_one(tmp_path: Path) -> None:
    path = tmp_path / "j.xml"
    assert _refused(path) == f"{path}: no such JUnit file (written by `pytest --junit-xml FILE`)"


def test_other_xml_names_its_root_and_the_two_valid_ones(tmp_path: Path) -> None:
    path = tmp_path / "j.xml"
    path.write_text("<html><body/></html>")
    assert _refused(path) == (f"{path}: not JUnit XML: the root is <html>, expected <testsuites> "
                              "or <testsuite>")


def test_broken_xml_and_a_folder_say_why(tmp_path: Path) -> None:
    path = tmp_path / "j.xml"
    path.write_text("<testsuite>")
    assert _refused(path).startswith(f"{path}: not JUnit XML: no element found: line 1")
    folder = tmp_path / "dir.xml"
    folder.mkdir()
    assert _refused(folder) == f"{folder}: not JUnit XML: not a regular file (a folder)"


def test_a_nox_report_folder_and_a_missing_one_are_named(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as err:
        report.read_nox_report(tmp_path / "r.json")
    assert err.value.message == (f"{tmp_path / 'r.json'}: no such nox report (written by "
                                 "`nox --report FILE`)")
    with pytest.raises(UsageError) as err:
        report.read_nox_report(tmp_path)
    assert err.value.message == f"{tmp_path}: not a nox report: not a regular file (a folder)"
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    with pytest.raises(UsageError) as err:
        report.read_nox_report(bad)
    assert err.value.message.startswith(f"{bad}: not a nox report (JSON from `nox --report FILE`): "
                                        "Expecting property name")


def test_a_path_holding_a_colon_is_named_whole_and_the_reason_kept_whole(tmp_path: Path) -> None:
    folder = tmp_path / "a: b"
    folder.mkdir()
    assert _refused(folder) == f"{folder}: not JUnit XML: not a regular file (a folder)"
    with pytest.raises(UsageError) as err:
        report.read_nox_report(folder)
    assert err.value.message == f"{folder}: not a nox report: not a regular file (a folder)"
