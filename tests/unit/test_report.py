"""`report`: real `nox --report` files and small JUnit XML files in one summary."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from toolkit.cli.main import main
from toolkit.core.errors import UsageError
from toolkit.verify.report import (
    EMPTY,
    FAILED,
    PASSED,
    SKIPPED,
    duration_text,
    markdown,
    read_junit,
    read_nox_report,
    summarise,
)

ROOT = Path(__file__).resolve().parents[2]

NOXFILE = '''
import nox

@nox.session(python=False)
def fine(session):
    session.log("ok")

@nox.session(python=False)
def broken(session):
    session.error("the build step failed")

@nox.session(python=False)
def nogpu(session):
    session.skip("no AMD GPU on this runner")

@nox.session(python=False)
def crashes(session):
    session.run("false")

@nox.session(python=False)
@nox.parametrize("rocm", ["6.4", "7.0"])
def build(session, rocm):
    pass
'''

JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites>
  <testsuite name="smoke" tests="4" failures="1" errors="1" skipped="1" time="12.5">
    <testcase classname="smoke_tests.test_import" name="test_import_apex" time="1.0"/>
    <testcase classname="smoke_tests.test_import" name="test_kernel" time="2.0">
      <failure message="hipErrorNoBinaryForGpu: no kernel image | gfx942">traceback...</failure>
    </testcase>
    <testcase classname="smoke_tests.test_ops" name="test_ops" time="0.5">
      <error>RuntimeError: HIP error
more lines</error>
    </testcase>
    <testcase classname="smoke_tests.test_ops" name="test_multi_gpu" time="0">
      <skipped message="needs 2 GPUs"/>
    </testcase>
  </testsuite>
  <testsuite name="all-skipped" tests="1">
    <testcase classname="a" name="b"><skipped/></testcase>
  </testsuite>
  <testsuite name="empty" tests="0"/>
</testsuites>
"""

SINGLE_SUITE = """<testsuite name="pytest" tests="2">
  <testcase classname="t" name="one" time="0.25"/>
  <testcase classname="t" name="two" time="0.5"/>
</testsuite>
"""


