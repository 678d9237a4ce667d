"""What the toolkit's rich console puts on a terminal and into a pipe, rendered by real rich
consoles into strings and read as ECMA-48 SGR codes (31 red, 1;36 bold cyan; rich's
highlighter would colour a number, its markup would eat ``[red]``, its emoji codes would turn
``:smile:`` into a picture): outside text is shown as written, control characters escaped
while the console's own colours stay; piped output carries no codes at all, whatever
FORCE_COLOR says, and is never wrapped (a 250-character line, a wide table row stay one line)."""

from __future__ import annotations

import io
from dataclasses import dataclass

import pytest

from toolkit.cli import console
from toolkit.cli.console import StreamReporter


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in ("CI", "GITHUB_ACTIONS", "TERM", "COLORTERM", "NO_COLOR", "FORCE_COLOR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("COLUMNS", "60")
    return monkeypatch


def test_a_terminal_keeps_the_consoles_colours_and_escapes_control_bytes(
        terminal: pytest.MonkeyPatch) -> None:
    out = _Tty()
    console.console(out).print("a\x1b]0;title\x1b\\b", style="red", highlight=False)
    assert out.getvalue() == "\x1b[31ma\\x1b]0;title\\x1b\\b\x1b[0m\n"


def test_a_pipe_gets_no_codes_and_no_wrapping(terminal: pytest.MonkeyPatch) -> None:
    terminal.setenv("FORCE_COLOR", "1")
    out = io.StringIO()
    line = "[bold]x[/bold] 123 " + "y" * 250
    console.console(out).print(line)
    assert out.getvalue() == "x 123 " + "y" * 250 + "\n"


@dataclass
class _Outcome:
    build_id: str
    wheel: str
    checks: str = "ok"
    smoke: str = "ok"
    seconds: float = 3.0
    error: str | None = None


def test_the_builds_table_in_a_pipe_keeps_a_long_wheel_name_on_its_row(
        terminal: pytest.MonkeyPatch) -> None:
    wheel = "fbgemm_gpu-1.3.0+rocm7.0.2gitabcdef12-cp312-cp312-manylinux_2_28_x86_64.whl"
    out = io.StringIO()
    console.summary([_Outcome("fbgemm_gpu-1.3.0-py3.12-rocm7.0", wheel)], out)
    lines = out.getvalue().splitlines()
    assert lines[0].strip() == "Builds"  # the table's title
    header = next(line for line in lines if "Build" in line and "Wheel" in line)
    assert header.split("┃")[1:-1] == [c.ljust(w) for c, w in zip(
        (" Build", " Wheel", " Checks", " Smoke", " Time", " Result"),
        [len(x) for x in header.split("┃")[1:-1]], strict=True)]
    row = next(line for line in lines if wheel in line)
    assert row.split("│")[1:-1] == [
        " fbgemm_gpu-1.3.0-py3.12-rocm7.0 ", f" {wheel} ", " ok     ", " ok    ", " 3.0s ",
        " ok     "]
    assert "\x1b" not in out.getvalue()


def test_a_line_above_the_live_status_is_shown_as_written(terminal: pytest.MonkeyPatch) -> None:
    out = _Tty()
    rep = StreamReporter(out, io.StringIO())
    assert rep.mode == "live"
    rep.step_started(1, 1, "build-wheel")
    try:
        rep.info("[red]x[/red] 12345 :smile: " + "z" * 100)
    finally:
        rep.close()
    shown = out.getvalue()
    assert "[red]x[/red] 12345 :smile: " + "z" * 100 + "\n" in shown  # no markup, emoji, wrap
    assert "\x1b[31m" not in shown and "\x1b[1;36m12345" not in shown  # nor highlighting
    after = shown.split("z" * 100 + "\n", 1)[1]
    assert after.startswith("\x1b[")  # the line's own newline only, then the status again
