"""``matrix`` refuses options that do not go together, in one line, exit 2 (README: "Bad
input ... exit 2"), naming the options as the command-line reference writes them
(``docs/command-line.md``: ``--explain ID``, ``--ids``, ``--trigger TRIGGER`` ...) and,
for the github-only options, the formats they apply to (README: ``--format
table|json|github|github-shards``); the same options each alone are accepted."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from toolkit.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
EXPLAIN = "apex-1.8.0-cp312-rocm7.0"


def _matrix_invocations() -> dict[str, str]:
    """Option -> its invocation, as docs/command-line.md writes matrix's options."""
    text = (ROOT / "docs" / "command-line.md").read_text(encoding="utf-8")
    section = text.split("### `python -m toolkit matrix`", 1)[1].split("\n### ", 1)[0]
    return {m.split()[0]: m for m in re.findall(r"^- `([^`]+)`", section, re.M)}


INVOCATIONS = _matrix_invocations()


def _refusal(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    (line,) = captured.err.splitlines()
    assert line.startswith("error: ")
    return line.removeprefix("error: ")


@pytest.mark.parametrize("other", [["--format", "json"], ["--package", "apex"], ["--rocm", "7.0"],
                                   ["--python", "3.12"], ["--ids"]])
def test_explain_takes_no_other_option(other: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    message = _refusal(["matrix", "--explain", EXPLAIN, *other], capsys)
    assert message == f"{INVOCATIONS['--explain']} takes no other option"


def test_explain_alone_prints_the_build(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["matrix", "--explain", EXPLAIN]) == 0
    assert capsys.readouterr().out.splitlines()[0] == EXPLAIN


@pytest.mark.parametrize("other", [["--format", "json"], ["--format", "github"],
                                   ["--trigger", "push"], ["--families", "gfx94X"],
                                   ["--include-known-failures"], ["--changed-since", "x"]])
def test_ids_takes_only_the_filters(other: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    message = _refusal(["matrix", "--ids", *other], capsys)
    filters = ", ".join(INVOCATIONS[o].split()[0] for o in ("--package", "--rocm"))
    assert message == f"{INVOCATIONS['--ids']} takes only {filters} and --python"


@pytest.mark.parametrize("fmt", ["table", "json"])
@pytest.mark.parametrize("other", [["--trigger", "push"], ["--families", "gfx94X"],
                                   ["--include-known-failures"], ["--changed-since", "x"]])
def test_github_options_need_a_github_format(fmt: str, other: list[str],
                                             capsys: pytest.CaptureFixture[str]) -> None:
    message = _refusal(["matrix", "--format", fmt, *other], capsys)
    assert message == ("--trigger, --families, --include-known-failures and --changed-since "
                       "apply to --format github and github-shards only")
    for option in ("--trigger", "--families", "--include-known-failures", "--changed-since"):
        assert option in INVOCATIONS  # each named option is one matrix documents


def test_an_unknown_format_names_the_valid_ones(capsys: pytest.CaptureFixture[str]) -> None:
    message = _refusal(["matrix", "--format", "jsn"], capsys)
    # difflib: "jsn" is near "json" alone (similarity 6/7; the others under 0.6)
    assert message == "unknown format 'jsn'; valid: table, json, github, github-shards; did you mean json?"