@pytest.fixture(scope="module")
def nox_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real report: `python -m nox --report FILE` on a tiny noxfile (about a second)."""
    folder = tmp_path_factory.mktemp("nox")
    (folder / "noxfile.py").write_text(NOXFILE)
    report = folder / "nox-report.json"
    res = subprocess.run(
        [sys.executable, "-m", "nox", "--report", str(report), "-s", "fine", "broken", "nogpu",
         "crashes", "build"],
        cwd=folder, capture_output=True, text=True, timeout=120)
    assert res.returncode == 1, res.stderr  # some sessions fail on purpose
    assert report.is_file(), res.stderr
    return report


@pytest.fixture
def junit(tmp_path: Path) -> Path:
    path = tmp_path / "junit.xml"
    path.write_text(JUNIT)
    return path


def test_nox_report_rows(nox_report: Path) -> None:
    rows = read_nox_report(nox_report)
    got = {r.name: (r.outcome, r.reason) for r in rows}
    assert got["fine"] == (PASSED, None)
    assert got["broken"] == (FAILED, "the build step failed")
    assert got["nogpu"] == (SKIPPED, "no AMD GPU on this runner")
    assert got["crashes"][0] == FAILED  # a failed session.run: nox records no reason
    assert got["build(rocm='6.4')"] == (PASSED, None) and got["build(rocm='7.0')"] == (PASSED, None)
    assert all(r.kind == "nox" and r.duration is not None and r.duration >= 0 for r in rows)


def test_junit_rows(junit: Path) -> None:
    smoke, skipped, empty = read_junit(junit)
    assert (smoke.name, smoke.outcome) == ("smoke", FAILED)
    assert (smoke.passed, smoke.failed, smoke.errors, smoke.skipped) == (1, 1, 1, 1)
    assert smoke.duration == 12.5
    assert [c.name for c in smoke.failures] == ["smoke_tests.test_import::test_kernel",
                                                 "smoke_tests.test_ops::test_ops"]
    assert smoke.failures[0].message.startswith("hipErrorNoBinaryForGpu")
    assert smoke.failures[1].message == "RuntimeError: HIP error"  # first line of the text
    assert smoke.counts() == "1 passed, 1 failed, 1 errors, 1 skipped"
    assert skipped.outcome == SKIPPED and empty.outcome == EMPTY and empty.tests == 0


def test_junit_single_suite_root_and_case_times(tmp_path: Path) -> None:
    path = tmp_path / "one.xml"
    path.write_text(SINGLE_SUITE)
    (row,) = read_junit(path)
    assert (row.name, row.outcome, row.passed, row.duration) == ("pytest", PASSED, 2, 0.75)


def test_junit_nested_suites_keep_their_own_cases(tmp_path: Path) -> None:
    path = tmp_path / "nested.xml"
    path.write_text("""<testsuites><testsuite name="outer">
      <testsuite name="inner-a"><testcase classname="a" name="one"/></testsuite>
      <testsuite name="inner-b"><testcase classname="b" name="two"><failure message="m"/></testcase>
      </testsuite></testsuite></testsuites>""")
    rows = read_junit(path)
    assert [(r.name, r.outcome, r.tests) for r in rows] == [("inner-a", PASSED, 1),
                                                           ("inner-b", FAILED, 1)]


def test_summary_of_both(nox_report: Path, junit: Path) -> None:
    summary = summarise([nox_report], [junit])
    assert not summary.ok
    assert {r.name for r in summary.failed} == {"broken", "crashes", "smoke"}
    assert summary.headline() == (
        "6 nox sessions: 3 passed, 2 failed, 1 skipped; "
        "5 tests in 3 suites: 1 passed, 1 failed, 1 errors, 2 skipped")
    doc = summary.as_json()
    assert doc["ok"] is False and doc["tests"] == {"passed": 1, "failed": 1, "errors": 1, "skipped": 2,
                                                  "xfailed": 0}
    json.dumps(doc)


def test_sources_stay_distinct(tmp_path: Path, nox_report: Path) -> None:
    for name in ("apex-1.8.0-cp312-rocm7.0-gfx94X-dcgpu", "apex-1.8.0-cp313-rocm7.0-gfx94X-dcgpu"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "nox-report.json").write_bytes(nox_report.read_bytes())
    summary = summarise(sorted(tmp_path.glob("*/nox-report.json")))
    assert sorted({r.source for r in summary.rows}) == [
        "apex-1.8.0-cp312-rocm7.0-gfx94X-dcgpu/nox-report.json",
        "apex-1.8.0-cp313-rocm7.0-gfx94X-dcgpu/nox-report.json"]
    # JUnit files too: a repeated name is told apart by its folder, not shown as a whole path
    junits = []
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        junits.append(tmp_path / name / "smoke.xml")
        junits[-1].write_text('<testsuite name="s" tests="0"></testsuite>')
    assert {r.source for r in summarise((), junits).rows} == {"a/smoke.xml", "b/smoke.xml"}


def test_markdown(nox_report: Path, junit: Path) -> None:
    text = markdown(summarise([nox_report], [junit]))
    assert text.startswith("### ❌ Sessions and tests\n")
    assert "| ❌ | nox | `nox-report.json` | `broken` | failed |" in text
    assert "| ✅ | nox | `nox-report.json` | `build(rocm='7.0')` | passed |" in text
    assert "no kernel image \\| gfx942" in text, "a | inside a cell is escaped"
    assert "<details><summary>Failures (3)</summary>" in text
    assert "- `broken` (nox-report.json): the build step failed" in text


def test_cli_table_and_step_summary(
    nox_report: Path, junit: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    step = tmp_path / "step-summary.md"
    step.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step))
    assert main(["report", "--nox-report", str(nox_report), "--junit", str(junit)]) == 0
    out = capsys.readouterr().out
    for needle in ("Sessions and tests", "broken", "build(rocm='6.4')", "smoke", "1 passed, 1 failed",
                   "the build step failed", "6 nox sessions"):
        assert needle in out, needle
    text = step.read_text()
    assert text.startswith("earlier step\n### ❌ Sessions and tests"), "appended, not replaced"
    assert main(["report", "--junit", str(junit), "--strict"]) == 1
    assert step.read_text().count("### ❌") == 2


def test_cli_without_actions_writes_no_step_summary(
    nox_report: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    md = tmp_path / "summary.md"
    assert main(["report", "--nox-report", str(nox_report), "--json", "--markdown", str(md)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in doc["rows"]][:2] == ["fine", "broken"]
    assert md.read_text().startswith("### ❌")


def test_cli_strict_passes_when_all_passed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "junit.xml"
    path.write_text(SINGLE_SUITE)
    assert main(["report", "--junit", str(path), "--strict"]) == 0
    assert "2 tests in 1 suite: 2 passed" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("flag", "content", "needle"),
    [
        ("--nox-report", None, "no such nox report"),
        ("--nox-report", "{not json", "not a nox report"),
        ("--nox-report", '{"sessions": [{"name": "x", "result": "great"}]}',
         "sessions[0].result: 'great' is not one of success, failed, aborted, skipped"),
        ("--nox-report", "[1, 2]", "expected an object with a 'sessions' list"),
        ("--junit", None, "no such JUnit file"),
        ("--junit", "<testsuite", "not JUnit XML"),
        ("--junit", "<html><body/></html>", "the root is <html>"),
    ],
)
def test_bad_files_exit_2(
    flag: str, content: str | None, needle: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    path = tmp_path / "input"
    if content is not None:
        path.write_text(content)
    assert main(["report", flag, str(path)]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and needle in err, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("content", [b"\xff\xfe<testsuite", "<!DOCTYPE x [<!ENTITY a 'b'>]><x>&c;</x>",
                                     "", "<testsuite><testcase name='a'>"])
def test_corrupt_junit_exits_2_in_one_line(tmp_path: Path, content: str | bytes,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "junit.xml"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    assert main(["report", "--junit", str(path)]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and "not JUnit XML" in err and len(err.strip().splitlines()) == 1, err


def test_junit_folder_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "--junit", str(tmp_path)]) == 2
    assert "not JUnit XML" in capsys.readouterr().err


def test_unwritable_markdown_exits_2_before_any_output(
        junit: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "no" / "such" / "folder" / "summary.md"
    assert main(["report", "--junit", str(junit), "--markdown", str(target)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and f"markdown summary {target}: cannot be written (" in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("kind", ["symlink", "fifo"])
def test_markdown_is_never_written_through_a_symlink_or_into_a_fifo(
        junit: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str) -> None:
    """Issue 29: `report --markdown OUT` wrote through a symlink and overwrote its target."""
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    target = tmp_path / "summary.md"
    if kind == "symlink":
        target.symlink_to(victim)
    else:
        os.mkfifo(target)
    assert main(["report", "--junit", str(junit), "--markdown", str(target)]) == 2
    out, err = capsys.readouterr()
    said = "a symlink" if kind == "symlink" else "a FIFO"
    assert out == "" and err.strip() == (f"error: markdown summary {target}: {said}, not "
                                         "written through; valid: a regular file or a new name")
    assert victim.read_text() == "precious\n"
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_markdown_replaces_a_regular_file_whole(junit: Path, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "summary.md"
    target.write_text("old summary, longer than nothing\n" * 100)
    assert main(["report", "--junit", str(junit), "--markdown", str(target)]) == 0
    capsys.readouterr()
    text = target.read_text()
    assert "old summary" not in text and text.strip()


def test_unwritable_step_summary_is_a_warning(
        junit: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path))  # a folder: cannot append
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    assert main(["report", "--junit", str(junit)]) == 0
    out, err = capsys.readouterr()
    assert "Sessions and tests" in out
    assert err.startswith("warning: ") and "($GITHUB_STEP_SUMMARY): cannot append" in err


def test_nothing_to_summarise_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report"]) == 2
    assert "nothing to summarise" in capsys.readouterr().err
    with pytest.raises(UsageError):
        summarise()


def test_invoke_report_task(nox_report: Path, junit: Path, tmp_path: Path) -> None:
    res = subprocess.run(
        [sys.executable, "-m", "invoke", "report", "--nox-report", str(nox_report),
         "--nox-report", str(nox_report), "--junit", str(junit), "--json"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert sum(r["kind"] == "nox" for r in doc["rows"]) == 12
    strict = subprocess.run(
        [sys.executable, "-m", "invoke", "report", "--junit", str(junit), "--strict"],
        cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert strict.returncode == 1


@pytest.mark.parametrize(("seconds", "text"), [(None, ""), (0.04, "0.0s"), (59.9, "59.9s"),
                                                (61, "1m 01s"), (3725, "1h 02m")])
def test_duration_text(seconds: float | None, text: str) -> None:
    assert duration_text(seconds) == text


def test_nothing_to_summarise_names_each_input_option_as_help_writes_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The usage error names the three input options, each with its value placeholder in
    capitals, as ``report --help`` writes its metavars (``--nox-report FILE``)."""
    assert main(["report"]) == 2
    err = capsys.readouterr().err
    asked = err.split("(next:")[0]  # the message; the hint after it is a command line
    named = dict(re.findall(r"(--[a-z][a-z-]*) ([A-Za-z]+)", asked))
    assert set(named) >= {"--nox-report", "--junit", "--manifests"}
    assert all(value.isupper() for value in named.values()), named
    with pytest.raises(UsageError) as raised:
        summarise()
    assert all(opt in str(raised.value) for opt in ("--nox-report", "--junit", "--manifests"))


def test_a_nox_session_without_a_name_is_named_by_its_index(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    # nox --report writes each session as an object with its "name"; the second one has none
    path = tmp_path / "nox.json"
    path.write_text('{"sessions": [{"name": "a", "result": "success"}, {"result": "failed"}]}')
    assert main(["report", "--nox-report", str(path)]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.endswith(f"{path}: sessions[1]: expected an object with a 'name'"), line
