"""What `report` makes of nox's `--report` JSON, JUnit suites and build manifests, row by row,
and the words of its headline and GitHub step summary. The truths: nox's report format (a
``sessions`` list, each with ``name``, ``signatures``, ``result`` one of success, failed,
aborted, skipped, ``result_code``, ``duration`` and ``reason``), GitHub-flavoured markdown
(a ``|`` inside a table cell is written ``\\|``; a fenced block ends at a fence of the same
kind), English plurals and hand-counted totals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolkit.core.errors import UsageError
from toolkit.verify import report
from toolkit.verify.report import Case, Row, Summary


@pytest.mark.parametrize(("reason", "split"), [
    ("error: the build failed (exit 5)", ("the build failed", 5)),
    ("error: two\nlines (exit 12)", ("two\nlines", 12)),
    ("error: inner (exit 3) text (exit 4)", ("inner (exit 3) text", 4)),
    ("error: no code", ("error: no code", None)),
    ("error: too long (exit 1234)", ("error: too long (exit 1234)", None)),
    ("Python 3.9 not found", ("Python 3.9 not found", None)),
    ("prefix error: x (exit 2)", ("prefix error: x (exit 2)", None)),
])
def test_a_toolkit_sessions_reason_splits_into_message_and_exit_code(reason: str,
                                                                    split: tuple[str, int | None]) -> None:
    assert report.split_reason(reason) == split


def test_session_reason_is_what_split_reason_reads() -> None:
    assert report.session_reason("x failed", 5) == "error: x failed (exit 5)"


def _nox(tmp_path: Path, sessions: object, name: str = "nox.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps({"result": 1, "sessions": sessions}))
    return path


def test_nox_sessions_as_nox_reports_them(tmp_path: Path) -> None:
    path = _nox(tmp_path, [
        {"name": "lint", "signatures": ["lint-3.12"], "result": "success", "result_code": 1,
         "duration": 2, "reason": None},
        {"name": "build", "signatures": [], "result": "failed", "result_code": 0,
         "duration": 1.5, "reason": "error: gcc failed (exit 5)"},
        {"name": "smoke", "result": "aborted", "duration": "n/a", "reason": "error: Ctrl-C (exit 130)"},
        {"name": "docs", "signatures": ["docs"], "result": "skipped", "reason": "error: skip me (exit 4)"},
        {"name": "plain", "signatures": [7], "result": "failed", "reason": "Session plain failed."},
        {"name": "empty", "signatures": ["empty"], "result": "failed", "reason": ""},
    ])
    rows = report.read_nox_report(path)
    assert [(r.kind, r.source, r.name, r.outcome) for r in rows] == [
        ("nox", str(path), "lint-3.12", "passed"), ("nox", str(path), "build", "failed"),
        ("nox", str(path), "smoke", "failed"), ("nox", str(path), "docs", "skipped"),
        ("nox", str(path), "plain", "failed"), ("nox", str(path), "empty", "failed")]
    assert [r.duration for r in rows] == [2.0, 1.5, None, None, None, None]
    assert [(r.reason, r.exit_code) for r in rows] == [
        (None, None), ("gcc failed", 5), ("Ctrl-C", 130),
        ("skip me", None),  # a skipped session has no exit code
        ("Session plain failed.", None), (None, None)]
    assert report.read_nox_report(path, "label")[0].source == "label"


@pytest.mark.parametrize(("doc", "names"), [
    ('{"sessions": {}}', ["'sessions' list"]),
    ('[1, 2]', ["'sessions' list"]),
    ('{"sessions": [3]}', ["sessions[0]", "'name'"]),
    ('{"sessions": [{"name": "a", "result": "success"}, {"name": 4}]}', ["sessions[1]", "'name'"]),
    ('{"sessions": [{"name": "a", "result": "passed"}]}',
     ["sessions[0].result", "'passed'", "success, failed, aborted, skipped"]),
    ("{not json", ["nox --report FILE"]),
])
def test_a_file_nox_did_not_write_is_one_line_naming_it_and_the_shape(tmp_path: Path, doc: str,
                                                                     names: list[str]) -> None:
    path = tmp_path / "r.json"
    path.write_text(doc)
    with pytest.raises(UsageError) as err:
        report.read_nox_report(path)
    assert err.value.message.startswith(str(path))
    for name in names:
        assert name in err.value.message
    with pytest.raises(UsageError) as err:
        report.read_nox_report(tmp_path / "missing.json")
    assert "no such nox report" in err.value.message and "nox --report FILE" in err.value.message


def _junit(tmp_path: Path, body: str, name: str = "j.xml") -> Path:
    path = tmp_path / name
    path.write_text(f"<?xml version='1.0'?><testsuites>{body}</testsuites>")
    return path


def test_junit_suites_become_rows_with_their_counts_and_outcome(tmp_path: Path) -> None:
    path = _junit(tmp_path, (
        "<testsuite name='mixed' time='3'>"
        "<testcase classname='m' name='a'/>"
        "<testcase classname='m' name='b'><failure message='boom'/></testcase>"
        "<testcase classname='m' name='c'><error message='setup'/></testcase>"
        "<testcase classname='m' name='d'><skipped/></testcase>"
        "<testcase classname='m' name='e'><skipped type='pytest.xfail'/></testcase></testsuite>"
        "<testsuite name='skips'><testcase name='a' time='0.5'/></testsuite>"
        "<testsuite name='allskip'><testcase name='a'><skipped/></testcase></testsuite>"
        "<testsuite name='none'/>"
        "<testsuite name='xfails'><testcase name='a'><skipped type='pytest.xfail'/></testcase></testsuite>"))
    mixed, passing, allskip, none, xfails = report.read_junit(path)
    assert (mixed.passed, mixed.failed, mixed.errors, mixed.skipped, mixed.xfailed) == (1, 1, 1, 1, 1)
    assert mixed.outcome == "failed" and mixed.tests == 5 and mixed.duration == 3.0
    assert mixed.failures == (Case("m::b", "boom"), Case("m::c", "setup"))
    assert (passing.outcome, passing.duration) == ("passed", 0.5)  # the cases' time when the suite has none
    assert (allskip.outcome, allskip.duration) == ("skipped", None)
    assert (none.outcome, none.tests) == ("no tests", 0)
    assert xfails.outcome == "passed"  # an expected failure is not a skip
    assert report.read_junit(_junit(tmp_path, "", "e.xml"), "lbl") == \
        [Row("junit", "lbl", "testsuites", "no tests")]


def test_counts_name_only_what_happened() -> None:
    assert Row("junit", "s", "n", "passed", passed=3).counts() == "3 passed"
    assert Row("junit", "s", "n", "failed", passed=0, failed=1, errors=2, skipped=3, xfailed=4).counts() == \
        "0 passed, 1 failed, 2 errors, 3 skipped, 4 xfailed"
    assert Row("nox", "s", "n", "passed").counts() == ""
    assert Row("build", "s", "n", "passed").counts() == ""


def test_each_kind_of_row_carries_its_own_json_fields() -> None:
    nox = Row("nox", "s", "n", "failed", 1.0, "why", exit_code=5).as_json()
    assert nox == {"kind": "nox", "source": "s", "name": "n", "outcome": "failed", "duration": 1.0,
                   "reason": "why", "exit_code": 5}
    build = Row("build", "s", "b", "failed", exit_code=5, signature=("l1", "l2")).as_json()
    assert build["exit_code"] == 5 and build["signature"] == ["l1", "l2"] and "passed" not in build
    unit = Row("junit", "s", "j", "failed", passed=1, failed=2, errors=3, skipped=4, xfailed=5,
               failures=(Case("c::t", "m"),)).as_json()
    assert {k: unit[k] for k in ("passed", "failed", "errors", "skipped", "xfailed")} == \
        {"passed": 1, "failed": 2, "errors": 3, "skipped": 4, "xfailed": 5}
    assert unit["failures"] == [{"name": "c::t", "message": "m"}]
    assert "exit_code" not in unit and "signature" not in unit


def test_the_headline_counts_in_english() -> None:
    rows = (Row("nox", "f", "a", "passed"), Row("nox", "f", "b", "failed"), Row("nox", "f", "c", "passed"),
            Row("build", "m", "x", "failed"),
            Row("junit", "j", "s1", "failed", passed=2, failed=1, xfailed=1),
            Row("junit", "j", "s2", "passed", passed=1, skipped=2))
    summary = Summary(rows)
    assert summary.headline() == ("3 nox sessions: 2 passed, 1 failed; 1 build: 1 failed; "
                                  "7 tests in 2 suites: 3 passed, 1 failed, 2 skipped, 1 xfailed")
    assert summary.totals() == {"passed": 3, "failed": 3, "skipped": 0, "no tests": 0}
    assert summary.test_totals() == {"passed": 3, "failed": 1, "errors": 0, "skipped": 2, "xfailed": 1}
    assert not summary.ok and [r.name for r in summary.failed] == ["b", "x", "s1"]
    one = Summary((Row("nox", "f", "a", "skipped"), Row("junit", "j", "s", "passed", passed=1)))
    assert one.headline() == "1 nox session: 1 skipped; 1 test in 1 suite: 1 passed"
    assert one.ok
    assert Summary((Row("junit", "j", "s", "no tests"),)).headline() == "0 tests in 1 suite"
    assert Summary(()).headline() == "nothing ran"
    doc = one.as_json()
    assert doc["ok"] is True and doc["totals"]["skipped"] == 1 and doc["tests"]["passed"] == 1
    assert [r["name"] for r in doc["rows"]] == ["a", "s"]


def test_labels_are_file_names_made_distinct_by_their_folder() -> None:
    paths = [Path("/a/ci/nox.json"), Path("/b/local/nox.json"), Path("/c/junit.xml")]
    assert report._labels(paths) == ["ci/nox.json", "local/nox.json", "junit.xml"]
    same = [Path("/x/ci/r.xml"), Path("/y/ci/r.xml")]
    assert report._labels(same) == ["/x/ci/r.xml", "/y/ci/r.xml"]
    assert report._labels([Path("r.xml"), Path("r.xml")]) == ["r.xml", "r.xml"]


def _manifest(folder: Path, build_id: str, **fields: object) -> Path:
    path = folder / build_id / "manifest.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"build": {"id": build_id}, **fields}))
    return path


def test_manifests_of_a_folder_one_level_down_sorted(tmp_path: Path) -> None:
    b = _manifest(tmp_path, "b", outcome="ok")
    a = _manifest(tmp_path, "a", outcome="ok")
    (tmp_path / "a" / "deeper").mkdir()
    (tmp_path / "a" / "deeper" / "manifest.json").write_text("{}")
    assert report.manifest_files(tmp_path) == [a, b]
    assert report.manifest_files(a) == [a]
    with pytest.raises(UsageError) as err:
        report.manifest_files(tmp_path / "a" / "deeper")
    assert err.value.message.startswith(f"{tmp_path / 'a' / 'deeper'}: no */manifest.json in this folder")
    assert err.value.message.endswith("artifacts/<build-id>/manifest.json)")


def test_notes_say_the_reason_or_the_first_failure_and_how_many_more() -> None:
    assert report._note(Row("build", "s", "b", "failed", reason="failed at build",
                            signature=("undefined symbol", "ld", "x"))) == \
        "failed at build: undefined symbol (+2 more)"
    assert report._note(Row("build", "s", "b", "failed", reason="failed at build", signature=("one",))) == \
        "failed at build: one"
    assert report._note(Row("nox", "s", "n", "failed", reason="why")) == "why"
    two = (Case("m::a", "boom"), Case("m::b", "bang"))
    assert report._note(Row("junit", "s", "j", "failed", failures=two)) == "m::a: boom (+1 more)"
    assert report._note(Row("junit", "s", "j", "failed", failures=two[:1])) == "m::a: boom"
    assert report._note(Row("junit", "s", "j", "passed")) == ""
    assert report.exit_text(Row("nox", "s", "n", "failed", exit_code=0)) == "0"
    assert report.exit_text(Row("nox", "s", "n", "failed")) == ""


def test_markdown_cells_keep_the_table_whole() -> None:
    assert report._cell(" a|b\\c\nd ") == "a\\|b\\\\c d"


def test_the_step_summary_lists_reasons_then_cases_up_to_the_limit() -> None:
    cases = tuple(Case(f"m::t{i}", f"boom {i}") for i in range(4))
    summary = Summary((Row("nox", "r.json", "build", "failed", reason="gcc failed", exit_code=5),
                       Row("nox", "r.json", "lint", "failed", reason="ruff"),
                       Row("junit", "j.xml", "s", "failed", failed=4, failures=cases)))
    text = report.markdown(summary, "Title", max_failures=2)
    lines = text.splitlines()
    assert lines[0] == "### ❌ Title" and lines[2] == f"**{summary.headline()}**"
    at = lines.index("<details><summary>Failures (6)</summary>")
    # GitHub renders the list inside <details> as markdown only after a blank line
    # (GitHub Docs, "Organizing information with collapsed sections")
    assert lines[at + 1] == "" and lines[-2] == ""
    assert "- `build` (r.json): exit 5: gcc failed" in lines
    assert "- `lint` (r.json): ruff" in lines
    assert "- `m::t1` (j.xml): boom 1" in lines and "- `m::t2` (j.xml): boom 2" not in text
    assert "- ... and 2 more" in lines and lines[-1] == "</details>" and text.endswith("\n")
    assert report.markdown(summary, max_failures=4).count("- ... and") == 0
    ok = report.markdown(Summary((Row("nox", "r.json", "lint", "passed"),)))
    assert ok.splitlines()[0] == "### ✅ Sessions and tests" and "<details>" not in ok


def test_a_failed_builds_signature_is_fenced_so_its_backticks_cannot_end_the_block() -> None:
    plain = Row("build", "m", "b-1", "failed", reason="failed at build", exit_code=5,
                signature=("undefined symbol: f",))
    ticks = Row("build", "m", "b-2", "failed", reason="failed at build", signature=("see ```x```",))
    lines = report._signatures(Summary((plain, ticks, Row("build", "m", "b-3", "passed"))))
    assert lines[1] == "**`b-1`** failed at build (exit 5), the failure's signature:"
    assert lines[3:6] == ["```", "undefined symbol: f", "```"]
    assert "(exit ?)" in lines[7] and lines[9:12] == ["~~~~", "see ```x```", "~~~~"]
    assert len(lines) == 12  # nothing for the build that passed


def test_the_step_summary_is_appended_only_in_actions(tmp_path: Path) -> None:
    target = tmp_path / "summary.md"
    target.write_text("earlier\n")
    assert report.append_step_summary("mine", {}) is None
    assert report.append_step_summary("mine", {"GITHUB_STEP_SUMMARY": ""}) is None
    assert report.append_step_summary("mine", {"GITHUB_STEP_SUMMARY": str(target)}) == target
    assert target.read_text() == "earlier\nmine\n"
    with pytest.raises(UsageError) as err:
        report.append_step_summary("mine", {"GITHUB_STEP_SUMMARY": str(tmp_path)})
    assert str(tmp_path) in err.value.message and "GITHUB_STEP_SUMMARY" in err.value.message
