"""Each subcommand's ``--help`` gets its description and the exit codes it can end with
(``toolkit.cli.main._describe``): a parser's own description is kept, else the table's; a
command with no text in the table gets none (argparse then prints no empty paragraph); a
command outside the table ends with 0 or 2 (README "## Exit codes": 0 ok, 2 bad input); and
``demo``'s help lists every code of the README's table."""

from __future__ import annotations

import argparse
import importlib
import re
from pathlib import Path

cli = importlib.import_module("toolkit.cli.main")  # the package exports main()
ROOT = Path(__file__).resolve().parents[2]


def test_the_parsers_own_description_wins_over_the_tables() -> None:
    own = argparse.ArgumentParser(description="Its own words.")
    cli._describe("index", own)
    assert own.description == "Its own words."
    assert own.epilog == "exit codes: 0 ok, 2 bad input"
    bare = argparse.ArgumentParser()
    cli._describe("index", bare)
    assert bare.description == "Write DIR/index.html, a pip --find-links page of every wheel under DIR."


def test_no_text_is_no_description_and_an_unknown_command_ends_0_or_2() -> None:
    bare = argparse.ArgumentParser()
    cli._describe("check", bare)  # its text lives in its own parser
    assert bare.description is None and bare.epilog == "exit codes: 0 ok, 1 " + cli.EXIT_CODES[1] + \
        ", 2 bad input"
    other = argparse.ArgumentParser()
    cli._describe("not-in-the-table", other)
    assert other.description is None and other.epilog == "exit codes: 0 ok, 2 bad input"


def test_demo_lists_every_code_of_the_readmes_table() -> None:
    table = (ROOT / "README.md").read_text().split("## Exit codes", 1)[1]
    codes = [int(c) for c in re.findall(r"^\| (\d+) \|", table, re.M)]
    assert codes == [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 130]
    demo = cli.build_parser("demo").commands["demo"]
    listed = [int(c) for c in re.findall(r"(?:: |, )(\d+) ", demo.epilog or "")]
    assert listed == codes
