"""Every error type the toolkit raises on purpose, and its exit code: one root exception,
each subclass carrying its own code, and ``EXIT_CODES``, what each code means, said once here
(every ``--help``'s "exit codes:" line is made from it; README's "Exit codes" table and the
classes' codes are tested against it: tests/unit/test_exit_code_table.py,
tests/unit/test_exit_codes.py).

Entry points (CLI, nox sessions, invoke tasks) catch ``ToolkitError`` once and print
``str(err)`` -- one line naming what was wrong and what is valid -- with no traceback.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType

from toolkit.core.masking import mask

# what each exit code means, in a few words (README's "## Exit codes" row of each code begins
# with them); every error class's ``exit_code`` is one of these, every code but 0 and 130 is
# some class's
EXIT_CODES: Mapping[int, str] = MappingProxyType({
    0: "ok",
    1: "a check, smoke test or reproduction failed",
    2: "bad input",
    3: "malformed data file",
    4: "environment problem",
    5: "a build step (or a command it runs) failed",
    6: "busy (a lock is held)",
    7: "a known failure was left out",
    8: "source unreachable",
    9: "timed out",
    10: "awaits upstream",
    11: "build requirements unavailable",
    12: "dirty source",
    130: "interrupted",
})
# codes no error class carries: success, and what an interrupted command exits with
NOT_ERRORS = frozenset({0, 130})


class ToolkitError(Exception):
    """Root of every error the toolkit raises on purpose."""

    exit_code = 1

    def __init__(self, message: str, *, hint: str | None = None,
                 nearest: str | None = None) -> None:
        if not isinstance(message, str) or not message.strip():
            # what the user reads is this line: an error without one is a bug where it is raised
            raise TypeError(f"{type(self).__name__} needs a message, got {message!r}")
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.nearest = nearest  # "did you mean a or b?" (``suggestion``): a value mistyped

    def __str__(self) -> str:
        if self.hint:
            return f"{self.message} (next: {self.hint})"
        return self.message

    @property
    def line(self) -> str:
        """The one line the entry points (CLI, nox sessions, invoke) print: the message, the
        valid values nearest to a mistyped one (``suggestion``), then the hint."""
        text = f"{self.message}; {self.nearest}" if self.nearest else self.message
        return f"{text} (next: {self.hint})" if self.hint else text


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


class KpackError(UsageError):
    """A malformed kpack archive (``.kpack``) or ``.rocm_kpack_ref`` marker (exit 2; inside a
    checked wheel the check reports it as a finding, as it does a bad offload bundle)."""


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


def suggestion(value: object, valid: Iterable[str]) -> str | None:
    """``did you mean a or b?``: the values of ``valid`` nearest to a mistyped ``value``
    (difflib's ``get_close_matches`` with its own defaults: at most 3, similarity at least
    0.6), or None when none is near. Every "unknown X; valid: ..." error of an enumerated value
    carries it (``ToolkitError.nearest``: ``unknown``, gfx ids, data files' closed sets) and
    the entry points print it after the valid values (``ToolkitError.line``); argparse's
    choices and subcommands too (``cli.main.Parser``)."""
    from toolkit.core.text import escape

    close = [escape(c) for c in nearest(str(value), valid, n=3, cutoff=0.6)]
    if not close:
        return None
    return f"did you mean {' or '.join([', '.join(close[:-1]), close[-1]] if close[:-1] else close)}?"


def unknown(what: str, value: object, valid: Iterable[str]) -> UsageError:
    """The standard "unknown X 'v'; valid: a, b, c" error (printed with "; did you mean b?")."""
    from toolkit.core.text import escape, quoted

    valid = [str(v) for v in valid]
    shown = ", ".join(escape(v) for v in valid)
    return UsageError(f"unknown {what} {quoted(value)}; valid: {escape(shown, 2000)}",
                      nearest=suggestion(value, valid))


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
