"""How the library tells the user something without printing: a ``Reporter``.

The library calls a reporter it is given; the CLI and the nox layer pass one that renders
(``toolkit.cli.console.StreamReporter``: a live status on a terminal, log groups in CI,
plain lines when piped). ``NullReporter`` drops everything, ``ListReporter`` keeps it
(tests, callers that want the messages).

A build step is reported as ``step_started`` (only for a step that really runs), then any
number of ``step_output`` (its command's lines that are not shown anyway) or ``output``
(lines the user asked to see), then one ``step`` with its end status; a failed step's
``reason`` is the first line of its error.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol


class Reporter(Protocol):
    def info(self, message: str) -> None:
        """A line of progress or information."""

    def warning(self, message: str) -> None:
        """Something the user should know that does not stop the work."""

    def output(self, line: str) -> None:
        """A line of a command's output the user asked to see (e.g. smoke results)."""

    def step_started(self, index: int, total: int, name: str) -> None:
        """A step of a build starts running (not called for a step that is skipped)."""

    def step_output(self, line: str) -> None:
        """A line of the running step's output that only the log keeps (a live status shows
        the last one, CI streams them)."""

    def step(self, index: int, total: int, name: str, status: str, seconds: float,
             reason: str | None = None) -> None:
        """A step of a build ended: ok, skipped or FAILED (then ``reason``: one line)."""


class NullReporter:
    def info(self, message: str) -> None:
        pass

    def warning(self, message: str) -> None:
        pass

    def output(self, line: str) -> None:
        pass

    def step_started(self, index: int, total: int, name: str) -> None:
        pass

    def step_output(self, line: str) -> None:
        pass

    def step(self, index: int, total: int, name: str, status: str, seconds: float,
             reason: str | None = None) -> None:
        pass


@dataclass
class ListReporter:
    """Keeps what it hears: messages, shown output and step ends in ``lines``; the steps
    started in ``started``, the lines only a log keeps in ``step_lines``."""

    lines: list[str] = field(default_factory=list)
    started: list[str] = field(default_factory=list)
    step_lines: list[str] = field(default_factory=list)

    def info(self, message: str) -> None:
        self.lines.append(message)

    def warning(self, message: str) -> None:
        self.lines.append(f"warning: {message}")

    def output(self, line: str) -> None:
        self.lines.append(line.rstrip("\n"))

    def step_started(self, index: int, total: int, name: str) -> None:
        self.started.append(f"[{index}/{total}] {name}")

    def step_output(self, line: str) -> None:
        self.step_lines.append(line.rstrip("\n"))

    def step(self, index: int, total: int, name: str, status: str, seconds: float,
             reason: str | None = None) -> None:
        self.lines.append(f"[{index}/{total}] {name} {status} {seconds:.1f}s")
