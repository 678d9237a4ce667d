"""What a nox session's failure says and which exit code it carries (README "## Exit codes":
2 bad input, 5 a build step failed, 7 a known failure left out, 130 interrupted; "its last
line is `nox > Session NAME aborted: error: WHAT (exit N)`"), and the one-line reasons of a
session's end, in English (plurals counted by hand). The errno names are the C library's
(``errno.ENOSPC`` ...)."""

from __future__ import annotations

import argparse
import errno
from dataclasses import dataclass

import pytest

from toolkit.cli import running, sessions
from toolkit.cli.running import Finished
from toolkit.core.errors import KnownFailureRefused, UsageError


def _raises(exc: BaseException):  # type: ignore[no-untyped-def]
    def body() -> None:
        raise exc

    return body


def test_a_body_that_ends_well_is_no_failure() -> None:
    assert sessions._failure(lambda: None, 5) is None
    assert sessions._failure(_raises(SystemExit(0)), 5) is None  # --help
    assert sessions._failure(_raises(SystemExit(None)), 5) is None


def test_a_toolkit_error_keeps_its_exit_code_and_hides_credentials() -> None:
    err = UsageError("no such index https://alice:pw@idx.example/simple \x1b[2J")
    message, code = sessions._failure(_raises(err), 5) or ("", 0)
    assert code == 2
    assert "pw" not in message and "alice" not in message and "\x1b" not in message
    assert "idx.example/simple" in message
    message, code = sessions._failure(_raises(KnownFailureRefused("b is not run")), 5) or ("", 0)
    assert (code, message.startswith("b is not run")) == (7, True)


def test_an_os_fault_is_one_line_with_the_fault_code() -> None:
    fault = OSError(errno.ENOSPC, "No space left on device", "dist/x.whl")
    assert sessions._failure(_raises(fault), 5) == ("dist/x.whl: No space left on device (ENOSPC)", 5)
    assert sessions._failure(_raises(fault), 2) == ("dist/x.whl: No space left on device (ENOSPC)", 2)


def test_a_refused_option_is_bad_input() -> None:
    parser = argparse.ArgumentParser(prog="nox -s x --", exit_on_error=False)
    parser.add_argument("--jobs", type=int)
    try:
        parser.parse_args(["--jobs", "many"])
    except argparse.ArgumentError as err:
        message, code = sessions._failure(_raises(err), 5) or ("", 0)
    assert code == 2 and "--jobs" in message and "many" in message
    message, code = sessions._failure(_raises(SystemExit(2)), 5) or ("", 0)
    assert code == 2 and "refused" in message
    assert sessions._failure(_raises(SystemExit("usage: ...")), 5) == \
        ("the options after -- were refused (the usage is above)", 2)


def test_a_finished_body_gives_its_reason_and_an_interrupt_stays_one() -> None:
    assert sessions._failure(_raises(Finished(1, "2 of 3 builds failed: a \x07")), 5) == \
        ("2 of 3 builds failed: a \\x07", 1)
    with pytest.raises(KeyboardInterrupt):
        sessions._failure(_raises(Finished(Finished.INTERRUPTED, "interrupted")), 5)
    with pytest.raises(KeyboardInterrupt):
        sessions._failure(_raises(KeyboardInterrupt()), 5)


@pytest.mark.parametrize(("count", "reason"), [
    (1, "1 known failure left out (--include-known-failures runs them)"),
    (2, "2 known failures left out (--include-known-failures runs them)"),
])
def test_the_reason_of_known_failures_left_out(count: int, reason: str) -> None:
    assert running.refused_reason(count) == reason


@dataclass
class _Outcome:
    build_id: str
    exit_code: int = 0
    failed_step: str | None = None


def test_the_reason_names_each_failed_build_and_its_step() -> None:
    outcomes = [_Outcome("a", 5, "build-wheel"), _Outcome("b"), _Outcome("c", 9), _Outcome("k", 5, "smoke")]
    assert running.failed_reason(outcomes, {"k"}, []) == "2 of 4 builds failed: a at build-wheel, c"
    assert running.failed_reason([_Outcome("a", 5, "smoke")], set(), []) == \
        "1 of 1 build failed: a at smoke"
    assert running.failed_reason([_Outcome("a"), _Outcome("k", 5)], {"k"}, ["a", "z"]) == \
        "known failure no longer fails: a, z"


def test_a_pair_narrowed_to_a_version_it_lacks_names_what_it_builds() -> None:
    from toolkit.plan.recipes import load_matrix

    matrix = load_matrix()
    apex = [b for b in matrix.builds if b.package.name == "apex"]
    # a pair and an apex version the matrix has, but not for that pair
    build, other = next((b, o) for b in apex for o in apex
                        if not any(x.version == o.version and (x.python, x.rocm.version)
                                   == (b.python, b.rocm.version) for x in apex))
    args = argparse.Namespace(package=["apex"], versions=[other.version])
    with pytest.raises(UsageError) as err:
        sessions.session_builds(matrix, build.python, build.rocm.version, args)
    message = err.value.message
    assert f"no build of version {other.version} for Python {build.python} / ROCm {build.rocm.version}" \
        in message
    assert build.id in message and other.id not in message
    args = argparse.Namespace(package=["apex"], versions=[build.version])
    narrowed = sessions.session_builds(matrix, build.python, build.rocm.version, args)
    assert build in narrowed
    assert {(b.package.name, b.version, b.python, b.rocm.version) for b in narrowed} == \
        {("apex", build.version, build.python, build.rocm.version)}
