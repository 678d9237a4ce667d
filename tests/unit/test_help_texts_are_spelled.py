"""Every --help text of the command line and of the nox sessions is spelled: each word is one
the project's documentation uses (README.md, toolkit/README.md, docs/*.md: the option names,
tools, files and terms a user reads there), or a plain English word of the list below, as
written there (a capital only at a sentence's start); each command's description is a
sentence (a capital first). A garbled, doubled or re-cased word in a help text fails it; a
new word goes into the documentation or, if it is plain English, into ``PLAIN``."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from toolkit.cli.commands.smoke import pair_parser
from toolkit.cli.main import COMMAND_HELP, SUBCOMMAND_MODULES, build_parser, command_name
from toolkit.cli.sessions import session_parser

ROOT = Path(__file__).resolve().parents[2]
WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
PLAIN = {
    "CPUs", "accept", "agree", "apply", "atomically", "comma", "consistency", "declaring",
    "define", "demangled", "destination", "detected", "event", "filters", "final", "glob", "html",
    "keep", "learned", "leave", "markdown", "modified", "narrow", "op", "orders", "pick",
    "produced", "recursively", "repeatable", "required", "searched", "shape", "soname", "title",
    "summarise", "unchecked", "update", "worker", "writing", "xdist", "jagged_2d_to_dense",
}


def _vocabulary() -> set[str]:
    # docs/command-line.md is --help's own words (test_help_agrees_with_the_reference): no
    # vocabulary of its own
    docs = [ROOT / "README.md", ROOT / "toolkit" / "README.md",
            *sorted(p for p in (ROOT / "docs").glob("*.md") if p.name != "command-line.md")]
    return set(WORD.findall("\n".join(p.read_text(encoding="utf-8") for p in docs))) | PLAIN


VOCABULARY = _vocabulary()


def _known(word: str) -> bool:
    if word in VOCABULARY:
        return True
    # a sentence's first word: capitalised, the rest as the documentation writes it
    return word[:1].isupper() and word[1:] == word[1:].lower() and word.lower() in VOCABULARY


def _parsers() -> list[tuple[str, argparse.ArgumentParser]]:
    commands = [command_name(m) for m in SUBCOMMAND_MODULES]
    return [*((c, build_parser(c).commands[c]) for c in commands),
            ("nox build session", session_parser("build-3.12-rocm7.0")),
            ("nox smoke session", pair_parser("nox -s smoke-3.12-rocm7.0 --"))]


def _texts(parser: argparse.ArgumentParser) -> list[str]:
    out = [parser.description or ""]
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue  # argparse's own
        if isinstance(action, argparse._SubParsersAction):
            out += [a.help or "" for a in action._choices_actions]
        out.append(action.help or "")
    return out


@pytest.mark.parametrize(("name", "parser"), _parsers(), ids=lambda x: x if isinstance(x, str) else "")
def test_every_word_of_a_help_is_a_documented_or_plain_word(name: str,
                                                           parser: argparse.ArgumentParser) -> None:
    unknown = sorted({w for text in _texts(parser) for w in WORD.findall(text) if not _known(w)})
    assert unknown == [], (name, unknown)


def test_the_top_level_help_and_each_command_summary_are_spelled() -> None:
    top = build_parser()
    unknown = sorted({w for text in _texts(top) for w in WORD.findall(text) if not _known(w)})
    assert unknown == []
    assert (top.description or "")[:1].isupper()


@pytest.mark.parametrize(("name", "parser"), _parsers(), ids=lambda x: x if isinstance(x, str) else "")
def test_a_description_is_a_sentence(name: str, parser: argparse.ArgumentParser) -> None:
    description = parser.description or ""
    assert len(description.split()) >= 5, name
    assert description[:1].isupper(), (name, description[:40])


def test_each_command_description_in_the_table_is_spelled() -> None:
    for command, (text, _codes) in COMMAND_HELP.items():
        assert [w for w in WORD.findall(text) if not _known(w)] == [], command
        assert text == "" or text[:1].isupper(), command


def test_a_garbled_word_is_found() -> None:
    assert not _known("XXtoolkitXX") and not _known("NAMING") and not _known("Wheels_")
    assert _known("wheel") and _known("Wheel") and _known("ROCm") and _known("JSON")
