"""How one JUnit XML test case reads, judged against the JUnit format pytest writes
(``--junit-xml``: ``<testcase classname= name= time=>`` holding at most ``<failure>``,
``<error>`` or ``<skipped>``, each with a ``message`` attribute and the details as text;
an expected failure is ``<skipped type="pytest.xfail">``) and against hand-computed values.
The session's own builds file (``write_builds``) is read back with ElementTree, not with the
reader under test."""

from __future__ import annotations

import errno
import os
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import pytest

from toolkit.core.errors import UsageError
from toolkit.verify import junit


def _file(tmp_path: Path, body: str, name: str = "r.xml") -> Path:
    path = tmp_path / name
    path.write_text('<?xml version="1.0" encoding="utf-8"?>' + body, encoding="utf-8")
    return path


def _one(tmp_path: Path, case_xml: str) -> junit.JUnitCase:
    (case,) = junit.cases(_file(tmp_path, f"<testsuite name='s'>{case_xml}</testsuite>"))
    return case


@pytest.mark.parametrize(("children", "outcome"), [
    ("", "passed"),
    ("<skipped message='m'/>", "skipped"),
    ("<skipped type='pytest.skip' message='m'/>", "skipped"),
    ("<skipped type='pytest.xfail' message='m'/>", "xfailed"),
    ("<error message='m'/>", "error"),
    # an error is never an expected failure, whatever its type says
    ("<error type='pytest.xfail' message='m'/>", "error"),
    ("<failure type='pytest.xfail' message='m'/>", "failed"),
    ("<failure message='m'/>", "failed"),
    # precedence failure > error > skipped, whatever the order in the file
    ("<skipped message='m'/><error message='m'/>", "error"),
    ("<error message='m'/><failure message='m'/>", "failed"),
    ("<skipped message='m'/><failure message='m'/>", "failed"),
])
def test_a_cases_outcome_is_its_worst_child(tmp_path: Path, children: str, outcome: str) -> None:
    case = _one(tmp_path, f"<testcase classname='c' name='t'>{children}</testcase>")
    assert case.outcome == outcome


def test_the_message_attribute_first_else_the_text_stripped(tmp_path: Path) -> None:
    with_attr = _one(tmp_path, "<testcase name='t'><failure message='short'>long\ntext</failure></testcase>")
    assert with_attr.message == "short"
    text_only = _one(tmp_path, "<testcase name='t'><failure>\n  assert 1 == 2\n  more\n</failure></testcase>")
    assert text_only.message == "assert 1 == 2\n  more"
    # the worst child's message, not the first child's
    worst = _one(tmp_path, "<testcase name='t'><error message='teardown'/>"
                           "<failure message='call'/></testcase>")
    assert worst.message == "call"
    assert _one(tmp_path, "<testcase name='t'/>").message == ""


@pytest.mark.parametrize(("attr", "seconds"), [
    ("time='1.25'", 1.25), ("time='0'", 0.0), ("time='abc'", None), ("time=''", None), ("", None),
])
def test_a_cases_time_in_seconds_or_none(tmp_path: Path, attr: str, seconds: float | None) -> None:
    assert _one(tmp_path, f"<testcase name='t' {attr}/>").time == seconds


def test_missing_names_read_as_empty_class_and_unknown_test(tmp_path: Path) -> None:
    case = _one(tmp_path, "<testcase/>")
    assert (case.classname, case.name) == ("", "?")
    (suite,) = junit.read(_file(tmp_path, "<testsuite><testcase name='t' time='2'/></testsuite>"))
    assert suite.name == "testsuite"
    assert suite.time is None


@pytest.mark.parametrize(("classname", "name", "node_id"), [
    # pytest's classname is the module path without ".py", dots for slashes
    ("smoke_tests.test_imports", "test_import[gfx942]", "test_imports.py::test_import[gfx942]"),
    ("test_imports", "test_import", "test_imports.py::test_import"),
    ("", "test_alone", "test_alone"),
])
def test_test_id_is_the_node_id_from_the_suite_folder(classname: str, name: str, node_id: str) -> None:
    assert junit.JUnitCase(classname, name, junit.PASSED).test_id == node_id


