"""Every option of the command a nox session runs is reachable from the session's posargs
(``nox -s SESSION -- ...``), as real nox lists them (``-- --help``, the session's own argparse
parser): ``build-*`` and ``lock-*`` take ``plan``'s, ``smoke-*`` ``smoke``'s, ``demo``
``demo``'s. An option a session does not take is named here with the reason, so an option
added to a command and not to its session fails the test (shown on a planted one). And every
``nox -s SESSION -- OPTIONS`` the toolkit's hints or the README name is one the session takes
(the CPU-only hint's ``--cpu``: ``nox -s demo``)."""

from __future__ import annotations

import argparse
import functools
import re
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest

from toolkit.cli.main import build_parser

ROOT = Path(__file__).resolve().parents[2]

# session kind: (the CLI command it runs, {an option of that command it does not take: why})
SESSIONS: dict[str, tuple[str, Mapping[str, str]]] = {
    "build": ("plan", {}),
    "lock": ("plan", {}),
    "smoke": ("smoke", {
        "--build": "the session smokes every build of its pair; --package narrows them",
        "--manifest": "each build is smoked with its own manifest",
        "--env": "each build is smoked in its own environment",
        "--json": "one table for the pair; `python -m toolkit smoke --build ID --json` per build",
    }),
    "demo": ("demo", {}),
}


def session_name(kind: str) -> str:
    """A real session of that kind (the matrix sessions: the first pair of the matrix)."""
    if kind == "demo":
        return "demo"
    from toolkit.cli.noxsupport import matrix_pairs

    python, rocm, _ = matrix_pairs()[0]
    return f"{kind}-{python}-rocm{rocm}"


def help_options(text: str) -> set[str]:
    """The long options an argparse ``--help`` lists (``-n N, --numprocesses N`` too)."""
    body = text.split("options:", 1)[1]
    heads = [line.strip().split("  ")[0] for line in body.splitlines()
             if re.match(r"^  -", line)]
    return {o for head in heads for o in re.findall(r"--[a-z][a-z0-9-]*", head)}


@functools.cache
def nox_options(session: str) -> frozenset[str]:
    """What real nox's session takes after ``--`` (its ``-- --help``)."""
    res = subprocess.run([sys.executable, "-m", "nox", "-s", session, "--", "--help"],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    return frozenset(help_options(res.stdout))


def cli_options(parser: argparse.ArgumentParser) -> set[str]:
    return {max(a.option_strings, key=len) for a in parser._actions
            if a.option_strings and not isinstance(a, argparse._HelpAction)}


def missing(command: set[str], session: set[str] | frozenset[str],
            exempt: Mapping[str, str]) -> list[str]:
    """What is wrong, one line each: an option of the command the session does not take and
    no reason names; a reason for an option the command lacks or the session takes."""
    out = [f"{o}: not reachable from the session" for o in sorted(command - session - set(exempt))]
    out += [f"{o}: exempted, but the command has no such option" for o in sorted(set(exempt) - command)]
    out += [f"{o}: exempted, but the session takes it" for o in sorted(set(exempt) & session)]
    return out


@pytest.mark.parametrize("kind", sorted(SESSIONS))
def test_every_option_of_a_sessions_command_is_reachable(kind: str) -> None:
    command, exempt = SESSIONS[kind]
    wanted = cli_options(build_parser().commands[command])
    assert len(wanted) >= 3, wanted  # the parser was read
    assert missing(wanted, nox_options(session_name(kind)), exempt) == []


def test_help_options_reads_short_and_long_forms() -> None:
    text = ("usage: x\n\noptions:\n  -h, --help  show\n  -n N, --numprocesses N\n"
            "                        run tests\n  --gfx TARGETS  gfx ids (--not-an-option)\n")
    assert help_options(text) == {"--help", "--numprocesses", "--gfx"}


def test_a_planted_option_missing_from_its_session_is_found() -> None:
    """An option added to ``plan`` outside the definition the build sessions share, and a
    stale reason: both named."""
    parser = build_parser("plan").commands["plan"]
    parser.add_argument("--planted", action="store_true")
    build = nox_options(session_name("build"))
    assert missing(cli_options(parser), build, {}) == ["--planted: not reachable from the session"]
    assert missing(cli_options(parser) - {"--planted"}, build, {"--gone": "why"}) == [
        "--gone: exempted, but the command has no such option"]
    assert missing(cli_options(parser), build, {"--planted": "why", "--gfx": "why"}) == [
        "--gfx: exempted, but the session takes it"]


HINT = re.compile(r"nox -s (?P<session>[\w.{}-]+) -- (?P<args>[^`)\n|]*)")


def named_session_options() -> list[tuple[str, str, str]]:
    """(where, session kind, option) for every ``nox -s SESSION -- --option`` the README or
    the toolkit's own text (hints, help) names, for the sessions of SESSIONS."""
    texts = {"README.md": (ROOT / "README.md").read_text(encoding="utf-8")}
    for path in sorted((ROOT / "toolkit").rglob("*.py")):
        texts[str(path.relative_to(ROOT))] = path.read_text(encoding="utf-8")
    out = []
    for where, text in texts.items():
        for m in HINT.finditer(text):
            kind = m["session"].split("-", 1)[0]
            if kind in SESSIONS:
                out += [(where, kind, o) for o in re.findall(r"(?<!\S)(--[a-z][a-z0-9-]*)",
                                                              m["args"])]
    return out


def test_every_session_option_the_docs_and_hints_name_is_taken() -> None:
    from toolkit.run.executor import CPU_HINT

    named = named_session_options()
    # the CPU-only hint's command is among them: --cpu, of nox -s demo
    assert "nox -s demo -- --source PATH --cpu" in CPU_HINT
    assert ("toolkit/run/executor.py", "demo", "--cpu") in named
    assert len({kind for _, kind, _ in named}) >= 2, named
    wrong = [(where, kind, o) for where, kind, o in named
             if o not in nox_options(session_name(kind))]
    assert wrong == []
