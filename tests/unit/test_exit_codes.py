"""README's "Exit codes" table against the code: every exit code a ``ToolkitError`` subclass
carries (in any module of the toolkit) is a row whose meaning says what the error is, and
every row is a code the toolkit gives (0 success, 130 an interrupt, the rest its errors)."""

from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path

import pytest

import toolkit
from toolkit.core.errors import ToolkitError

ROOT = Path(__file__).resolve().parents[2]
ROW = re.compile(r"^\| (?P<code>\d+) \| (?P<meaning>.+) \|$")

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


def table() -> dict[int, str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
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


def test_the_table_has_one_row_per_code() -> None:
    rows = table()
    assert sorted(rows) == [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 130]
    assert rows[0] == "ok" and rows[130].startswith("interrupted")


@pytest.mark.parametrize("cls", error_classes(), ids=lambda c: c.__name__)
def test_every_error_code_is_a_row_saying_what_it_is(cls: type[ToolkitError]) -> None:
    named = next((k for k in cls.__mro__ if k.__name__ in KEYWORDS), None)
    assert named is not None, f"{cls.__module__}.{cls.__name__}: a new kind of error: give its " \
                              "exit code a row in README's Exit codes and a keyword here"
    assert "exit_code" not in vars(cls) or cls is named, \
        f"{cls.__name__} changes its exit code: document it and name it in KEYWORDS"
    rows = table()
    assert cls.exit_code in rows, f"{cls.__name__}'s exit {cls.exit_code} is not in the table"
    keyword = KEYWORDS[named.__name__]
    assert keyword in rows[cls.exit_code], (cls.__name__, rows[cls.exit_code])


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