def test_qualname_joins_what_the_file_names() -> None:
    assert junit.JUnitCase("a.b", "t", junit.PASSED).qualname == "a.b::t"
    assert junit.JUnitCase("", "t", junit.PASSED).qualname == "t"
    assert junit.JUnitCase("a.b", "", junit.PASSED).qualname == "a.b"
    assert junit.JUnitCase("", "", junit.PASSED).qualname == "?"


@pytest.mark.parametrize(("message", "reason"), [
    ("Skipped: no GPU", "no GPU"),
    ("Failed: boom", "boom"),
    ("Skipped:no GPU", "no GPU"),
    ("assert Skipped: x", "assert Skipped: x"),  # only a leading prefix is pytest's
    ("no prefix", "no prefix"),
])
def test_reason_drops_only_pytests_leading_prefix(message: str, reason: str) -> None:
    assert junit.JUnitCase("c", "t", junit.SKIPPED, message).reason == reason


@pytest.mark.parametrize(("outcome", "message", "line"), [
    (junit.FAILED, "\n  assert 1 == 2  \nwhere 1 = f()", "assert 1 == 2"),
    (junit.FAILED, "", "failure"),
    (junit.ERROR, "  ", "error"),
    (junit.SKIPPED, "", "skipped"),
    (junit.PASSED, "", ""),
    (junit.XFAILED, "", ""),
])
def test_first_line_or_the_childs_tag(outcome: str, message: str, line: str) -> None:
    assert junit.JUnitCase("c", "t", outcome, message).first_line == line


def test_suite_counts_and_time_add_up(tmp_path: Path) -> None:
    (suite,) = junit.read(_file(tmp_path, (
        "<testsuite name='s' time='9.5'>"
        "<testcase name='a' time='1.5'/><testcase name='b' time='2'><failure/></testcase>"
        "<testcase name='c'><failure/></testcase><testcase name='d' time='0.25'><skipped/></testcase>"
        "</testsuite>")))
    assert suite.time == 9.5
    assert [suite.count(o) for o in (junit.PASSED, junit.FAILED, junit.SKIPPED, junit.ERROR)] == [1, 2, 1, 0]
    assert suite.case_time == 3.75  # 1.5 + 2 + 0 (no time) + 0.25


def test_a_suite_holding_only_suites_is_no_row(tmp_path: Path) -> None:
    suites = junit.read(_file(tmp_path, (
        "<testsuites><testsuite name='outer'>"
        "<testsuite name='inner1'><testcase name='a'/></testsuite>"
        "<testsuite name='inner2'/>"
        "</testsuite></testsuites>")))
    assert [(s.name, len(s.cases)) for s in suites] == [("inner1", 1), ("inner2", 0)]
    assert [c.name for c in junit.cases(_file(tmp_path, "<testsuite><testcase name='x'/>"
                                               "<testcase name='y'/></testsuite>", "b.xml"))] == ["x", "y"]


def test_a_missing_or_foreign_file_is_one_line_naming_it(tmp_path: Path) -> None:
    missing = tmp_path / "nope.xml"
    with pytest.raises(UsageError) as err:
        junit.read(missing)
    assert str(missing) in err.value.message and "--junit-xml" in err.value.message
    assert err.value.exit_code == 2  # README: bad input exits 2
    foreign = _file(tmp_path, "<coverage/>")
    with pytest.raises(UsageError) as err:
        junit.read(foreign)
    assert str(foreign) in err.value.message and "<coverage>" in err.value.message
    assert "<testsuites>" in err.value.message and "<testsuite>" in err.value.message
    broken = _file(tmp_path, "<testsuite>", "broken.xml")
    with pytest.raises(UsageError) as err:
        junit.read(broken)
    assert str(broken) in err.value.message and "not JUnit XML" in err.value.message


@dataclass
class _Outcome:
    build_id: str
    seconds: float
    error: str | None = None
    failure: dict[str, object] | None = None


@dataclass
class _Verdict:
    result: str

    def line(self) -> str:
        return f"verdict {self.result}"


