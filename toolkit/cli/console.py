"""Output: rich on a terminal, plain lines (and GitHub annotations) in CI or when piped."""

from __future__ import annotations

import atexit
import os
import secrets
import sys
import threading
import time
from typing import TYPE_CHECKING, Any, TextIO

from toolkit.core.text import clean
from toolkit.core.urls import mask

if TYPE_CHECKING:
    from rich.console import Console


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in {"1", "true", "yes"} or "GITHUB_ACTIONS" in os.environ


def is_rich(stream: TextIO | None = None) -> bool:
    stream = stream or sys.stdout
    return stream.isatty() and not in_ci() and os.environ.get("TERM") != "dumb"


def console(stream: TextIO | None = None) -> Console:
    """A rich Console: colour on a terminal, plain text (no wrapping) when piped or in CI.

    Every piece of text it renders has its control characters escaped (``clean``): a name
    from outside in a table cell or a line cannot move the cursor or clear the screen; the
    console's own styling is added after that."""
    from rich.console import Console
    from rich.segment import Segment

    class SafeConsole(Console):
        def _render_buffer(self, buffer: Any) -> str:
            safe = [s if s.control else Segment(clean(s.text), s.style, s.control)
                    for s in buffer]
            return str(super()._render_buffer(safe))

    stream = stream or sys.stdout
    if is_rich(stream):
        return SafeConsole(file=stream)
    return SafeConsole(file=stream, color_system=None, force_terminal=False, width=200,
                       soft_wrap=True)


HEARTBEAT_ENV = "TOOLKIT_HEARTBEAT"  # seconds between "still running" lines when piped
HEARTBEAT_S = 60.0


def github_escape(text: str) -> str:
    """``text`` as the message of a GitHub workflow command (``::error::...``): ``%``, CR and
    LF written as ``%25``, ``%0D``, ``%0A`` (GitHub's own escaping), other controls escaped."""
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return clean(text)


def progress_mode(stream: TextIO) -> str:
    """How steps are shown: "live" (a terminal: a live status line, rich), "ci" (``CI=true``
    or GitHub Actions: each step's output inside ``::group::``/``::endgroup::``, ``::error::``
    on failure) or "plain" (piped: one line per step, a heartbeat for long steps)."""
    if in_ci():
        return "ci"
    return "live" if is_rich(stream) else "plain"


def _heartbeat() -> float:
    try:
        return max(0.0, float(os.environ.get(HEARTBEAT_ENV, HEARTBEAT_S)))
    except ValueError:
        return HEARTBEAT_S


class _Status:
    """The live status of the running step: its name, the time since it started, the last
    line of its output (escaped, cut to the width); rendered anew at every refresh."""

    def __init__(self, index: int, total: int, name: str) -> None:
        self.label = f"[{index}/{total}] {name}"
        self.start = time.monotonic()
        self.last = ""

    def __rich__(self) -> Any:
        from rich.text import Text

        secs = int(time.monotonic() - self.start)
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append(f"{self.label}  running {secs // 60}m{secs % 60:02d}s", style="bold cyan")
        if self.last:
            text.append("  " + self.last, style="dim")
        return text


