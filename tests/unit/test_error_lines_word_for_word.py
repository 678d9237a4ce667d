"""The words of the toolkit's error lines (toolkit/core/errors.py): how a child's end is named
(POSIX: a negative return code is the signal that terminated it, ``signal.Signals`` names it),
the "did you mean" list, "unknown X; valid: ...", an ``OSError`` as one line (``errno``'s
names), and the line an entry point prints. Expectations are hand-written."""

from __future__ import annotations

import errno
import os
import signal
from pathlib import Path

import pytest

from toolkit.core.errors import (
    CommandFailed,
    ToolkitError,
    UsageError,
    describe_os_error,
    os_cause,
    status,
    suggestion,
    unknown,
)
from toolkit.core.proc import run


@pytest.mark.parametrize(("code", "said"), [
    (0, "exit 0"), (3, "exit 3"), (None, "exit None"), (-9, "killed by signal 9 (SIGKILL)"),
    (-15, "killed by signal 15 (SIGTERM)"), (-11, "killed by signal 11 (SIGSEGV)"), (-200, "killed by signal "
                                                                                           "200")])
def test_how_a_child_ended(code: int | None, said: str) -> None:
    assert status(code) == said


def test_a_real_child_killed_by_sigterm_is_named_so() -> None:
    res = run(["/bin/sh", "-c", "kill -TERM $$"], check=False)
    assert res.returncode == -signal.SIGTERM
    with pytest.raises(CommandFailed) as caught:
        run(["/bin/sh", "-c", "echo dying; kill -TERM $$"])
    assert str(caught.value) == ("command failed (killed by signal 15 (SIGTERM)): /bin/sh -c echo dying; "
                                 "kill -TERM $$"
                                 "\n  last 1 lines of output:\n    dying")


def test_a_command_error_names_its_reason_or_limit_masked_with_its_hint() -> None:
    err = CommandFailed(["pip", "--index-url", "https://u:pw@h/"], None, reason="command not found",
                        hint="install pip")
    assert err.message == "command not found: pip --index-url https://***@h/"
    assert str(err) == "command not found: pip --index-url https://***@h/ (next: install pip)"
    assert not err.timed_out and err.exit_code == 5
    late = CommandFailed(["sleep", "9"], None, ["a https://t@h/ b"], reason="ignored", limit=2.5)
    assert late.timed_out and late.reason == "timed out after 2.5 s"
    assert str(late) == "timed out after 2.5 s: sleep 9\n  last 1 lines of output:\n    a https://***@h/ b"
    assert late.argv == ("sleep", "9") and late.tail == ("a https://t@h/ b",) and late.returncode is None


@pytest.mark.parametrize(("value", "valid", "said"), [
    ("gfx94", ["gfx942"], "did you mean gfx942?"),
    ("apexx", ["apex", "apex2", "zzz"], "did you mean apex or apex2?"),
    ("abcd", ["abcd1234", "abcd12", "abcd1", "abcd123"], "did you mean abcd1, abcd12 or abcd123?"),
    ("zzzz", ["apex", "fbgemm"], None)])
def test_did_you_mean_names_at_most_three(value: str, valid: list[str], said: str | None) -> None:
    assert suggestion(value, valid) == said


def test_unknown_names_the_value_quoted_and_every_valid_one() -> None:
    err = unknown("ROCm version", "6.4\x1b", ["6.4", "7.0"])
    assert isinstance(err, UsageError) and err.exit_code == 2
    assert err.message == "unknown ROCm version '6.4\\x1b'; valid: 6.4, 7.0"
    assert err.nearest == "did you mean 6.4?"
    assert err.line == "unknown ROCm version '6.4\\x1b'; valid: 6.4, 7.0; did you mean 6.4?"


def test_the_printed_line_is_message_nearest_then_hint() -> None:
    assert ToolkitError("m", hint="h", nearest="did you mean x?").line == "m; did you mean x? (next: h)"
    assert ToolkitError("m", hint="h").line == "m (next: h)"
    assert ToolkitError("m").line == "m" == str(ToolkitError("m"))
    assert str(ToolkitError("m", nearest="n")) == "m"


def test_an_os_error_is_its_paths_and_its_cause(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("")
    with pytest.raises(OSError) as caught:
        os.rename(tmp_path / "f", tmp_path / "none" / "g")
    assert describe_os_error(caught.value) == (
        f"{tmp_path / 'f'} -> {tmp_path / 'none' / 'g'}: No such file or directory (ENOENT)")
    with pytest.raises(OSError) as caught:
        open(tmp_path / "f\x1b" / "x")
    assert describe_os_error(caught.value) == f"{tmp_path}/f\\x1b/x: No such file or directory (ENOENT)"
    assert describe_os_error(OSError(errno.ENOSPC, "No space left on device")) == ("No space left on device "
                                                                                   "(ENOSPC)")


def test_an_os_cause_without_a_known_errno_is_its_words() -> None:
    assert os_cause(OSError("plain words")) == "plain words"
    assert os_cause(OSError()) == "OSError"
    assert os_cause(OSError(99999, "odd")) == "odd"
    assert os_cause(PermissionError(errno.EACCES, "Permission denied")) == "Permission denied (EACCES)"
