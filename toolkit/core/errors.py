"""Every error type the toolkit raises on purpose, and its exit code: one root exception,
each subclass carrying its own code (README's "Exit codes" table is tested against this
module: tests/unit/test_exit_codes.py).

Entry points (CLI, nox sessions, invoke tasks) catch ``ToolkitError`` once and print
``str(err)`` -- one line naming what was wrong and what is valid -- with no traceback.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from toolkit.core.masking import mask


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


class WheelZipError(UsageError):
    """A wheel's archive itself cannot be read (exit 2)."""


class MemberError(UsageError):
    """One member of a wheel cannot be read safely; the check reports it as a finding for
    that member (exit 2 when it escapes)."""


class ElfError(UsageError):
    """A file is not a well-formed ELF object (or not one we can read) (exit 2)."""


class OffloadError(ElfError):
    """A malformed offload bundle inside an ELF object (exit 2)."""


class DataError(ToolkitError):
    """A matrix data file is malformed (exit 3)."""

    exit_code = 3


class EnvironmentProblem(ToolkitError):
    """A tool, interpreter or install the build needs is missing or mismatched (exit 4)."""

    exit_code = 4


class StepFailed(ToolkitError):
    """A planned step ran and failed (exit 5)."""

    exit_code = 5


class CommandStepFailed(StepFailed):
    """A step's command ran and exited non-zero (exit 5): its exit code and output tail."""

    def __init__(self, message: str, returncode: int | None, tail: tuple[str, ...]) -> None:
        super().__init__(message)
        self.returncode = returncode
        self.tail = tail


class CommandFailed(ToolkitError):
    """A command could not start, timed out, or exited non-zero (exit 5).

    ``timed_out`` says it ran past its limit (``limit`` seconds) and was stopped: callers
    turn that into ``TimedOut`` (exit 9) naming what they ran."""

    exit_code = 5

    def __init__(self, argv: Sequence[str], returncode: int | None, tail: Sequence[str] = (),
                 *, reason: str | None = None, hint: str | None = None,
                 limit: float | None = None) -> None:
        self.argv = tuple(argv)
        self.returncode = returncode
        self.tail = tuple(tail)
        self.limit = limit
        self.reason = reason if limit is None else f"timed out after {limit:g} s"
        shown = mask(" ".join(self.argv))
        if self.reason:
            message = f"{self.reason}: {shown}"
        else:
            message = f"command failed ({status(returncode)}): {shown}"
        if self.tail:
            message += f"\n  last {len(self.tail)} lines of output:\n" + "\n".join(
                f"    {mask(t)}" for t in self.tail)
        super().__init__(message, hint=hint)

    @property
    def timed_out(self) -> bool:
        return self.limit is not None


def status(returncode: int | None) -> str:
    """How a child ended: ``exit 3``, or ``killed by signal 9 (SIGKILL)`` for the negative
    return code POSIX gives a child terminated by a signal (it has no exit status)."""
    if returncode is None or returncode >= 0:
        return f"exit {returncode}"
    import signal

    try:
        name = f" ({signal.Signals(-returncode).name})"
    except ValueError:
        name = ""
    return f"killed by signal {-returncode}{name}"


def nearest(value: str, valid: Iterable[str], n: int = 5, cutoff: float = 0.75) -> list[str]:
    """The ``n`` values of ``valid`` nearest to ``value``, nearest first (``difflib``'s
    similarity ratio, at least ``cutoff``): what an error names for a mistyped id. Ids
    share their shape (``-cpXY-rocmX.Y``), so the cutoff is above difflib's 0.6: another
    package's ids are not near."""
    import difflib

    return difflib.get_close_matches(value, list(valid), n=n, cutoff=cutoff)


def unknown(what: str, value: object, valid: Iterable[str]) -> UsageError:
    """The standard "unknown X 'v'; valid: a, b, c" error."""
    from toolkit.core.text import escape, quoted

    shown = ", ".join(escape(v) for v in valid)
    return UsageError(f"unknown {what} {quoted(value)}; valid: {escape(shown, 2000)}")


class Busy(ToolkitError):
    """Another run holds the lock of a build, an environment or a source mirror (exit 6)."""

    exit_code = 6


class KnownFailureRefused(ToolkitError):
    """The build is a known failure (toolkit/data/known_failures.toml) and was not asked for
    with ``--include-known-failures`` (exit 7)."""

    exit_code = 7


class SourceUnreachable(ToolkitError):
    """A package index or find-links location the build needs cannot be reached (exit 8):
    the network, a proxy, a dead or mistyped URL; not this machine's tools."""

    exit_code = 8


class TimedOut(ToolkitError):
    """A step, a command or a smoke test ran past its time limit and was stopped (exit 9)."""

    exit_code = 9


class AwaitsUpstream(ToolkitError):
    """The package version is recorded as waiting (``waiting`` in its data file, ``rocm = []``):
    no ROCm release of the matrix builds it yet, e.g. its torch has no ROCm build (exit 10)."""

    exit_code = 10


class BuildRequirementsUnavailable(ToolkitError):
    """A project's build requirements cannot be installed: the index its installer reads
    holds no distribution satisfying one of them (exit 11). An index that cannot be reached
    at all is ``SourceUnreachable`` (exit 8)."""

    exit_code = 11


class DirtySource(ToolkitError):
    """A source checkout has uncommitted changes (tracked modifications, or untracked files
    git does not ignore) and ``--allow-dirty`` was not given (exit 12): its wheel would carry
    the clean commit's name."""

    exit_code = 12


def describe_os_error(err: OSError) -> str:
    """An ``OSError`` as one line naming the path and the cause, e.g. ``dist/x.whl: No space
    left on device (ENOSPC)``."""
    from toolkit.core.text import escape

    cause = os_cause(err)
    paths = [escape(p) for p in (err.filename, err.filename2) if p is not None]
    return f"{' -> '.join(paths)}: {cause}" if paths else cause


def os_cause(err: OSError) -> str:
    """What went wrong, without the path, e.g. ``No space left on device (ENOSPC)``."""
    import errno as _errno

    cause = err.strerror or str(err) or type(err).__name__
    code = _errno.errorcode.get(err.errno or 0)
    return f"{cause} ({code})" if code else cause
