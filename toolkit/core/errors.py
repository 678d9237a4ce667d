"""One root exception; each subclass carries its own exit code.

Entry points (CLI, nox sessions, invoke tasks) catch ``ToolkitError`` once and print
``str(err)`` -- one line naming what was wrong and what is valid -- with no traceback.
"""

from __future__ import annotations

from collections.abc import Iterable


class ToolkitError(Exception):
    """Root of every error the toolkit raises on purpose."""

    exit_code = 1

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        if self.hint:
            return f"{self.message} (next: {self.hint})"
        return self.message


class CheckFailed(ToolkitError):
    """A wheel check found problems (exit 1)."""

    exit_code = 1


class UsageError(ToolkitError):
    """Bad user input: unknown version, bad gfx id, corrupt wheel, insecure URL (exit 2)."""

    exit_code = 2


class DataError(ToolkitError):
    """A matrix data file is malformed (exit 3)."""

    exit_code = 3


class EnvironmentProblem(ToolkitError):
    """A tool, interpreter or install the build needs is missing or mismatched (exit 4)."""

    exit_code = 4


class StepFailed(ToolkitError):
    """A planned step ran and failed (exit 5)."""

    exit_code = 5


def unknown(what: str, value: object, valid: Iterable[str]) -> UsageError:
    """The standard "unknown X 'v'; valid: a, b, c" error."""
    shown = ", ".join(str(v) for v in valid)
    return UsageError(f"unknown {what} {value!r}; valid: {shown}")


class Busy(ToolkitError):
    """Another run holds the lock of a build, an environment or a source mirror (exit 6)."""

    exit_code = 6


class KnownFailureRefused(ToolkitError):
    """The build is a known failure (toolkit/data/known_failures.toml) and was not asked for
    with ``--include-known-failures`` (exit 7)."""

    exit_code = 7
