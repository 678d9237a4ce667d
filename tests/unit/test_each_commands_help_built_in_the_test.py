"""Each subcommand's parser, built inside the test (not while pytest collects: mutmut's
stats then see which test reads each option's help), says what docs/command-line.md, the
command-line reference, says: the description, every option's invocation (flags, value name
or choices, ``(required)``) and help words, in the reference's order, and the exit codes.
The comparison's reading of the reference is the one ``test_help_agrees_with_the_reference``
documents."""

from __future__ import annotations

import pytest

from tests.unit.test_help_agrees_with_the_reference import _actual, _documented
from toolkit.cli.commands.smoke import pair_parser
from toolkit.cli.main import SUBCOMMAND_MODULES, build_parser, command_name

COMMANDS = sorted(command_name(m) for m in SUBCOMMAND_MODULES)


@pytest.mark.parametrize("command", COMMANDS)
def test_the_commands_help_is_the_references(command: str) -> None:
    parser = build_parser(command).commands[command]
    description, documented, codes = _documented(f"`python -m toolkit {command}`")
    got_description, got, got_codes = _actual(parser)
    assert got_description == description
    for want, have in zip(documented, got, strict=False):
        assert have == want  # one option at a time: the first that differs is named
    assert len(got) == len(documented)
    assert got_codes == codes


def test_the_smoke_pair_sessions_help_is_the_references() -> None:
    parser = pair_parser("nox -s smoke-3.12-rocm7.0 --")
    _, documented, _ = _documented("`nox -s smoke-<py>-rocm<rocm> --`")
    _, got, _ = _actual(parser)
    assert got == documented
