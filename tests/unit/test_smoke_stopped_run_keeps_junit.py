"""A smoke run stopped past a time limit still leaves CI its JUnit XML (README: "the JUnit XML
records it"): pytest's own when it wrote one, else one holding the test that was running as
an error, read back here with ElementTree; nothing when no ``--junit`` was asked."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from toolkit.verify import smoke
from toolkit.verify import smoke_limits as limits


def test_the_running_test_is_written_as_an_error_when_pytest_wrote_nothing(tmp_path: Path) -> None:
    err = limits.hung_test("b-1", "test_runtime.py::test_k[gfx90a]", 5)
    report, junit = tmp_path / "scratch" / "junit.xml", tmp_path / "kept" / "smoke.xml"
    report.parent.mkdir()
    assert smoke._stopped(err, "test_runtime.py::test_k[gfx90a]", report, junit) is err
    case = ET.parse(junit).getroot().find("testsuite/testcase")
    assert case is not None
    assert (case.get("classname"), case.get("name")) == ("test_runtime", "test_k[gfx90a]")
    error = case.find("error")
    assert error is not None and error.get("message") == err.message


def test_pytests_own_report_is_kept_and_nothing_without_junit(tmp_path: Path) -> None:
    err = limits.total_limit("b-1", 60, None)
    report = tmp_path / "junit.xml"
    report.write_text("<testsuites><testsuite name='pytest'/></testsuites>")
    junit = tmp_path / "kept.xml"
    smoke._stopped(err, None, report, junit)
    assert junit.read_text() == report.read_text()
    other = tmp_path / "none" / "junit.xml"
    other.parent.mkdir()
    smoke._stopped(err, "t.py::a", other, None)
    assert not other.exists() and sorted(p.name for p in other.parent.iterdir()) == []
