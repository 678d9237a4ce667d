"""The `report` table as rich renders it: its title, caption (the headline), the eight
columns README's "Checks, smoke tests, reports" and exit-code sections name (the session's
exit code in the "Exit" column), how each is aligned, and each row's cells, against
hand-written rows. The truth for the markdown table is GitHub-flavoured markdown's own
syntax (a ``---:`` separator right-aligns a column)."""

from __future__ import annotations

from toolkit.verify import report
from toolkit.verify.report import Case, Row, Summary

COLUMNS = ["Kind", "Source", "Name", "Result", "Exit", "Tests", "Duration", "Notes"]


def _rows() -> Summary:
    return Summary((
        Row("nox", "r.json", "build-3.12", "failed", 75.0, "gcc failed", exit_code=5),
        Row("junit", "j.xml", "smoke", "passed", 1.25, passed=2, skipped=1),
        Row("build", "a/manifest.json", "apex-1", "failed", reason="failed at build-wheel",
            exit_code=5, signature=("x.c:1: error: boom", "second")),
        Row("junit", "j.xml", "unit", "failed", failed=1, failures=(Case("m::t", "bad"),)),
    ))


def _cells(table: object) -> list[list[str]]:
    columns = table.columns  # type: ignore[attr-defined]
    return [[str(c) for c in col._cells] for col in columns]


def test_the_table_has_the_documented_columns_aligned_for_numbers() -> None:
    t = report.table(_rows())
    assert [c.header for c in t.columns] == COLUMNS
    assert {c.header: c.justify for c in t.columns} == {
        "Kind": "left", "Source": "left", "Name": "left", "Result": "left", "Exit": "right",
        "Tests": "left", "Duration": "right", "Notes": "left"}
    # a long note folds onto more lines; every other cell is cut short with an ellipsis
    assert {c.header: c.overflow for c in t.columns} == {
        **{h: "ellipsis" for h in COLUMNS[:-1]}, "Notes": "fold"}


def test_the_table_title_is_given_and_the_caption_is_the_headline() -> None:
    summary = _rows()
    assert report.table(summary).title == "Sessions and tests"
    t = report.table(summary, "Nightly")
    assert t.title == "Nightly"
    assert t.caption == ("1 nox session: 1 failed; 1 build: 1 failed; "
                         "4 tests in 2 suites: 2 passed, 1 failed, 1 skipped")


def test_each_row_shows_its_kind_source_name_styled_result_exit_tests_duration_and_note() -> None:
    kind, source, name, result, exit_, tests, duration, notes = _cells(report.table(_rows()))
    assert kind == ["nox", "junit", "build", "junit"]
    assert source == ["r.json", "j.xml", "a/manifest.json", "j.xml"]
    assert name == ["build-3.12", "smoke", "apex-1", "unit"]
    assert result == ["[bold red]failed[/]", "[green]passed[/]", "[bold red]failed[/]",
                      "[bold red]failed[/]"]
    assert exit_ == ["5", "", "5", ""]
    assert tests == ["", "2 passed, 1 skipped", "", "0 passed, 1 failed"]
    assert duration == ["1m 15s", "1.2s", "", ""]
    assert notes == ["gcc failed", "", "failed at build-wheel: x.c:1: error: boom (+1 more)",
                     "m::t: bad"]


def test_skipped_and_empty_rows_are_yellow() -> None:
    t = report.table(Summary((Row("nox", "r", "a", "skipped"), Row("junit", "j", "b", "no tests"))))
    assert _cells(t)[3] == ["[yellow]skipped[/]", "[yellow]no tests[/]"]


def test_the_markdown_table_has_an_icon_column_then_the_same_columns_numbers_right_aligned() -> None:
    text = report.markdown(_rows())
    lines = text.splitlines()
    header = lines.index("| | Kind | Source | Name | Result | Exit | Tests | Duration |")
    assert lines[header + 1] == "|---|---|---|---|---|---:|---|---:|"
    assert lines[header + 2] == "| ❌ | nox | `r.json` | `build-3.12` | failed | 5 |  | 1m 15s |"
    assert lines[header + 3] == "| ✅ | junit | `j.xml` | `smoke` | passed |  | 2 passed, 1 skipped | 1.2s |"
    assert lines[header + 4] == "| ❌ | build | `a/manifest.json` | `apex-1` | failed | 5 |  |  |"
    skipped = report.markdown(Summary((Row("nox", "r", "a", "skipped"),
                                       Row("junit", "j", "b", "no tests"))))
    assert "| ⏭️ | nox | `r` | `a` | skipped |  |  |  |" in skipped.splitlines()
    assert "| ⚠️ | junit | `j` | `b` | no tests |  | 0 passed |  |" in skipped.splitlines()
