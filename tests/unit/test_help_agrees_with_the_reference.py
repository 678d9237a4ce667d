"""Every ``--help`` says what ``docs/command-line.md``, the command-line reference, says: the
one-line summary of each subcommand (the top level's list), each parser's description, each
option as written (its flags, its value's name or choices, ``(required)``), what it does, in
the reference's order, and its exit codes with their meanings. The reference is the reviewed
statement a user reads; argparse's own formatter writes the invocation read from a parser,
so a flag, metavar, choice, help word or exit code changed in the code (or in the
reference) fails here, naming the option."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from tests.fixtures.nox_runs import in_nox
from toolkit.cli import devsessions
from toolkit.cli.commands.smoke import pair_parser
from toolkit.cli.main import SUBCOMMAND_MODULES, build_parser, command_name, main
from toolkit.cli.mutants import parser as mutants_parser
from toolkit.cli.sessions import session_parser

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "docs" / "command-line.md"
ITEM = re.compile(r"^- `([^`]+)`( \(required\))?(?:: (.*))?$", re.S)


def _squash(text: str) -> str:
    return " ".join(text.split())


def _bare(text: str) -> str:
    return "".join(text.split())


def _blocks(body: str) -> list[str]:
    """A section's paragraphs and list items, each one line (continuations joined)."""
    out: list[str] = []
    for line in body.splitlines():
        if not line.strip():
            out.append("")
        elif line.startswith("- ") or not out or out[-1] == "":
            out.append(line)
        else:
            out[-1] += " " + line.strip()
    return [b for b in out if b]


def _sections() -> dict[str, list[str]]:
    text = REFERENCE.read_text(encoding="utf-8")
    parts = re.split(r"^##+ (.+)$", text, flags=re.M)
    return {title.strip(): _blocks(body) for title, body in zip(parts[1::2], parts[2::2], strict=True)}


SECTIONS = _sections()


def _documented(title: str) -> tuple[str, list[tuple[str, bool, str]], str]:
    """(description, [(invocation, required, help)], exit codes line) of a section."""
    blocks = SECTIONS[title]
    items = [ITEM.match(b) for b in blocks if b.startswith("- `")]
    assert all(items), (title, blocks)
    rest = [b for b in blocks if not b.startswith("- ")]
    codes = [b for b in rest if b.startswith("Exit codes: ")]
    description = [b for b in rest if not b.startswith("Exit codes: ")]
    assert len(description) == 1 and len(codes) <= 1, (title, rest)
    return (_squash(description[0]),
            [(m.group(1), bool(m.group(2)), _squash(m.group(3) or "")) for m in items if m],
            _squash(codes[0]) if codes else "")


def _invocation(action: argparse.Action) -> str:
    return argparse.HelpFormatter("prog")._format_action_invocation(action)


def _actual(parser: argparse.ArgumentParser) -> tuple[str, list[tuple[str, bool, str]], str]:
    expand = argparse.HelpFormatter("prog")._expand_help  # "%%" read as "%", as --help prints
    options = [(_invocation(a), bool(a.required and a.option_strings),
                _squash(expand(a) if a.help else ""))
               for a in parser._actions if not isinstance(a, argparse._HelpAction)]
    epilog = _squash(parser.epilog or "")
    codes = f"Exit codes: {epilog.removeprefix('exit codes: ')}." if epilog else ""
    return _squash(parser.description or ""), options, codes


def _parsers() -> list[tuple[str, argparse.ArgumentParser]]:
    commands = [command_name(m) for m in SUBCOMMAND_MODULES]
    return [*((f"`python -m toolkit {c}`", build_parser(c).commands[c]) for c in commands),
            ("`nox -s build-<py>-rocm<rocm> --`", session_parser("build-3.12-rocm7.0")),
            ("`nox -s smoke-<py>-rocm<rocm> --`", pair_parser("nox -s smoke-3.12-rocm7.0 --")),
            ("`nox -s mutants --`", mutants_parser())]


