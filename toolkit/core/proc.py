"""The one subprocess runner: argv only (never a shell), a timeout, one error type.

Every command the toolkit runs goes through ``run`` (captured output) or ``stream``
(line by line, for build steps). A command that cannot start, times out or exits non-zero
raises ``CommandFailed`` carrying the argv, the exit code and the tail of its output, with
credentials in URLs masked; callers that expect a non-zero exit pass ``check=False``.
"""

from __future__ import annotations

import collections
import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from toolkit.core.errors import ToolkitError
from toolkit.core.urls import mask

DEFAULT_TIMEOUT_S = 600.0
TAIL_LINES = 40


class CommandFailed(ToolkitError):
    """A command could not start, timed out, or exited non-zero (exit 5)."""

    exit_code = 5

    def __init__(self, argv: Sequence[str], returncode: int | None, tail: Sequence[str] = (),
                 *, reason: str | None = None, hint: str | None = None) -> None:
        self.argv = tuple(argv)
        self.returncode = returncode
        self.tail = tuple(tail)
        self.reason = reason
        shown = mask(" ".join(self.argv))
        if reason:
            message = f"{reason}: {shown}"
        else:
            message = f"command failed (exit {returncode}): {shown}"
        if self.tail:
            message += f"\n  last {len(self.tail)} lines of output:\n" + "\n".join(
                f"    {mask(t)}" for t in self.tail)
        super().__init__(message, hint=hint)


@dataclass(frozen=True)
class Result:
    argv: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str
    seconds: float

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    def last_line(self) -> str:
        text = (self.stderr or self.stdout).strip().splitlines()
        return mask(text[-1]) if text else "no output"


def _tail(text: str, n: int = TAIL_LINES) -> list[str]:
    return text.rstrip("\n").splitlines()[-n:] if text else []


def run(argv: Sequence[str], *, cwd: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None, timeout: float | None = DEFAULT_TIMEOUT_S,
        check: bool = True, input: str | None = None) -> Result:
    """Run ``argv`` with its output captured (text, undecodable bytes replaced)."""
    args = [str(a) for a in argv]
    start = time.monotonic()
    try:
        proc = subprocess.run(args, cwd=cwd, env=dict(env) if env is not None else None,
                              capture_output=True, text=True, errors="replace",
                              timeout=timeout, input=input, check=False)
    except FileNotFoundError:
        raise CommandFailed(args, None, reason="command not found") from None
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout if isinstance(exc.stdout, str) else (exc.stdout or b"").decode(
            errors="replace")
        raise CommandFailed(args, None, _tail(out), reason=f"timed out after {timeout:g} s")\
            from None
    except OSError as exc:
        raise CommandFailed(args, None, reason=f"cannot run ({exc.strerror or exc})") from None
    result = Result(tuple(args), proc.returncode, proc.stdout, proc.stderr,
                    time.monotonic() - start)
    if check and proc.returncode != 0:
        raise CommandFailed(args, proc.returncode, _tail(proc.stdout + proc.stderr))
    return result


def _signal_group(proc: subprocess.Popen[str], sig: signal.Signals) -> None:
    """Signal the process group ``stream`` started ``proc`` in (gone already: nothing to do)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, sig)


def stream(argv: Sequence[str], *, on_line: Callable[[str], None],
           cwd: str | os.PathLike[str] | Path | None = None,
           env: Mapping[str, str] | None = None,
           timeout: float | None = None) -> int:
    """Run ``argv`` with stdout and stderr merged, handing each (masked) line to ``on_line``.

    Raises ``CommandFailed`` (with the output tail) when it cannot start, exceeds ``timeout``
    or exits non-zero; returns 0 otherwise. The child runs in a process group of its own; an
    interrupt (Ctrl-C, or SIGTERM turned into one) or the timeout stops that whole group (the
    child and everything it started: build backends, compilers) before propagating, so
    nothing keeps writing into a build folder after the run ended.
    """
    args = [str(a) for a in argv]
    tail: collections.deque[str] = collections.deque(maxlen=TAIL_LINES)
    try:
        proc = subprocess.Popen(args, cwd=cwd, env=dict(env) if env is not None else None,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                errors="replace", start_new_session=True)
    except FileNotFoundError:
        raise CommandFailed(args, None, reason="command not found") from None
    except OSError as exc:
        raise CommandFailed(args, None, reason=f"cannot run ({exc.strerror or exc})") from None
    deadline = None if timeout is None else time.monotonic() + timeout
    assert proc.stdout is not None
    try:
        for line in proc.stdout:
            line = mask(line)
            tail.append(line.rstrip("\n"))
            on_line(line)
            if deadline is not None and time.monotonic() > deadline:
                _signal_group(proc, signal.SIGKILL)
                proc.wait()
                raise CommandFailed(args, None, list(tail),
                                    reason=f"timed out after {timeout:g} s")
        code = proc.wait()
    except BaseException:
        # the whole group: a build's backend and compilers must not outlive an interrupt
        _signal_group(proc, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            _signal_group(proc, signal.SIGKILL)
            proc.wait()
        raise
    if code != 0:
        raise CommandFailed(args, code, list(tail))
    return 0
