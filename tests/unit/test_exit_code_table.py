"""Each exit code's meaning is said once, in ``toolkit/core/errors.py`` (``EXIT_CODES``, beside
the error classes): the classes' codes are its codes, every ``--help``'s "exit codes:" line
is made from it, and README's "## Exit codes" table agrees with it row for row (the same
codes, in the same order, each README meaning beginning with the table's words). The
comparison is one function, shown failing on planted disagreements: a code added to
errors.py and not to the README, a README row errors.py does not have, a README row saying
something else."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

import pytest

from toolkit.core import errors
from toolkit.core.errors import EXIT_CODES, NOT_ERRORS, ToolkitError

ROOT = Path(__file__).resolve().parents[2]
ROW = re.compile(r"^\|\s*(?P<code>\d+)\s*\|\s*(?P<meaning>.*?)\s*\|\s*$")


def readme_rows(text: str | None = None) -> list[tuple[int, str]]:
    """The rows of README's "## Exit codes" table, in the README's order."""
    if text is None:
        text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## Exit codes\n", 1)[1].split("\n## ", 1)[0]
    return [(int(m["code"]), m["meaning"]) for m in map(ROW.match, section.splitlines()) if m]


def says(long: str, short: str) -> bool:
    """Does README's ``long`` meaning begin with ``short`` (all of it, or then ``: ...`` or
    `` (...)``)?"""
    return long == short or long.startswith((f"{short}: ", f"{short} ("))


def disagreements(table: Mapping[int, str], rows: list[tuple[int, str]]) -> list[str]:
    """What differs between errors.py's table and the README's rows, one line each."""
    out: list[str] = []
    readme = dict(rows)
    if len(readme) != len(rows):
        out.append("a code has two rows in README")
    for code, short in table.items():
        if code not in readme:
            out.append(f"exit {code} ({short}) has no row in README")
        elif not says(readme[code], short):
            out.append(f"README's row {code} does not begin with {short!r}: {readme[code]!r}")
    out += [f"README's row {code} is no code of errors.py" for code in readme if code not in table]
    if not out and [c for c, _ in rows] != list(table):
        out.append(f"README's rows are in another order: {[c for c, _ in rows]}")
    return out


def test_readme_agrees_with_errors_row_for_row() -> None:
    rows = readme_rows()
    assert len(rows) >= 14  # the table was found and read
    assert disagreements(EXIT_CODES, rows) == []


def test_the_classes_codes_are_the_tables() -> None:
    classes = [c for c in vars(errors).values()
               if isinstance(c, type) and issubclass(c, ToolkitError)]
    given = {c.exit_code for c in classes}
    assert given <= set(EXIT_CODES), given - set(EXIT_CODES)
    assert not given & NOT_ERRORS
    # every code of the table but success and an interrupt is some class's
    assert set(EXIT_CODES) - NOT_ERRORS == given
    assert NOT_ERRORS <= set(EXIT_CODES)


def _help_codes(text: str) -> list[tuple[int, str]]:
    """``exit codes: 0 ok, 2 bad input, ...`` of a --help, as (code, meaning) pairs."""
    body = " ".join(text.split("exit codes:", 1)[1].split())
    return [(int(c), m) for c, m in (p.split(" ", 1) for p in re.split(r", (?=\d+ )", body))]


def test_every_help_says_the_readmes_meaning_of_its_codes() -> None:
    """The help lines against the README itself (not the table they are made from)."""
    from toolkit.cli.main import build_parser

    readme = dict(readme_rows())
    parsers = build_parser().commands
    assert parsers
    for name, parser in parsers.items():
        pairs = _help_codes(parser.format_help())
        assert pairs and pairs[0] == (0, "ok"), name
        for code, meaning in pairs:
            assert says(readme[code], meaning), (name, code, meaning, readme[code])


def test_a_code_added_to_errors_without_the_readme_is_found() -> None:
    table = {**EXIT_CODES, 13: "something new"}
    assert disagreements(table, readme_rows()) == [
        "exit 13 (something new) has no row in README"]


@pytest.mark.parametrize(("old", "new", "found"), [
    ("| 9 | timed out:", "| 9 | too slow:",
     "README's row 9 does not begin with 'timed out': "),
    ("| 130 | interrupted", "| 13 | something new |\n| 130 | interrupted",
     "README's row 13 is no code of errors.py"),
    ("| 6 | busy", "| 66 | busy", "exit 6 (busy (a lock is held)) has no row in README"),
])
def test_a_planted_readme_row_is_found(old: str, new: str, found: str) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert old in readme
    got = disagreements(EXIT_CODES, readme_rows(readme.replace(old, new, 1)))
    assert got and got[0].startswith(found), got


def test_rows_out_of_order_are_found() -> None:
    rows = readme_rows()
    swapped = [rows[1], rows[0], *rows[2:]]
    assert disagreements(EXIT_CODES, swapped) == [
        f"README's rows are in another order: {[c for c, _ in swapped]}"]