@pytest.mark.parametrize(("title", "parser"), _parsers(),
                         ids=lambda x: x.strip("`") if isinstance(x, str) else "")
def test_each_option_reads_as_the_reference_writes_it(title: str,
                                                      parser: argparse.ArgumentParser) -> None:
    description, documented, codes = _documented(title)
    got_description, got, got_codes = _actual(parser)
    assert got_description == description, title
    # one option at a time: a difference names the option
    for want, have in zip(documented, got, strict=False):
        assert have == want, title
    assert [o[0] for o in got] == [o[0] for o in documented], title
    assert got_codes == codes, title


def test_every_command_is_in_the_reference_with_its_summary() -> None:
    top = build_parser()
    (sub,) = [a for a in top._actions if isinstance(a, argparse._SubParsersAction)]
    summaries = [f"- `{a.dest}`: {_squash(a.help or '')}" for a in sub._choices_actions]
    assert summaries == SECTIONS["Commands"]
    documented = {t for t in SECTIONS if t.startswith("`python -m toolkit ")}
    assert documented == {f"`python -m toolkit {c}`" for c in sub.choices}


@pytest.mark.parametrize("command", ["name-wheel", "variants", "smoke"])
def test_the_printed_help_carries_the_reference_lines(command: str,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """What ``--help`` prints (not only the parser's fields): every documented invocation and
    help text, and the exit codes."""
    with pytest.raises(SystemExit) as stop:
        main([command, "--help"])
    assert stop.value.code == 0
    printed = _bare(capsys.readouterr().out)  # argparse wraps lines, also after a hyphen
    description, documented, codes = _documented(f"`python -m toolkit {command}`")
    assert _bare(description) in printed
    for invocation, _required, text in documented:
        assert _bare(f"{invocation} {text}") in printed, invocation
    assert _bare(codes.removeprefix("Exit codes: ").rstrip(".")) in printed


@pytest.mark.parametrize("session", ["fuzz", "flakes"])
def test_the_developer_sessions_help_is_the_reference(session: str,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """``nox -s fuzz -- --help`` and ``nox -s flakes -- --help``, as nox runs the session (the
    parser is the session body's own): what the reference says, and nothing else."""
    result = in_nox(lambda s: getattr(devsessions, session)(s, ["--help"]))
    assert result.status.name == "SUCCESS", result.reason
    printed = capsys.readouterr().out
    description, documented, codes = _documented(f"`nox -s {session} --`")
    assert printed.startswith(f"usage: nox -s {session} -- [-h] ")
    body = _bare(printed.split("options:", 1)[0].split("\n", 2)[2])
    assert body == _bare(description)
    options = _bare(printed.split("options:", 1)[1].split("\n", 2)[2])  # after argparse's -h
    assert options == _bare(" ".join(f"{inv} {text}" for inv, _required, text in documented))
    assert codes == ""


@pytest.mark.parametrize("session", ["build", "smoke", "lock"])
def test_a_pair_sessions_help_as_nox_runs_it(session: str,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """``nox -s <session>-3.12-rocm7.0 -- --help`` through the session body: its usage names
    the session, and it lists what the reference says (lock: the build session's options and
    its own ``--check``)."""
    from toolkit.cli import sessions

    result = in_nox(lambda s: getattr(sessions, session)(s, "3.12", "7.0", ["--help"]))
    assert result.status.name == "SUCCESS", result.reason
    printed = capsys.readouterr().out
    assert printed.startswith(f"usage: nox -s {session}-3.12-rocm7.0 -- [-h] "), printed[:80]
    titles = {"build": ["build"], "smoke": ["smoke"], "lock": ["build", "lock"]}[session]
    bare = _bare(printed)
    for title in titles:
        _, documented, _ = _documented(f"`nox -s {title}-<py>-rocm<rocm> --`")
        for invocation, _required, text in documented:
            assert _bare(f"{invocation} {text}") in bare, (title, invocation)
