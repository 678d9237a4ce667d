"""A run of one subcommand registers only that one: the same parser for it, without
importing the others (check's start-up time and memory, benchmarks/bench_check.py)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from toolkit.cli.main import SUBCOMMAND_MODULES, build_parser, command_name


@pytest.mark.parametrize("module", SUBCOMMAND_MODULES)
def test_a_single_subcommand_parser_is_the_full_parsers(module: str) -> None:
    name = command_name(module)
    alone, full = build_parser(name).commands.get(name), build_parser().commands.get(name)
    assert alone is not None and full is not None
    assert alone.format_help() == full.format_help()


def test_check_imports_no_other_subcommand() -> None:
    code = (
        "import sys\nfrom toolkit.cli.main import main\n"
        "try:\n    main(['check', '--help'])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith('toolkit.cli.commands.')), file=sys.stderr)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stderr.strip().splitlines()[-1] == "['toolkit.cli.commands.check']"
