"""How the entry points' reporter decides its mode and words its lines, against GitHub's
documented conventions (docs.github.com "Variables": ``CI`` is ``true`` and
``GITHUB_ACTIONS`` is set on a runner; "Workflow commands": ``::warning::``, ``::error::``,
messages with ``%``, CR and LF written ``%25``, ``%0D``, ``%0A``), the ``TERM=dumb``
convention for terminals without cursor control, and RFC 3986 userinfo (never shown)."""

from __future__ import annotations

import io
import re
import time
from dataclasses import dataclass

import pytest

from toolkit.cli import console
from toolkit.cli.console import StreamReporter


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def no_ci(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.delenv("TERM", raising=False)
    return monkeypatch


@pytest.mark.parametrize(("value", "ci"), [
    ("true", True), ("TRUE", True), ("1", True), ("yes", True), ("Yes", True),
    ("false", False), ("0", False), ("", False), ("no", False),
])
def test_ci_is_the_ci_variable_said_true(no_ci: pytest.MonkeyPatch, value: str, ci: bool) -> None:
    no_ci.setenv("CI", value)
    assert console.in_ci() is ci
    assert console.progress_mode(io.StringIO()) == ("ci" if ci else "plain")


def test_github_actions_is_ci_whatever_its_value(no_ci: pytest.MonkeyPatch) -> None:
    no_ci.setenv("GITHUB_ACTIONS", "")
    assert console.in_ci() is True
    assert console.progress_mode(_Tty()) == "ci"


def test_live_only_on_a_terminal_that_can_take_it(no_ci: pytest.MonkeyPatch) -> None:
    assert console.is_rich(_Tty()) is True and console.progress_mode(_Tty()) == "live"
    assert console.is_rich(io.StringIO()) is False
    no_ci.setenv("TERM", "dumb")
    assert console.is_rich(_Tty()) is False and console.progress_mode(_Tty()) == "plain"
    no_ci.setenv("TERM", "xterm")
    no_ci.setenv("CI", "true")
    assert console.is_rich(_Tty()) is False


@pytest.mark.parametrize(("value", "seconds"), [
    (None, 60.0), ("5", 5.0), ("0.5", 0.5), ("0", 0.0), ("-3", 0.0), ("soon", 60.0),
])
def test_heartbeat_seconds(no_ci: pytest.MonkeyPatch, value: str | None, seconds: float) -> None:
    if value is None:
        no_ci.delenv("TOOLKIT_HEARTBEAT", raising=False)
    else:
        no_ci.setenv("TOOLKIT_HEARTBEAT", value)
    assert console._heartbeat() == seconds


def test_github_escaping_of_a_message() -> None:
    assert console.github_escape("100%\r\nnext") == "100%25%0D%0Anext"
    assert console.github_escape("a\x1b[2Jb") == "a\\x1b[2Jb"


def test_lines_outside_actions_hide_credentials_and_control_bytes(no_ci: pytest.MonkeyPatch) -> None:
    out, err = io.StringIO(), io.StringIO()
    rep = StreamReporter(out, err)
    rep.info("index https://alice:s3cret@idx.example/simple \x1b[31m")
    rep.warning("slow https://bob:pw@h.example/x")
    rep.output("compiled \x07 https://u:p@h/y\n")
    assert "s3cret" not in out.getvalue() and "alice" not in out.getvalue()
    assert "\x1b" not in out.getvalue() and "\x07" not in out.getvalue()
    assert out.getvalue().startswith("index https://***@idx.example/simple ")
    assert out.getvalue().splitlines()[1].startswith("    compiled ")
    assert err.getvalue() == "warning: slow https://***@h.example/x\n"


def test_a_warning_in_actions_outside_a_step_is_an_annotation_on_stderr(no_ci: pytest.MonkeyPatch) -> None:
    no_ci.setenv("GITHUB_ACTIONS", "true")
    out, err = io.StringIO(), io.StringIO()
    StreamReporter(out, err).warning("https://u:p@h/x 5%\nmore")
    assert out.getvalue() == ""
    assert err.getvalue() == "::warning::https://***@h/x 5%25%0Amore\n"


def test_a_failed_ci_step_names_itself_in_its_error(no_ci: pytest.MonkeyPatch) -> None:
    no_ci.setenv("CI", "true")
    out = io.StringIO()
    rep = StreamReporter(out, out)
    rep.step(3, 9, "build-wheel", "FAILED", 2.0)
    rep.step(4, 9, "check", "FAILED", 1.0, "a reason without the name\nline two")
    rep.step(5, 9, "smoke", "ok", 1.0, "never shown")
    lines = out.getvalue().splitlines()
    assert lines[1] == "::error::step 'build-wheel': failed"
    assert lines[3] == "::error::step 'check': a reason without the name%0Aline two"
    assert len(lines) == 5 and "never shown" not in out.getvalue()


def test_ci_output_outside_a_step_stops_no_commands(no_ci: pytest.MonkeyPatch) -> None:
    no_ci.setenv("CI", "true")
    out = io.StringIO()
    rep = StreamReporter(out, out)
    rep.output("plain\n")
    rep.step_output("also plain\n")
    assert out.getvalue() == "    plain\n    also plain\n"


def test_a_piped_long_step_says_it_is_still_running(no_ci: pytest.MonkeyPatch) -> None:
    no_ci.setenv("TOOLKIT_HEARTBEAT", "0.01")
    out = io.StringIO()
    rep = StreamReporter(out, out)
    rep.step_started(1, 1, "build-wheel")
    for _ in range(200):
        if "still running" in out.getvalue():
            break
        time.sleep(0.01)
    rep.step(1, 1, "build-wheel", "ok", 0.1)
    first = out.getvalue().splitlines()[0]
    assert re.fullmatch(r"still running: build-wheel \(\d+s\)", first)
    written = out.getvalue()
    time.sleep(0.05)
    assert out.getvalue() == written  # the heartbeat stopped with the step


def test_the_live_status_shows_the_step_its_time_and_last_line() -> None:
    status = console._Status(2, 5, "build-wheel")
    status.start -= 65
    status.last = "compiling a.cpp"
    text = status.__rich__().plain
    assert text == "[2/5] build-wheel  running 1m05s  compiling a.cpp"
    status.last = ""
    assert status.__rich__().plain == "[2/5] build-wheel  running 1m05s"


def test_a_live_step_keeps_the_last_non_blank_output_line(no_ci: pytest.MonkeyPatch) -> None:
    rep = StreamReporter(_Tty(), io.StringIO())
    assert rep.mode == "live"
    rep.step_started(1, 1, "build")
    try:
        rep.step_output("first\tline https://u:p@h/x\r\n")
        assert rep._status is not None and rep._status.last == "first line https://***@h/x"
        rep.step_output("   \n")
        assert rep._status.last == "first line https://***@h/x"
    finally:
        rep.close()
    assert rep._live is None and rep._status is None


@dataclass
class _Outcome:
    build_id: str
    wheel: str = "w.whl"
    checks: str = "ok"
    smoke: str = "ok"
    seconds: float = 1.25
    error: str | None = None


def test_the_session_table_words_each_result(no_ci: pytest.MonkeyPatch) -> None:
    out = io.StringIO()
    console.summary([_Outcome("ok-1"), _Outcome("bad-1", error="x"), _Outcome("kf-1", error="x"),
                     _Outcome("kf-2"), _Outcome("kf-3"), _Outcome("oth-1", error="x")], out,
                    {"kf-1": "xfail", "kf-2": "xpass", "kf-3": "not reached", "oth-1": "failed"})
    rows = {line.split()[1]: line for line in out.getvalue().splitlines() if "│" in line and "-" in line}
    assert "1.2s" in rows["ok-1"] and rows["ok-1"].rstrip(" │").endswith("ok")
    assert "FAILED" in rows["bad-1"] and "FAILED" in rows["oth-1"]
    assert "xfail (known failure)" in rows["kf-1"]
    assert "XPASS: remove the known failure" in rows["kf-2"]
    assert "ok (known failure not reached)" in rows["kf-3"]


def test_a_fresh_status_shows_no_output_and_minutes_past_the_hour() -> None:
    status = console._Status(1, 3, "sources")
    assert status.__rich__().plain.startswith("[1/3] sources  running 0m0")
    assert status.__rich__().plain.endswith("s")  # nothing after the time yet
    status.start -= 3661
    assert status.__rich__().plain == "[1/3] sources  running 61m01s"


def test_the_live_status_is_one_cut_line_in_its_styles() -> None:
    from rich.console import Console

    status = console._Status(2, 5, "build-wheel")
    status.last = "compiling a very long file name that does not fit"
    narrow = Console(file=io.StringIO(), width=30)
    lines = narrow.render_lines(status, narrow.options)  # as a live display lays it out
    assert ["".join(seg.text for seg in line) for line in lines] == ["[2/5] build-wheel  running 0m…"]
    wide = Console(file=io.StringIO(), width=200, force_terminal=True, color_system="standard")
    wide.print(status)
    ansi = wide.file.getvalue()  # type: ignore[attr-defined]
    # ECMA-48 SGR: 1 bold, 36 cyan for the step and its time; 2 faint for its last line
    assert re.search(r"\x1b\[1;36m\[2/5\] build-wheel  running", ansi)
    assert re.search(r"\x1b\[2m  compiling", ansi)


def test_a_warning_in_a_group_before_any_output_needs_no_resuming(no_ci: pytest.MonkeyPatch) -> None:
    no_ci.setenv("CI", "true")
    no_ci.setenv("GITHUB_ACTIONS", "true")
    out = io.StringIO()
    rep = StreamReporter(out, out)
    rep.step_started(1, 1, "install-torch")
    rep.warning("slow")
    assert out.getvalue().splitlines()[1:] == ["::warning::slow"]


def test_the_live_status_keeps_a_line_ending_in_x(no_ci: pytest.MonkeyPatch) -> None:
    rep = StreamReporter(_Tty(), io.StringIO())
    rep.step_started(1, 1, "build")
    try:
        rep.step_output("linked libX\r\n")
        assert rep._status is not None and rep._status.last == "linked libX"
    finally:
        rep.close()