class StreamReporter:
    """The ``Reporter`` of the entry points: lines on ``stream``; in GitHub Actions warnings
    become ``::warning::`` annotations. Build steps are shown as ``progress_mode`` says."""

    def __init__(self, stream: TextIO | None = None, err: TextIO | None = None) -> None:
        self.stream = stream or sys.stdout
        self.err = err or sys.stderr
        self.mode = progress_mode(self.stream)
        self._lock = threading.Lock()
        self._live: Any = None  # rich.live.Live while a step runs on a terminal
        self._status: _Status | None = None
        self._beat: tuple[threading.Event, threading.Thread] | None = None  # a piped step's heartbeat
        self._token: str | None = None  # ::stop-commands:: token while a CI group is open
        self._stopped = False  # workflow commands stopped (the group's step printed)
        self._closing = False

    # -- writing (one writer at a time; above the live status when there is one)
    def _write(self, text: str, *, err: bool = False) -> None:
        with self._lock:
            if self._live is not None:
                self._live.console.print(text, end="", markup=False, highlight=False,
                                         emoji=False, soft_wrap=True)
                return
            out = self.err if err else self.stream
            out.write(text)
            out.flush()

    def info(self, message: str) -> None:
        self._write(clean(mask(message)) + "\n")

    def warning(self, message: str) -> None:
        if "GITHUB_ACTIONS" not in os.environ:
            self._write("warning: " + clean(mask(message)) + "\n", err=True)
            return
        line = "::warning::" + github_escape(mask(message)) + "\n"
        if self._token and self._stopped:  # inside a step's group: let this one through
            line = f"::{self._token}::\n{line}::stop-commands::{self._token}\n"
        self._write(line, err=self._token is None)

    def output(self, line: str) -> None:
        self._stop_commands()
        self._write("    " + clean(mask(line)))

    def _stop_commands(self) -> None:
        """In a CI group, before the step's first line: GitHub runs no workflow command a
        build prints (``::error::``, ``::add-mask::``...) until the step ends."""
        if self._token is not None and not self._stopped:
            self._stopped = True
            self._write(f"::stop-commands::{self._token}\n")

    # -- steps
    def step_started(self, index: int, total: int, name: str) -> None:
        self._end_step()
        if self.mode == "ci":
            # build output must not run workflow commands: stop them until the step ends
            self._token = secrets.token_hex(16)
            self._write(f"::group::[{index}/{total}] {name}\n")
        elif self.mode == "live":
            from rich.live import Live

            self._status = _Status(index, total, name)
            live = Live(self._status, console=console(self.stream), refresh_per_second=4,
                        transient=True, redirect_stdout=False, redirect_stderr=False)
            if not self._closing:
                atexit.register(self.close)  # a live status never outlives the process
                self._closing = True
            live.start()
            self._live = live
        else:
            every = _heartbeat()
            if every:
                stop = threading.Event()
                beat = threading.Thread(target=self._beating, args=(name, every, stop),
                                        daemon=True, name="toolkit heartbeat")
                self._beat = (stop, beat)
                beat.start()

    def _beating(self, name: str, every: float, stop: threading.Event) -> None:
        start = time.monotonic()
        while not stop.wait(every):
            self._write(f"still running: {name} ({time.monotonic() - start:.0f}s)\n")

    def step_output(self, line: str) -> None:
        if self.mode == "ci":
            self.output(line)
        elif self._status is not None:
            shown = clean(mask(line.rstrip("\r\n")).replace("\t", " ")).strip()
            if shown:
                self._status.last = shown

    def _end_step(self) -> None:
        """Remove the live status, stop the heartbeat, close the CI group (if any)."""
        if self._live is not None:
            live, self._live, self._status = self._live, None, None
            live.stop()
        if self._beat is not None:  # a beat under way ends before the step's line
            (stop, beat), self._beat = self._beat, None
            stop.set()
            beat.join()
        if self._token is not None:
            token, self._token = self._token, None
            if self._stopped:
                self._write(f"::{token}::\n")
            self._stopped = False
            self._write("::endgroup::\n")

    def step(self, index: int, total: int, name: str, status: str, seconds: float,
             reason: str | None = None) -> None:
        self._end_step()
        self._write(f"[{index}/{total}] {name:<22} {status:<8} {seconds:7.1f}s\n")
        if self.mode == "ci" and status == "FAILED":
            said = reason or "failed"
            said = said if name in said else f"step '{name}': {said}"
            self._write(f"::error::{github_escape(mask(said))}\n")

    def close(self) -> None:
        """End what a step left running (an interrupted build's live status)."""
        self._end_step()


_VERDICTS = {"xfail": "xfail (known failure)", "xpass": "XPASS: remove the known failure",
             "not reached": "ok (known failure not reached)"}


def summary(outcomes: list[Any], stream: TextIO | None = None,
            verdicts: dict[str, str] | None = None) -> None:
    """The final table of a session: build, wheel, checks, smoke, time, result (a known
    failure's verdict, ``toolkit.cli.known``, when it has one)."""
    from rich.table import Table

    table = Table(title="Builds")
    for col in ("Build", "Wheel", "Checks", "Smoke", "Time", "Result"):
        table.add_column(col)
    for o in outcomes:
        result = _VERDICTS.get((verdicts or {}).get(o.build_id, ""))
        table.add_row(o.build_id, o.wheel, o.checks, o.smoke, f"{o.seconds:.1f}s",
                      result or ("ok" if o.error is None else "FAILED"))
    console(stream).print(table)