def test_builds_file_is_junit_with_pytests_counts_and_terms(tmp_path: Path) -> None:
    outcomes = [
        _Outcome("ok-build", 1.0),
        _Outcome("empty-error", 1.0, ""),
        _Outcome("known-2", 1.0, "also known"),
        _Outcome("plain-fail", 2.5, "step build failed\nthe log tail"),
        _Outcome("signed-fail", 0.0004, "step build failed", {"signature": ["undefined symbol: f", "ld"]}),
        _Outcome("known", 3.0, "broken as known"),
        _Outcome("fixed", 4.0),
    ]
    verdicts = {"known": _Verdict("xfail"), "fixed": _Verdict("xpass"), "known-2": _Verdict("xfail")}
    path = junit.write_builds(tmp_path / "deep" / "er" / "builds.xml", outcomes, verdicts)
    assert path == tmp_path / "deep" / "er" / "builds.xml"
    root = ET.parse(path).getroot()
    assert root.tag == "testsuites"
    (suite,) = root
    assert (suite.tag, suite.get("name")) == ("testsuite", "builds")
    assert {k: suite.get(k) for k in ("tests", "failures", "skipped")} == \
        {"tests": "7", "failures": "4", "skipped": "2"}
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert list(cases) == ["ok-build", "empty-error", "known-2", "plain-fail", "signed-fail", "known",
                           "fixed"]
    assert {c.get("classname") for c in cases.values()} == {"builds"}
    assert [c.get("time") for c in cases.values()] == ["1.000", "1.000", "1.000", "2.500", "0.000", "3.000",
                                                       "4.000"]
    empty = cases["empty-error"].find("failure")  # an error without words still fails the build
    assert empty is not None and empty.get("message") == ""
    assert list(cases["ok-build"]) == []
    plain = cases["plain-fail"].find("failure")
    assert plain is not None and plain.get("message") == "step build failed"
    assert plain.text == "step build failed\nthe log tail"
    signed = cases["signed-fail"].find("failure")
    assert signed is not None and signed.get("message") == "undefined symbol: f"
    assert signed.text == "step build failed\n\nsignature of the failure:\nundefined symbol: f\nld"
    known = cases["known"].find("skipped")
    assert known is not None and known.get("type") == "pytest.xfail"
    assert known.get("message") == "verdict xfail"
    assert cases["known"].find("failure") is None
    fixed = cases["fixed"].find("failure")
    assert fixed is not None and fixed.get("message") == "[XPASS(strict)] verdict xpass"


def test_a_builds_file_where_no_folder_can_be_made_is_one_usage_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(UsageError) as err:
        junit.write_builds(blocker / "builds.xml", [_Outcome("b", 1.0)], {})
    # the path given, then what cannot be done there and the OS's reason (strerror(3))
    assert err.value.message in {
        f"{blocker / 'builds.xml'}: cannot write the JUnit XML there ({os.strerror(code)})"
        for code in (errno.EEXIST, errno.ENOTDIR)}
    folder = tmp_path / "a-folder"
    folder.mkdir()
    with pytest.raises(UsageError) as err:
        junit.write_builds(folder, [_Outcome("b", 1.0)], {})
    assert err.value.message.startswith("JUnit XML ") and "a-folder" in err.value.message


def test_control_characters_of_an_error_leave_the_builds_file_readable(tmp_path: Path) -> None:
    """XML 1.0 allows no control character but tab, line feed and carriage return: a
    compiler's colours or a NUL in an error are written escaped (``\\x1b``), so the file still
    parses, and tabs and line breaks stay as they are."""
    error = "step build failed: \x1b[31merror\x1b[0m\x00\n\tat line 2"
    outcomes = [_Outcome("coloured", 1.0, error),
                _Outcome("signed", 1.0, "x", {"signature": ["undefined \x07symbol: f"]})]
    path = junit.write_builds(tmp_path / "builds.xml", outcomes, {})
    cases = {c.get("name"): c for c in ET.parse(path).getroot().iter("testcase")}
    failure = cases["coloured"].find("failure")
    assert failure is not None
    assert failure.get("message") == "step build failed: \\x1b[31merror\\x1b[0m\\x00"
    assert failure.text == "step build failed: \\x1b[31merror\\x1b[0m\\x00\n\tat line 2"
    signed = cases["signed"].find("failure")
    assert signed is not None and signed.get("message") == "undefined \\x07symbol: f"
