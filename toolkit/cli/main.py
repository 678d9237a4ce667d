"""`python -m toolkit ...`: the one command-line entry point.

Each subcommand lives in ``toolkit/commands/<name>.py`` and exposes
``register(subparsers) -> None``; the parser it adds sets ``func(args) -> int``.
Errors derived from ``ToolkitError`` are caught here, once: one line, its exit code.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Mapping, Sequence
from typing import NoReturn, TextIO

from toolkit import __version__
from toolkit.core.errors import EXIT_CODES, ToolkitError, describe_os_error, suggestion
from toolkit.core.text import clean, escape
from toolkit.core.urls import mask

# subcommands whose faults while writing are a failed build (exit 5), not bad input
BUILDING = {"demo", "provision", "repro"}

SUBCOMMAND_MODULES: tuple[str, ...] = (
    "toolkit.cli.commands.matrix",
    "toolkit.cli.commands.plan",
    "toolkit.cli.commands.check",
    "toolkit.cli.commands.provision",
    "toolkit.cli.commands.name_wheel",
    "toolkit.cli.commands.preflight",
    "toolkit.cli.commands.repro",
    "toolkit.cli.commands.report",
    "toolkit.cli.commands.smoke",
    "toolkit.cli.commands.demo",
    "toolkit.cli.commands.index",
    "toolkit.cli.commands.variants",
    "toolkit.cli.commands.upstream",
)


# every exit code (what each means is said once, in toolkit/core/errors.py EXIT_CODES; README
# "## Exit codes" is the long form, tested against it)
_BUILDS = tuple(EXIT_CODES)
# each subcommand's description (its --help) and the exit codes it can end with
COMMAND_HELP: Mapping[str, tuple[str, tuple[int, ...]]] = {
    "matrix": ("Show the build matrix: a table (seed-table shape), one JSON object per build, "
               "one build id per line (--ids), or the GitHub Actions matrix (--format github); "
               "--explain ID: one build's facts with the upstream evidence of each.",
               (0, 2, 3, 8)),
    "plan": ("Print the plan of one build: every step, its command and what it does beyond "
             "it. Nothing runs.", (0, 2, 3, 7, 10, 12)),
    "check": ("", (0, 1, 2)),
    "provision": ("Create or reuse the environment of one build (the provisioning steps of "
                  "its plan) and print its folder; --json: also what was learned.",
                  (0, 2, 3, 4, 5, 6, 8, 9, 10, 130)),
    "name-wheel": ("Give the one wheel a build produced its final name (+rocm<r>git<sha8>) "
                   "and move it into a folder, atomically.", (0, 2, 5)),
    "preflight": ("Checks before a build: hip-match, the hipcc of the build and the HIP "
                  "version torch was built with agree.", (0, 2, 4)),
    "repro": ("Rebuild a build here from its manifest.json (the recorded inputs, never its "
              "commands) and compare: 'identical: <sha256>' or 'differs' with what differs.",
              (0, 1, 2, 4, 5, 6, 8, 9, 11, 12, 130)),
    "report": ("Summarise nox --report JSON and JUnit XML files in one table (and a GitHub "
               "step summary in Actions).", (0, 1, 2)),
    "smoke": ("", (0, 1, 2, 4, 9, 130)),
    "demo": ("", _BUILDS),
    "index": ("Write DIR/index.html, a pip --find-links page of every wheel under DIR.",
              (0, 2)),
    "variants": ("Print the wheel of DIR a variant-aware installer picks for a GPU (--gfx, else "
                 "the one detected) and a Python: variantlib orders the variants with "
                 "rocm-bootstrap's provider; no variant fits: the wheel without a label; exit 1 "
                 "when none fits.", (0, 1, 2, 4)),
    "upstream": ("Show the drift between toolkit/data and the upstream repositories (and "
                 "--write the values upstream states); exit 1 when a drift is left for a "
                 "maintainer.", (0, 1, 2, 3, 8)),
}


def exit_codes(codes: Sequence[int]) -> str:
    """``exit codes: 0 ok, 2 bad input, ...`` (a --help epilog; the meanings: EXIT_CODES)."""
    return "exit codes: " + ", ".join(f"{c} {EXIT_CODES[c]}" for c in codes)


def _describe(name: str, parser: argparse.ArgumentParser) -> None:
    """Give a subcommand's --help its description and exit codes (``COMMAND_HELP``)."""
    text, codes = COMMAND_HELP.get(name, ("", (0, 2)))
    parser.description = parser.description or text or None
    parser.epilog = exit_codes(codes)


