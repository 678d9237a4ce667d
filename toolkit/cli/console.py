"""Output: rich on a terminal, plain lines (and GitHub annotations) in CI or when piped."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, TextIO

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
