"""README's "Exit codes" table against the code: every exit code a ``ToolkitError`` subclass
carries is a row whose meaning says what the error is, and every row is a code the toolkit
gives (0 success, 130 an interrupt, the rest its errors). Every error type lives in
``toolkit/core/errors.py``. The comparison is one function, shown failing on planted
mismatches (a class whose code has no row, a row no class gives, a row that does not say what
the error is, a new kind of error not named here)."""

from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path

import pytest

import toolkit
from toolkit.core import errors
from toolkit.core.errors import ToolkitError

ROOT = Path(__file__).resolve().parents[2]
ROW = re.compile(r"^\| (?P<code>\d+) \| (?P<meaning>.+) \|$")
# codes no error class carries: success, and what an interrupted command exits with
NOT_ERRORS = {0, 130}

# what the README's meaning of each error's code must say (the error's own words); a new
# subclass with an exit code of its own is documented there, and named here
KEYWORDS = {
    "CheckFailed": "check",
    "UsageError": "bad input",
    "DataError": "data file",
    "EnvironmentProblem": "missing tool",
    "StepFailed": "build step",
    "CommandFailed": "command",
    "Busy": "busy",
    "KnownFailureRefused": "known failure was left out",
    "SourceUnreachable": "cannot be reached",
    "TimedOut": "timed out",
    "AwaitsUpstream": "awaits upstream",
    "DirtySource": "uncommitted changes",
    "BuildRequirementsUnavailable": "build requirements unavailable",
}


def table(text: str | None = None) -> dict[int, str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8") if text is None else text
    section = text.split("\n## Exit codes\n", 1)[1].split("\n## ", 1)[0]
    rows: dict[int, str] = {}
    for line in section.splitlines():
        m = ROW.match(line)
        if m:
            assert int(m["code"]) not in rows, f"exit code {m['code']} has two rows"
            rows[int(m["code"])] = m["meaning"]
    return rows


def error_classes() -> list[type[ToolkitError]]:
    """Every ``ToolkitError`` subclass defined in the toolkit (all its modules imported)."""
    for info in pkgutil.walk_packages(toolkit.__path__, "toolkit."):
        if info.name != "toolkit.__main__":
            importlib.import_module(info.name)
    out: list[type[ToolkitError]] = []
    todo: list[type[ToolkitError]] = [ToolkitError]
    while todo:
        cls = todo.pop()
        out.append(cls)
        todo += cls.__subclasses__()
    return [c for c in out if c.__module__.startswith("toolkit.") and c is not ToolkitError]


def mismatches(classes: list[type[ToolkitError]], rows: dict[int, str]) -> list[str]:
    """What differs between the error classes and the README's rows, one line each."""
    out: list[str] = []
    for cls in classes:
        named = next((k for k in cls.__mro__ if k.__name__ in KEYWORDS), None)
        if named is None:
            out.append(f"{cls.__name__}: a new kind of error: give its exit code a row in "
                       "README's Exit codes and a keyword here")
            continue
        if "exit_code" in vars(cls) and cls is not named:
            out.append(f"{cls.__name__} changes its exit code: document it and name it in "
                       "KEYWORDS")
        if cls.exit_code not in rows:
            out.append(f"{cls.__name__}'s exit {cls.exit_code} is not in the table")
        elif KEYWORDS[named.__name__] not in rows[cls.exit_code]:
            out.append(f"{cls.__name__}: row {cls.exit_code} does not say "
                       f"{KEYWORDS[named.__name__]!r}")
    given = {c.exit_code for c in classes} | NOT_ERRORS
    out += [f"row {code} is a code no error gives" for code in sorted(set(rows) - given)]
    return out


def test_the_table_has_one_row_per_code() -> None:
    rows = table()
    assert sorted(rows) == [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 130]
    assert rows[0] == "ok" and rows[130].startswith("interrupted")


def test_every_error_class_has_its_row_and_every_row_a_class() -> None:
    classes = error_classes()
    assert len(classes) >= len(KEYWORDS)
    assert mismatches(classes, table()) == []


def test_every_error_type_is_defined_in_core_errors() -> None:
    """One module for every error type (cibuildwheel's errors.py): none defined elsewhere."""
    elsewhere = sorted(f"{c.__module__}.{c.__name__}" for c in error_classes()
                       if c.__module__ != "toolkit.core.errors")
    assert elsewhere == []
    for cls in error_classes():
        assert getattr(errors, cls.__name__) is cls


def test_a_planted_class_without_a_row_is_found() -> None:
    class Strange(errors.UsageError):  # a new code of its own, documented nowhere
        exit_code = 13

    class Renamed(ToolkitError):  # a kind of error the table does not name
        exit_code = 5

    found = mismatches([*error_classes(), Strange, Renamed], table())
    assert "Strange changes its exit code: document it and name it in KEYWORDS" in found
    assert "Strange's exit 13 is not in the table" in found
    assert any(line.startswith("Renamed: a new kind of error") for line in found)


def test_a_planted_row_without_a_class_or_with_other_words_is_found() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    planted = readme.replace("| 130 | interrupted", "| 13 | something new |\n| 130 | interrupted")
    planted = planted.replace("| 9 | timed out:", "| 9 | too slow:")
    found = mismatches(error_classes(), table(planted))
    assert found == ["TimedOut: row 9 does not say 'timed out'",
                     "row 13 is a code no error gives"]
    rows = table(readme)
    del rows[6]  # the Busy row gone
    assert mismatches(error_classes(), rows) == ["Busy's exit 6 is not in the table"]


def test_every_row_is_a_code_the_toolkit_gives(monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    from toolkit.cli.commands import index
    from toolkit.cli.main import main

    given = {c.exit_code for c in error_classes()}

    # 130: what an interrupted command exits with (KeyboardInterrupt, the CLI's own handler)
    def interrupted(args: object) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(index, "run", interrupted)
    given.add(main(["index", "."]))
    assert capsys.readouterr().err == "interrupted\n"
    given.add(0)  # success
    assert set(table()) == given
