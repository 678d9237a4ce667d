"""On a terminal each step shows a live status line; a process that ends while one is shown
(an interrupted build) must not leave the terminal with its cursor hidden: the reporter asks
``atexit`` to close it, once per reporter however many steps it runs, and closing ends the
status (rich shows the cursor again: ECMA-48 private mode 25, ``ESC[?25h``)."""

from __future__ import annotations

import io
from collections.abc import Callable

import pytest

from toolkit.cli import console
from toolkit.cli.console import StreamReporter


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_one_exit_hook_per_reporter_and_it_restores_the_cursor(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("CI", "GITHUB_ACTIONS", "TERM"):
        monkeypatch.delenv(name, raising=False)
    hooks: list[Callable[[], None]] = []
    monkeypatch.setattr(console.atexit, "register", hooks.append)
    out = _Tty()
    rep = StreamReporter(out, io.StringIO())
    rep.step_started(1, 2, "sources")
    rep.step(1, 2, "sources", "ok", 0.1)
    rep.step_started(2, 2, "build-wheel")
    assert hooks == [rep.close]
    assert rep._live is not None
    hooks[0]()  # the process ends mid-step
    assert rep._live is None
    shown = out.getvalue()
    assert shown.count("\x1b[?25l") == 2  # each step's status hid the cursor
    assert shown.rfind("\x1b[?25h") > shown.rfind("\x1b[?25l")  # and the cursor is back
    other = StreamReporter(_Tty(), io.StringIO())
    other.step_started(1, 1, "x")
    other.close()
    assert hooks == [rep.close, other.close]
