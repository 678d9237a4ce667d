"""A fault the OS reports (an ``OSError`` no step turned into a toolkit error) is one line
naming the path and the cause, with the exit code the README gives: "A disk fault while
building or publishing ... is one line naming the path and the cause: exit 5 for a build",
and 2 (bad input) for the other commands; nox sessions abort with the session's fault code.

The errors are real: each comes from an OS call that fails (a folder under a file, a file
that is not there), and the expected cause is what ``os.strerror`` and ``errno.errorcode``
say for the errno, not what the toolkit prints elsewhere."""

from __future__ import annotations

import argparse
import errno
import importlib
import os
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.nox_runs import aborted, in_nox
from toolkit.cli import sessions

ROOT = Path(__file__).resolve().parents[2]
cli_main = importlib.import_module("toolkit.cli.main")  # the package exports main()


def _enotdir(tmp_path: Path) -> OSError:
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    try:
        os.mkdir(a_file / "sub")
    except OSError as err:
        return err
    raise AssertionError("mkdir under a file succeeded")


def _enoent(tmp_path: Path) -> OSError:
    try:
        (tmp_path / "gone" / "x.whl").read_bytes()
    except OSError as err:
        return err
    raise AssertionError("read of a missing file succeeded")


def _raiser(err: OSError) -> Any:
    def func(_: argparse.Namespace) -> int:
        raise err
    return func


def _cause(code: int) -> str:
    return f"{os.strerror(code)} ({errno.errorcode[code]})"


@pytest.mark.parametrize("command", ["demo", "provision", "repro"])  # README: the commands that build
def test_an_os_fault_in_a_build_is_exit_5_in_one_line(command: str, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    err = _enotdir(tmp_path)
    code = cli_main._run(argparse.Namespace(command=command, func=_raiser(err)))
    captured = capsys.readouterr()
    assert code == 5
    lines = captured.err.splitlines()
    assert lines == [f"error: {tmp_path / 'a-file' / 'sub'}: {_cause(errno.ENOTDIR)}"], lines
    assert "Traceback" not in captured.err + captured.out


@pytest.mark.parametrize("command", ["check", "report", "matrix"])
def test_an_os_fault_elsewhere_is_bad_input_exit_2(command: str, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    err = _enoent(tmp_path)
    code = cli_main._run(argparse.Namespace(command=command, func=_raiser(err)))
    lines = capsys.readouterr().err.splitlines()
    assert code == 2
    assert len(lines) == 1 and lines[0].startswith("error: "), lines
    assert str(tmp_path / "gone" / "x.whl") in lines[0] and _cause(errno.ENOENT) in lines[0], lines


def test_an_os_fault_in_a_nox_session_aborts_it_with_exit_5(tmp_path: Path) -> None:
    err = _enotdir(tmp_path)

    def body() -> None:
        raise err

    message, code = aborted(in_nox(lambda s: sessions._guard(s, body), folder=ROOT))
    assert code == 5
    assert message == f"{tmp_path / 'a-file' / 'sub'}: {_cause(errno.ENOTDIR)}", message


def test_a_path_with_control_bytes_is_escaped_in_the_line(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    hostile = tmp_path / "evil\x1b[31m"
    try:
        (hostile / "x").read_bytes()
    except OSError as caught:
        err = caught
    code = cli_main._run(argparse.Namespace(command="demo", func=_raiser(err)))
    out = capsys.readouterr().err
    assert code == 5
    assert "\x1b" not in out and "\\x1b[31m" in out, repr(out)
    assert len(out.splitlines()) == 1


def test_an_interrupt_is_exit_130(capsys: pytest.CaptureFixture[str]) -> None:
    """README "Exit codes": 130 interrupted (Ctrl-C, SIGTERM): a KeyboardInterrupt out of any
    command (what Python raises for SIGINT) is exit 130 and one line, no traceback."""
    def func(_: argparse.Namespace) -> int:
        raise KeyboardInterrupt

    for command in ("demo", "check"):
        assert cli_main._run(argparse.Namespace(command=command, func=func)) == 130
    err = capsys.readouterr().err
    assert err.splitlines() == ["interrupted", "interrupted"], err
