"""How the library tells the user something without printing: a ``Reporter``.

The library calls a reporter it is given; the CLI and the nox layer pass one that renders
(rich on a terminal, plain lines in CI). ``NullReporter`` drops everything, ``ListReporter``
keeps it (tests, callers that want the messages).
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

    def step(self, index: int, total: int, name: str, status: str, seconds: float) -> None:
        """A step of a build started (status "running") or ended (ok, skipped, FAILED)."""


class NullReporter:
    def info(self, message: str) -> None:
        pass

    def warning(self, message: str) -> None:
        pass

    def output(self, line: str) -> None:
        pass

    def step(self, index: int, total: int, name: str, status: str, seconds: float) -> None:
        pass


@dataclass
class ListReporter:
    lines: list[str] = field(default_factory=list)

    def info(self, message: str) -> None:
        self.lines.append(message)

    def warning(self, message: str) -> None:
        self.lines.append(f"warning: {message}")

    def output(self, line: str) -> None:
        self.lines.append(line.rstrip("\n"))

    def step(self, index: int, total: int, name: str, status: str, seconds: float) -> None:
        self.lines.append(f"[{index}/{total}] {name} {status} {seconds:.1f}s")
