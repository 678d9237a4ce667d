"""What a failed command's error says: a child killed by a signal, and which part of its
output is shown.

POSIX (and Python's ``subprocess`` docs): "A negative value -N indicates that the child was
terminated by signal N". Such a child has no exit status, so the error names the signal
(``SIGKILL``), not an "exit -9". A command that exits non-zero shows the *last* lines of its
output (the end of a build log is where the compiler's error is), with what it wrote to stderr
kept on lines of its own. The commands are real (``sh``), the expectations hand-computed."""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import pytest

from toolkit.core import proc
from toolkit.core.errors import CommandFailed

SH = "/bin/sh"


def _failure(argv: list[str], *, streamed: bool) -> CommandFailed:
    with pytest.raises(CommandFailed) as caught:
        if streamed:
            proc.stream(argv, on_line=lambda _: None, timeout=60)
        else:
            proc.run(argv, timeout=60)
    return caught.value


@pytest.mark.parametrize("streamed", [False, True], ids=["run", "stream"])
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM, signal.SIGSEGV],
                         ids=lambda s: s.name)
def test_a_child_killed_by_a_signal_is_named_by_its_signal(sig: signal.Signals, streamed: bool) -> None:
    err = _failure([SH, "-c", f"echo started; kill -{int(sig)} $$"], streamed=streamed)
    assert err.returncode == -int(sig)  # POSIX: terminated by signal N is -N
    first = str(err).splitlines()[0]
    assert f"signal {int(sig)} ({sig.name})" in first, first
    assert f"exit -{int(sig)}" not in str(err), str(err)
    assert "started" in str(err)  # what it printed before it died is still shown


@pytest.mark.parametrize("streamed", [False, True], ids=["run", "stream"])
def test_an_exit_status_is_named_as_one(streamed: bool) -> None:
    err = _failure([SH, "-c", "exit 3"], streamed=streamed)
    assert err.returncode == 3
    assert "exit 3" in str(err).splitlines()[0]
    assert "signal" not in str(err)


@pytest.mark.parametrize("streamed", [False, True], ids=["run", "stream"])
def test_the_error_shows_the_last_lines_of_the_output(streamed: bool) -> None:
    # 100 numbered lines, then exit 3: the last 40 (61..100) are shown, in order, none before
    err = _failure([sys.executable, "-c",
                    "import sys\nfor i in range(1, 101): print(f'line {i:03d}')\nsys.exit(3)"],
                   streamed=streamed)
    shown = [t.strip() for t in err.tail]
    assert shown == [f"line {i:03d}" for i in range(61, 101)], shown
    text = str(err)
    assert "line 060" not in text and "line 061" in text and "line 100" in text
    assert "last 40 lines of output" in text


def test_what_the_command_wrote_to_stderr_is_on_a_line_of_its_own() -> None:
    # stdout without a final newline, then the error on stderr: the error line must be shown
    # whole (not glued to stdout's last line). (``stream`` merges both into one pipe, 2>&1,
    # as a terminal shows them: there the child's own bytes decide.)
    streamed = False
    err = _failure([sys.executable, "-c",
                    "import sys\nsys.stdout.write('progress 99%'); sys.stdout.flush()\n"
                    "sys.stderr.write('fatal: no space left\\n'); sys.exit(1)"], streamed=streamed)
    shown = [t.strip() for t in err.tail]
    assert "fatal: no space left" in shown, shown


def test_a_command_that_cannot_start_names_why(tmp_path: Path) -> None:
    err = _failure([str(tmp_path / "no-such-tool")], streamed=False)
    assert err.returncode is None and "command not found" in str(err)
    not_exec = tmp_path / "plain"
    not_exec.write_text("#!/bin/sh\n")
    err = _failure([str(not_exec)], streamed=True)
    assert err.returncode is None and "cannot run (Permission denied)" in str(err), str(err)


@pytest.mark.parametrize("limit", [None, 0, -1.0, True, "60"])
def test_a_captured_command_without_a_positive_time_limit_is_refused_before_it_starts(
        tmp_path: Path, limit: object) -> None:
    """Every captured command has a limit: a hung child must end the run, not hold it. A call
    without one (None, zero, negative, a bool or a string) is refused before anything starts."""
    marker = tmp_path / "ran"
    with pytest.raises(TypeError, match="time limit"):
        proc.run([SH, "-c", f"touch {marker}"], timeout=limit)  # type: ignore[arg-type]
    assert not marker.exists()


@pytest.mark.parametrize("check", [None, 0, "yes"])
def test_check_is_a_bool_not_a_truthy_value(check: object) -> None:
    with pytest.raises(TypeError, match="check"):
        proc.run(["true"], timeout=60, check=check)  # type: ignore[arg-type]


def test_a_fractional_limit_is_a_limit(tmp_path: Path) -> None:
    """A fractional number of seconds is a valid limit (a float above 0)."""
    assert proc.run([SH, "-c", "exit 0"], timeout=30.5).returncode == 0
