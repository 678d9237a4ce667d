"""The three front ends take the same options: every option of ``python -m toolkit NAME`` is
reachable from ``invoke NAME`` (the real Collection tasks.py gives invoke, run by invoke's
own Program), with the value given arriving unchanged, and from ``nox -s ... -- `` where the
command is a session (the build sessions take the build options of ``plan``; ``demo``)."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from invoke.loader import FilesystemLoader
from invoke.program import Program

from toolkit.cli import frontends
from toolkit.cli.main import build_parser

ROOT = Path(__file__).resolve().parents[2]


def _collection() -> Any:
    loader = FilesystemLoader(start=str(ROOT))
    module, parent = loader.load("tasks")
    from invoke.collection import Collection

    return Collection.from_module(module)


def _options(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [a for a in parser._actions if not isinstance(a, argparse._HelpAction)]


def _value(action: argparse.Action) -> str:
    if action.choices:
        return str(list(action.choices)[0])
    if action.type is not None and getattr(action.type, "__name__", "") != "path_value":
        return "3"  # a count, a size, a ratio: valid for each
    return f"v-{action.dest}"


def _parsed(action: argparse.Action) -> Any:
    """What the CLI makes of ``_value``: the value itself, or its type's reading of it."""
    raw = _value(action)
    return action.type(raw) if callable(action.type) else raw


def _invoke_argv(task: str, parser: argparse.ArgumentParser) -> list[str]:
    """``invoke TASK`` with every option of the CLI's parser given, by its CLI name."""
    argv = [task]
    for a in _options(parser):
        if not a.option_strings and a.nargs == "?":  # an optional positional: a flag
            argv += [f"--{a.dest}", _value(a)]
        elif not a.option_strings:
            argv.append(_value(a))
        elif a.nargs == 0:
            argv.append(max(a.option_strings, key=len))
        else:
            argv += [max(a.option_strings, key=len), _value(a)]
    return argv


def _reaching_cli(monkeypatch: pytest.MonkeyPatch, argv: list[str]) -> list[str]:
    seen: list[list[str]] = []
    monkeypatch.setattr(frontends, "main", lambda a: seen.append(list(a)) or 0)
    Program(namespace=_collection()).run(["invoke", *argv], exit=False)
    assert len(seen) == 1, argv
    return seen[0]


TASKS = sorted(_collection().tasks)


def test_tasks_are_subcommands() -> None:
    assert set(TASKS) <= set(build_parser().commands)
    # the nine tasks the README documents
    assert set(TASKS) == {"matrix", "plan", "check", "report", "smoke", "repro", "index",
                          "variants", "upstream"}


@pytest.mark.parametrize("task", TASKS)
def test_every_cli_option_reaches_the_cli_from_invoke(task: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    parser = build_parser().commands[task]
    options = _options(parser)
    assert options
    argv = _reaching_cli(monkeypatch, _invoke_argv(task, parser))
    assert argv[0] == task
    got = build_parser().parse_args(argv)
    for a in options:  # each one given, each one arrived with the value given
        want: Any = True if a.nargs == 0 else _parsed(a)
        if isinstance(a, argparse._AppendAction) or a.nargs in ("+", "*"):
            want = [want]
        assert getattr(got, a.dest) == want, (task, a.dest)


def test_check_task_takes_all_of_checks_options() -> None:
    """The review found `invoke check` exposing 6 of the CLI's 13 options."""
    task = _collection().tasks["check"]
    names = {n for arg in task.get_arguments() for n in arg.names}
    assert {"paths", "gfx", "policy", "with", "require-symbol", "allow-bundled", "exclude",
            "jobs", "max-member-size", "max-total-size", "max-ratio", "json", "verbose",
            "v"} <= names


def test_repeated_options_and_an_empty_path_pass_through(
        monkeypatch: pytest.MonkeyPatch) -> None:
    argv = _reaching_cli(monkeypatch, ["smoke", "--gfx", "gfx90a", "--gfx", "gfx942",
                                       "--workdir", "", "-n", "2"])
    assert argv == ["smoke", "--gfx", "gfx90a", "--gfx", "gfx942", "--workdir", "",
                    "--numprocesses", "2"]


def _nox_options(session: str) -> set[str]:
    res = subprocess.run([sys.executable, "-m", "nox", "-s", session, "--", "--help"],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    text = res.stdout.split("options:", 1)[1]
    return set(re.findall(r"^\s+(?:-\w, )?(--[a-z][a-z-]*)", text, re.M)) - {"--help"}


def _cli_options(command: str) -> set[str]:
    return {max(a.option_strings, key=len)
            for a in _options(build_parser().commands[command]) if a.option_strings}


def test_nox_sessions_take_every_cli_option() -> None:
    from toolkit.cli.noxsupport import matrix_pairs

    python, rocm, _ = matrix_pairs()[0]
    build = _nox_options(f"build-{python}-rocm{rocm}")
    assert _cli_options("plan") <= build, _cli_options("plan") - build
    assert {"--package", "--version", "--dry-run", "--junit"} <= build
    demo = _nox_options("demo")
    assert _cli_options("demo") == demo
