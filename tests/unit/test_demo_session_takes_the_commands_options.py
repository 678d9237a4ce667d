"""``nox -s demo -- ARGS`` (``demo_main``, the session's body) is ``python -m toolkit demo
ARGS`` under another name (toolkit/cli/commands/demo.py: "the same parser, the same body"):
its --help prints the same description, options and exit codes (docs/command-line.md's
``python -m toolkit demo``), its usage names the session; ``--dry-run --json`` prints the
same plan; a bad option is argparse's error (raised, not an exit), not a run."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from tests.fixtures.system_rocm import rocm_at
from toolkit.cli.commands.demo import demo_main
from toolkit.cli.main import main


def _help(call: object, capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as stop:
        call()  # type: ignore[operator]
    assert stop.value.code == 0
    return capsys.readouterr().out


def test_the_sessions_help_is_the_commands_under_the_sessions_name(
        capsys: pytest.CaptureFixture[str]) -> None:
    session = _help(lambda: demo_main(["--help"], "nox -s demo --"), capsys)
    command = _help(lambda: main(["demo", "--help"]), capsys)
    assert session.startswith("usage: nox -s demo -- [-h] [--source PATH]")
    assert command.startswith("usage: python -m toolkit demo [-h] [--source PATH]")
    body = command.split("\n\n", 1)[1]
    assert session.split("\n\n", 1)[1] == body
    assert "Build, check and smoke-test the bundled sample HIP extension" in body
    assert "exit codes: 0" in " ".join(body.split())


def test_the_session_plans_what_the_command_plans(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--dry-run", "--json", "--cpu", "--workdir", str(tmp_path)]
    demo_main(args, "nox -s demo --")
    session = json.loads(capsys.readouterr().out)
    assert main(["demo", *args]) == 0
    assert json.loads(capsys.readouterr().out) == session
    assert session["build"]["rocm"] == "cpu"


def test_a_bad_option_is_refused_by_the_parser(capsys: pytest.CaptureFixture[str]) -> None:
    """The session turns the parser's error into its one-line abort (toolkit/cli/sessions.py)."""
    with pytest.raises(argparse.ArgumentError) as err:
        demo_main(["--no-such-option"], "nox -s demo --")
    assert "unrecognized arguments: --no-such-option" in str(err.value)


def _plan(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    assert main(["demo", "--dry-run", "--json", *argv]) == 0
    doc: dict[str, object] = json.loads(capsys.readouterr().out)
    return doc


def test_cpu_plans_without_the_machines_rocm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """--cpu: "the CPU variant (no GPU code), even where hipcc is installed": a system ROCm
    that ROCM_PATH names is not looked at."""
    rocm = rocm_at(tmp_path / "rocm-7.0.2", "7.0.2-17")
    monkeypatch.setenv("ROCM_PATH", str(rocm))
    doc = _plan(["--cpu", "--workdir", str(tmp_path / "w")], capsys)
    assert str(rocm) not in json.dumps(doc)
