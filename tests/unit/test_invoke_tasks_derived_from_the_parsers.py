"""What ``invoke NAME --help`` shows and what a task passes on, derived from the subcommand's
argparse parser (``toolkit.cli.frontends``): each option's help is the CLI's own words (a
positional list adds " (comma list)": invoke takes it as one comma-separated value), the
task's text is the parser's description (its usage when it has none), only the CLI's own
short flags exist, a flag is off and an option unset unless given, a positional the CLI
requires is required, and a non-zero exit of the command is the task's exit code."""

from __future__ import annotations

import argparse
from typing import Any

import pytest
from invoke.context import Context
from invoke.exceptions import Exit

from toolkit.cli import frontends
from toolkit.cli.main import build_parser


def _args(task: Any) -> dict[str, Any]:
    return {a.names[0]: a for a in task.get_arguments()}


def _action(parser: argparse.ArgumentParser, dest: str) -> argparse.Action:
    return next(a for a in parser._actions if a.dest == dest)


def test_each_option_keeps_the_clis_help_and_a_positional_list_says_comma_list() -> None:
    parser = build_parser("check").commands["check"]
    args = _args(frontends.invoke_task("check"))
    assert args["paths"].help == f"{_action(parser, 'paths').help} (comma list)"
    assert args["jobs"].help == _action(parser, "jobs").help
    assert args["require-symbol"].help == _action(parser, "required").help
    assert "help" not in args and "h" not in {n for a in args.values() for n in a.names}


def test_only_the_clis_own_short_flags() -> None:
    args = _args(frontends.invoke_task("smoke"))
    assert args["numprocesses"].names == ("numprocesses", "n")
    assert args["json"].names == ("json",)  # no invented -j
    assert args["workdir"].names == ("workdir",)


def test_unset_unless_given_and_the_required_positional() -> None:
    args = _args(frontends.invoke_task("check"))
    assert args["json"].default is False and args["verbose"].default is False
    assert args["jobs"].default is None and args["policy"].default is None
    assert args["paths"].positional is True and args["gfx"].positional is False
    assert args["gfx"].kind is list  # repeatable: --gfx A --gfx B


def test_the_task_text_is_the_description_else_the_usage() -> None:
    task = frontends.invoke_task("index")
    assert task.name == "index" and task.body.__name__ == "index"
    assert task.body.__doc__ == build_parser("index").commands["index"].description
    bare = argparse.ArgumentParser(prog="python -m toolkit name-wheel")
    bare.add_argument("wheel")
    bare.add_argument("--share", help="at most 50%% of the CPUs")  # argparse's escaped %
    own = frontends.invoke_task("name-wheel", bare)
    assert own.body.__doc__ == "usage: python -m toolkit name-wheel [-h] [--share SHARE] wheel\n"
    assert own.body.__name__ == "name_wheel"
    args = _args(own)  # (invoke hands each help out once)
    assert args["wheel"].positional is True
    assert args["share"].help == "at most 50% of the CPUs"  # as argparse shows it


def test_a_failing_command_is_the_tasks_exit_code(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[list[str]] = []

    def fake_main(argv: list[str]) -> int:
        seen.append(argv)
        return 7 if "--json" in argv else 0

    monkeypatch.setattr(frontends, "main", fake_main)
    task = frontends.invoke_task("check")
    task(Context(), paths="a.whl,,b.whl", gfx=["gfx90a", "gfx942"], jobs=2)
    assert seen[-1] == ["check", "a.whl", "b.whl", "--gfx", "gfx90a", "--gfx", "gfx942",
                        "--jobs", "2"]
    with pytest.raises(Exit) as stop:
        task(Context(), paths="a.whl", json=True, verbose=False)
    assert stop.value.code == 7
    assert seen[-1] == ["check", "a.whl", "--json"]


def test_a_parameter_named_like_a_python_keyword_gets_an_underscore() -> None:
    names = {p.name: p for p in frontends.params(build_parser("check").commands["check"])}
    assert "with_" in names and names["with_"].flag == "--with"
    assert names["verbose"].flag == "--verbose"  # the long one, not -v
    assert names["paths"].positional and not names["json"].positional
    assert names["json"].is_bool and not names["jobs"].is_bool
    assert names["gfx"].repeated and not names["jobs"].repeated