class Parser(argparse.ArgumentParser):
    """argparse, with a bad argument named on one clean line (its value escaped)."""

    commands: Mapping[str, argparse.ArgumentParser]  # the subcommands' parsers, by name
    refused: str | None = None  # the last line error() printed (for a --json error document)

    def _check_value(self, action: argparse.Action, value: object) -> None:
        """A value outside an option's choices (a subcommand's name too): argparse's line,
        then the nearest choices (``errors.suggestion``)."""
        try:
            super()._check_value(action, value)
        except argparse.ArgumentError as err:
            near = suggestion(value, [str(c) for c in action.choices or ()])
            if near is None:
                raise
            raise argparse.ArgumentError(action, f"{err.message}; {near}") from None

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        if not self.exit_on_error:  # a nox session's parser: its front end says it, exit 2
            raise argparse.ArgumentError(None, f"{self.prog}: {message}")
        Parser.refused = f"{self.prog}: {escape(mask(message), 1000)}"
        self.exit(2, f"{self.prog}: error: {escape(mask(message), 1000)}\n")


def command_name(module: str) -> str:
    """The subcommand a module of SUBCOMMAND_MODULES registers (``name_wheel``: name-wheel)."""
    return module.rsplit(".", 1)[-1].replace("_", "-")


def build_parser(only: str | None = None) -> Parser:
    """The command line; ``only``: with just that subcommand registered (a run of one
    subcommand does not import every other one: ``check``'s start-up time and memory)."""
    parser = Parser(
        prog="python -m toolkit",
        description="Build, check and smoke-test ROCm PyTorch-extension wheels.",
    )
    parser.add_argument("--version", action="version", version=f"toolkit {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in SUBCOMMAND_MODULES:
        if only is None or command_name(name) == only:
            importlib.import_module(name).register(sub)
    for name, command in sub.choices.items():
        _describe(name, command)
    parser.commands = sub.choices
    return parser


def error_document(command: str | None, message: str, exit_code: int) -> dict[str, object]:
    """The JSON a ``--json`` run prints on stdout when it fails before its output: ``check``'s
    is in its published schema (versioned); any other command's is ``{"ok": false, "error":
    {"message", "exit_code"}}``."""
    if command == "check":
        from toolkit.inspect.report import error_document as check_error

        return check_error(message, exit_code)
    return {"ok": False, "error": {"message": message, "exit_code": exit_code}}


class _Watched:
    """``sys.stdout`` while a command runs, noting whether it wrote anything: a command that
    printed its JSON document before it failed gets no second (error) document after it."""

    def __init__(self, inner: TextIO) -> None:
        self.inner, self.used = inner, False

    def write(self, text: str) -> int:
        self.used = self.used or bool(text)
        return self.inner.write(text)

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)


def fail(args: argparse.Namespace, message: str, exit_code: int, *,
         printed: bool = False) -> int:
    """One ``error:`` line on stderr; with ``--json`` also the error document on stdout,
    unless the command has ``printed`` its own output already."""
    print(f"error: {message}", file=sys.stderr)
    if getattr(args, "json", False) is True and not printed:
        doc = error_document(getattr(args, "command", None), message, exit_code)
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
    return exit_code


def _wants_json(parser: Parser, argv: Sequence[str]) -> bool:
    """Was ``--json`` given to a subcommand that has it (before any ``--``)?"""
    sub = parser.commands.get(argv[0]) if argv else None
    head = argv[1: argv.index("--")] if "--" in argv else argv[1:]
    return sub is not None and "--json" in sub._option_string_actions and "--json" in head


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    known = {command_name(m) for m in SUBCOMMAND_MODULES}
    parser = build_parser(argv[0] if argv and argv[0] in known else None)
    args = _parse(parser, argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    return _run(args)


def _parse(parser: Parser, argv: list[str]) -> argparse.Namespace:
    """The parsed arguments; a bad or unrecognised one exits 2 (argparse), with ``--json``
    printing the error document too."""
    try:
        args, extra = parser.parse_known_args(argv)
        if extra:  # named by the subcommand's parser, with its usage, not the top level's
            chosen = parser.commands.get(getattr(args, "command", None) or "", parser)
            chosen.error(f"unrecognized arguments: {' '.join(extra)}")
    except SystemExit as stop:  # a bad argument: with --json, the error document too
        if stop.code == 2 and Parser.refused and _wants_json(parser, argv):
            doc = error_document(argv[0], Parser.refused, 2)
            sys.stdout.write(json.dumps(doc, indent=2) + "\n")
        raise
    return args


def _run(args: argparse.Namespace) -> int:
    """Run the chosen command: its exit code, or the error table's for what it raised (one
    line on stderr, no traceback)."""
    from toolkit.cli.running import Finished

    out = _Watched(sys.stdout)
    sys.stdout = out
    try:
        return int(args.func(args))
    except Finished as done:  # the body has shown why (its table): its exit code only
        return done.code
    except ToolkitError as err:
        return fail(args, clean(mask(err.line)), err.exit_code, printed=out.used)
    except OSError as err:  # a fault no step turned into a ToolkitError: one line, no traceback
        code = 5 if getattr(args, "command", None) in BUILDING else 2
        return fail(args, describe_os_error(err), code, printed=out.used)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    finally:
        sys.stdout = out.inner


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
