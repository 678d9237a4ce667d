"""`python -m toolkit report`, in process, on a hand-written JUnit file (two tests, one of
them failed): ``--json`` is one JSON document indented two spaces; the table's title is
``--title`` (default "Sessions and tests", docs/command-line.md); a ``$GITHUB_STEP_SUMMARY``
that cannot be appended to is one warning line after the summary, never the command's
failure (exit 0; ``--strict`` still exit 1 for the failed test, README "## Exit codes": 1 a
check failed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolkit.cli.main import main

JUNIT = """<testsuite name="pytest" tests="2" failures="1">
  <testcase classname="t" name="one" time="0.25"/>
  <testcase classname="t" name="two" time="0.5"><failure message="boom">boom</failure></testcase>
</testsuite>
"""


@pytest.fixture
def junit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    path = tmp_path / "junit.xml"
    path.write_text(JUNIT)
    return path


def test_json_is_one_document_indented_two_spaces(junit: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "--junit", str(junit), "--json"]) == 0
    out = capsys.readouterr().out
    doc = json.loads(out)
    assert out.startswith("{\n  \"") and out.endswith("}\n")
    assert out == json.dumps(doc, indent=2) + "\n"


def test_the_table_carries_the_title_given(junit: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "--junit", str(junit)]) == 0
    assert "Sessions and tests" in [x.strip() for x in capsys.readouterr().out.splitlines()]
    assert main(["report", "--junit", str(junit), "--title", "Nightly of 7.0"]) == 0
    out = capsys.readouterr().out
    assert "Nightly of 7.0" in [x.strip() for x in out.splitlines()] and "Sessions and tests" not in out


def test_an_unwritable_step_summary_is_a_warning_after_the_summary(
        junit: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "no-such-folder" / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(target))
    assert main(["report", "--junit", str(junit)]) == 0
    out, err = capsys.readouterr()
    assert "1 passed, 1 failed" in out
    (line,) = [x for x in err.splitlines() if x.strip()]
    assert line.startswith("warning: ") or line.startswith("::warning")
    assert f"{target} ($GITHUB_STEP_SUMMARY): cannot append the summary" in line
    assert main(["report", "--junit", str(junit), "--strict"]) == 1


def test_the_step_summary_gets_the_markdown_with_the_title(
        junit: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(target))
    md = tmp_path / "copy.md"
    assert main(["report", "--junit", str(junit), "--title", "Nightly", "--markdown", str(md)]) == 0
    text = target.read_text()
    assert text.startswith("### ❌ Nightly") and text == md.read_text() + "\n"
