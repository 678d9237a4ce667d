"""The front ends from one definition: each subcommand's argparse parser (its ``register``)
is the definition; ``invoke_task`` derives the invoke task of a subcommand from it, option for
option, so ``invoke NAME`` takes every option ``python -m toolkit NAME`` takes, with the
same help, and passes each given one on unchanged (an empty path too: the CLI refuses it in
one line). The nox sessions parse their posargs with the same definitions
(``toolkit.cli.sessions.session_parser``: ``add_build_options``; demo: ``add_demo_arguments``).

Imported by ``tasks.py`` when invoke loads it: keep module-level imports light.
"""

from __future__ import annotations

import argparse
import inspect
import keyword
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from toolkit.cli.main import build_parser, main


@dataclass(frozen=True)
class Param:
    """One option (or positional) of a subcommand, as an invoke task parameter."""

    name: str  # the Python parameter name; invoke's flag is it with dashes
    action: argparse.Action

    @property
    def flag(self) -> str:
        """The CLI's long option string (``-n`` only when it has no long one)."""
        return max(self.action.option_strings, key=len)

    @property
    def positional(self) -> bool:
        return not self.action.option_strings

    @property
    def is_bool(self) -> bool:
        return self.action.nargs == 0

    @property
    def repeated(self) -> bool:
        return isinstance(self.action, argparse._AppendAction)

    def argv(self, value: Any) -> list[str]:
        """The CLI's arguments for ``value`` (None, False, []: not given)."""
        if value is None or value is False:
            return []
        if self.positional:
            if self.action.nargs in ("+", "*"):  # one comma list in invoke
                return [v for v in str(value).split(",") if v]
            return [str(value)]
        if self.is_bool:
            return [self.flag]
        values = value if isinstance(value, list) else [value]
        return [a for v in values for a in (self.flag, str(v))]


def params(parser: argparse.ArgumentParser) -> list[Param]:
    """The parser's options and positionals (not ``--help``), in its order."""
    out = []
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        if action.option_strings:
            name = max(action.option_strings, key=len).lstrip("-").replace("-", "_")
        else:
            name = action.dest
        out.append(Param(name + "_" if keyword.iskeyword(name) else name, action))
    return out


def _help(action: argparse.Action) -> str:
    text = (action.help or "").replace("%%", "%")
    return text + (" (comma list)" if action.nargs in ("+", "*") else "")


def invoke_task(command: str, parser: argparse.ArgumentParser | None = None) -> Any:
    """The invoke task of ``python -m toolkit COMMAND``: its options from the subcommand's
    parser, its docstring from the parser's description; the task runs ``main`` with the
    options given and exits with its code."""
    from invoke.exceptions import Exit
    from invoke.tasks import Task

    sub = parser or build_parser(command).commands[command]
    ps = params(sub)

    def body(c: Any, **given: Any) -> None:
        argv = [command]
        for p in ps:
            argv += p.argv(given.get(p.name))
        code = main(argv)
        if code:
            raise Exit(code=code)

    required = [p.name for p in ps if p.positional and p.action.nargs in (None, "+")]
    parameters = [inspect.Parameter("c", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    parameters += [inspect.Parameter(
        p.name, inspect.Parameter.KEYWORD_ONLY,
        default=inspect.Parameter.empty if p.name in required else (False if p.is_bool else None))
        for p in ps]
    body.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    body.__name__ = command.replace("-", "_")
    body.__doc__ = sub.description or sub.format_usage()
    shorts = {p.name: [o[1:] for o in p.action.option_strings if not o.startswith("--")]
              for p in ps}

    class CliTask(Task):  # type: ignore[type-arg]
        """A task whose flags are the CLI's: its long name and its own short ones (``-n``,
        ``-v``), none invented."""

        def arg_opts(self, name: str, default: str, taken_names: set[str]) -> dict[str, Any]:
            opts: dict[str, Any] = super().arg_opts(name, default, taken_names)
            opts["names"] = [opts["names"][0], *shorts.get(name, [])]
            return opts

    task: Callable[..., Any] = CliTask(
        body, name=command, positional=required, auto_shortflags=False,
        iterable=[p.name for p in ps if p.repeated],
        help={p.name: _help(p.action) for p in ps})
    return task
