"""A build session's options after ``--`` (README: "--package, --version, ... --junit FILE
(one test case per build; known failures in pytest's xfail terms)"; ``nox -s NAME -- --help``
lists them) and what a build session that runs hands to the runner: the pair's plans, the
work folder given, the JUnit file, and known failures judged. The runner itself is replaced
here (it builds: tests/integration/test_nox_failed_build.py runs it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.nox_runs import in_nox
from toolkit.cli import running, sessions
from toolkit.cli.main import COMMAND_HELP, exit_codes


def test_the_sessions_help_says_what_each_option_does() -> None:
    parser = sessions.session_parser("build-3.12-rocm7.0")
    text = " ".join(parser.format_help().split())  # argparse wraps at the terminal's width
    assert text.startswith("usage: nox -s build-3.12-rocm7.0 -- [-h] [--package PACKAGE] "
                           "[--version VERSIONS] [--dry-run] [--json] [--junit FILE] ")
    assert ("The session's options after --: those of python -m toolkit plan, with --package "
            "and --version to narrow the pair's builds; a failure ends the session with "
            "'error: WHAT (exit N)'.") in text
    for line in ("--package PACKAGE package name(s), comma list",
                 "--version VERSIONS package version(s), comma list (e.g. 1.8.0)",
                 "--dry-run print the plan, run nothing",
                 "--json with --dry-run: the plan as JSON",
                 "--junit FILE write one JUnit test case per build here (known failures: xfail)"):
        assert line in text, line
    assert parser.epilog == exit_codes(COMMAND_HELP["demo"][1])
    assert parser.epilog.startswith("exit codes: 0 ok, 1 ")


def test_package_and_version_add_up_and_nothing_given_is_empty() -> None:
    parser = sessions.session_parser("build-3.12-rocm7.0")
    args = parser.parse_args(["--version", "1.8.0", "--version", "1.9.0,1.10.0",
                              "--package", "apex", "--package", "fbgemm_gpu"])
    assert args.versions == ["1.8.0", "1.9.0,1.10.0"] and args.package == ["apex", "fbgemm_gpu"]
    bare = parser.parse_args([])
    assert (bare.versions, bare.package, bare.dry_run, bare.json, bare.junit) == ([], [], False,
                                                                                 False, None)


def test_a_running_session_hands_its_plans_folder_and_junit_to_the_runner(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[list[Any], Any, dict[str, Any]]] = []
    monkeypatch.setattr(running, "run_and_summarise",
                        lambda plans, layout, **kw: seen.append((plans, layout, kw)))
    work, junit = tmp_path / "work", tmp_path / "builds.xml"
    result = in_nox(lambda s: sessions.build(s, "3.12", "7.0", [
        "--package", "apex", "--version", "1.8.0", "--workdir", str(work),
        "--junit", str(junit)]))
    assert result.status.name == "SUCCESS", result.reason
    ((plans, layout, kw),) = seen
    assert [p.build.id for p in plans] == ["apex-1.8.0-cp312-rocm7.0"]  # apex.toml: one build
    assert layout.root == work
    assert kw == {"refused": 0, "junit": str(junit), "known_failures": True}


def test_a_refused_option_ends_the_session_naming_it(capsys: pytest.CaptureFixture[str]) -> None:
    from tests.fixtures.nox_runs import aborted

    result = in_nox(lambda s: sessions.build(s, "3.12", "7.0", ["--bogus", "--dry-run"]))
    assert aborted(result) == ("nox -s build-3.12-rocm7.0 --: unrecognized arguments: --bogus", 2)
    assert capsys.readouterr().err.startswith("usage: nox -s build-3.12-rocm7.0 -- [-h]")
