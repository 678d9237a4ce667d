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
import queue
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from toolkit.core.errors import CommandFailed
from toolkit.core.urls import mask

DEFAULT_TIMEOUT_S = 600.0
TAIL_LINES = 40
KILL_GRACE_S = 10.0  # SIGTERM, then SIGKILL after this long


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


def _merged(out: str, err: str) -> str:
    """stdout then stderr, stderr starting on a line of its own (a progress line without a
    newline must not swallow the error's first line)."""
    return out + "\n" + err if out and err and not out.endswith("\n") else out + err


def run(argv: Sequence[str], *, cwd: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None, timeout: float = DEFAULT_TIMEOUT_S,
        check: bool = True, input: str | None = None) -> Result:
    """Run ``argv`` with its output captured (text, undecodable bytes replaced).

    The child runs in a process group of its own; past ``timeout`` (or on an interrupt) that
    whole group is stopped (SIGTERM, then SIGKILL), so a grandchild holding the pipe cannot
    keep the run waiting. Every such command has a limit (a positive number of seconds): a
    command without one is a bug at the call, refused there, as is a ``check`` that is no bool."""
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
        raise TypeError(f"run needs a time limit in seconds above 0, got {timeout!r}")
    if not isinstance(check, bool):
        raise TypeError(f"run's check is True or False, got {check!r}")
    args = [str(a) for a in argv]
    start = time.monotonic()
    proc = _start(args, cwd, env, stdin=subprocess.PIPE if input is not None else None,
                  stderr=subprocess.PIPE)
    try:
        out, err = proc.communicate(input, timeout=timeout)
    except subprocess.TimeoutExpired:
        _stop(proc)
        out, err = _leftover(proc)
        raise CommandFailed(args, None, _tail(_merged(out, err)), limit=timeout) from None
    except BaseException:
        _stop(proc)
        raise
    result = Result(tuple(args), proc.returncode, out, err, time.monotonic() - start)
    if check and proc.returncode != 0:
        raise CommandFailed(args, proc.returncode, _tail(_merged(out, err)))
    return result


def _start(args: list[str], cwd: str | os.PathLike[str] | Path | None,
           env: Mapping[str, str] | None, *, stdin: int | None,
           stderr: int) -> subprocess.Popen[str]:
    try:
        return subprocess.Popen(args, cwd=cwd, env=dict(env) if env is not None else None,
                                stdin=stdin, stdout=subprocess.PIPE, stderr=stderr, text=True,
                                # compilers and pip write UTF-8 whatever this locale says
                                encoding="utf-8", errors="replace", start_new_session=True)
    except FileNotFoundError:
        raise CommandFailed(args, None, reason="command not found") from None
    except OSError as exc:
        raise CommandFailed(args, None, reason=f"cannot run ({exc.strerror or exc})") from None


def _leftover(proc: subprocess.Popen[str]) -> tuple[str, str]:
    """What a stopped child had written (nothing more once the pipe stays open too long)."""
    try:
        out, err = proc.communicate(timeout=KILL_GRACE_S)
    except (subprocess.TimeoutExpired, ValueError, OSError):
        return "", ""
    return out or "", err or ""


def _signal_group(proc: subprocess.Popen[str], sig: signal.Signals) -> None:
    """Signal the process group ``proc`` leads (gone already: nothing to do)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, sig)


def _stop(proc: subprocess.Popen[str]) -> None:
    """Stop the whole group ``proc`` leads: SIGTERM, then SIGKILL after ``KILL_GRACE_S``."""
    _signal_group(proc, signal.SIGTERM)
    try:
        proc.wait(timeout=KILL_GRACE_S)
    except subprocess.TimeoutExpired:
        pass
    _signal_group(proc, signal.SIGKILL)  # also what outlived the leader
    proc.wait()


_EOF = None


def _reader(pipe: TextIO, lines: queue.Queue[str | None]) -> None:
    """Hand each line of ``pipe`` to ``lines``; ``_EOF`` at the end (a thread of ``stream``)."""
    try:
        for line in pipe:
            lines.put(line)
    except (OSError, ValueError):  # closed under us: the run is over
        pass
    finally:
        lines.put(_EOF)


def _remaining(deadline: float | None) -> float | None:
    return None if deadline is None else max(0.0, deadline - time.monotonic())


def stream(argv: Sequence[str], *, on_line: Callable[[str], None],
           cwd: str | os.PathLike[str] | Path | None = None,
           env: Mapping[str, str] | None = None,
           timeout: float | None = None) -> int:
    """Run ``argv`` with stdout and stderr merged, handing each (masked) line to ``on_line``.

    Raises ``CommandFailed`` (with the output tail) when it cannot start, exceeds ``timeout``
    (``timed_out``: whether or not it prints, and also when it never stops printing) or exits
    non-zero; returns 0 otherwise. A thread reads the pipe, so the deadline is kept while the
    child is silent. The child runs in a process group of its own; an interrupt (Ctrl-C, or
    SIGTERM turned into one) or the timeout stops that whole group (the child and everything
    it started: build backends, compilers; SIGTERM, then SIGKILL) before propagating, so
    nothing keeps writing into a build folder after the run ended.
    """
    args = [str(a) for a in argv]
    tail: collections.deque[str] = collections.deque(maxlen=TAIL_LINES)
    proc = _start(args, cwd, env, stdin=None, stderr=subprocess.STDOUT)
    deadline = None if timeout is None else time.monotonic() + timeout
    assert proc.stdout is not None
    lines: queue.Queue[str | None] = queue.Queue(maxsize=10_000)
    threading.Thread(target=_reader, args=(proc.stdout, lines), daemon=True,
                     name=f"stream {args[0]}").start()
    code: int | None = None
    try:
        while True:
            try:
                line = lines.get(timeout=_remaining(deadline))
            except queue.Empty:
                break  # silent past the deadline
            if line is _EOF:
                code = proc.wait(timeout=_remaining(deadline))
                break
            line = mask(line)
            tail.append(line.rstrip("\n"))
            on_line(line)
            if deadline is not None and time.monotonic() > deadline:
                break  # printing past the deadline
    except subprocess.TimeoutExpired:
        pass  # closed its output but went on running past the deadline
    except BaseException:
        # the whole group: a build's backend and compilers must not outlive an interrupt
        _stop(proc)
        raise
    if code is None:
        _stop(proc)
        raise CommandFailed(args, None, list(tail), limit=timeout)
    if code != 0:
        raise CommandFailed(args, code, list(tail))
    return 0
