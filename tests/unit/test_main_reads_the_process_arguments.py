"""``python -m toolkit ARGS`` and the console script call ``main()`` without arguments: it reads
the process's own arguments after the program's name (``sys.argv[1:]``, as argparse does), so
``main()`` under a given ``sys.argv`` does what ``main(ARGS)`` does."""

from __future__ import annotations

import sys

import pytest

from toolkit.cli.main import main

ARGS = ["matrix", "--ids", "--package", "apex", "--rocm", "7.0", "--python", "3.12"]


def test_main_without_arguments_reads_sys_argv(monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert main(list(ARGS)) == 0
    given = capsys.readouterr().out
    assert given and all(line.startswith("apex-") for line in given.splitlines())
    monkeypatch.setattr(sys, "argv", ["python -m toolkit", *ARGS])
    assert main() == 0
    assert capsys.readouterr().out == given


def test_the_program_name_is_never_an_argument(monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "argv", ["index", "matrix", "--ids", "--package", "apex"])
    assert main() == 0  # "index" is the program's name here, not the subcommand
    assert capsys.readouterr().out.startswith("apex-")
