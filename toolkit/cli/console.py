"""Output: rich on a terminal, plain lines (and GitHub annotations) in CI or when piped."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from rich.console import Console


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in {"1", "true", "yes"} or "GITHUB_ACTIONS" in os.environ


def is_rich(stream: TextIO | None = None) -> bool:
    stream = stream or sys.stdout
    return stream.isatty() and not in_ci() and os.environ.get("TERM") != "dumb"


def console(stream: TextIO | None = None) -> Console:
    """A rich Console: colour on a terminal, plain text (no wrapping) when piped or in CI."""
    from rich.console import Console

    stream = stream or sys.stdout
    if is_rich(stream):
        return Console(file=stream)
    return Console(file=stream, color_system=None, force_terminal=False, width=200, soft_wrap=True)


class StreamReporter:
    """The ``Reporter`` of the entry points: lines on ``stream``; in GitHub Actions warnings
    become ``::warning::`` annotations."""

    def __init__(self, stream: TextIO | None = None, err: TextIO | None = None) -> None:
        self.stream = stream or sys.stdout
        self.err = err or sys.stderr

    def info(self, message: str) -> None:
        print(message, file=self.stream, flush=True)

    def warning(self, message: str) -> None:
        prefix = "::warning::" if "GITHUB_ACTIONS" in os.environ else "warning: "
        print(prefix + message, file=self.err, flush=True)

    def output(self, line: str) -> None:
        self.stream.write("    " + line)
        self.stream.flush()

    def step(self, index: int, total: int, name: str, status: str, seconds: float) -> None:
        print(f"[{index}/{total}] {name:<22} {status:<8} {seconds:7.1f}s", file=self.stream,
              flush=True)


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
