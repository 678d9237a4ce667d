"""The ``--json`` error document as a reader of a CI log sees it: the exact text on stdout,
written out by hand here (two-space indentation, keys in the order the README gives them:
``{"ok": false, "error": {"message": ..., "exit_code": ...}}``, one trailing newline), beside
the one ``error:`` line on stderr; nothing on stdout without ``--json`` (only ``True`` counts:
an option's value, not any truthy attribute) or when the command printed its own output."""

from __future__ import annotations

import argparse
import importlib

import pytest

cli = importlib.import_module("toolkit.cli.main")  # the package exports main()

REFUSED = """\
{
  "ok": false,
  "error": {
    "message": "the wheel is gone",
    "exit_code": 4
  }
}
"""


def test_a_failed_json_run_prints_the_indented_document(capsys: pytest.CaptureFixture[str]) -> None:
    args = argparse.Namespace(json=True, command="report")
    assert cli.fail(args, "the wheel is gone", 4) == 4
    captured = capsys.readouterr()
    assert captured.out == REFUSED
    assert captured.err == "error: the wheel is gone\n"


@pytest.mark.parametrize("args", [
    argparse.Namespace(json=False, command="report"),
    argparse.Namespace(json="yes", command="report"),  # not the store_true option's True
    argparse.Namespace(command="report"),  # a command without --json
])
def test_without_a_json_request_only_the_error_line(args: argparse.Namespace,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.fail(args, "the wheel is gone", 4) == 4
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == "error: the wheel is gone\n"


def test_a_command_that_printed_gets_only_the_error_line(capsys: pytest.CaptureFixture[str]) -> None:
    args = argparse.Namespace(json=True, command="report")
    assert cli.fail(args, "late", 1, printed=True) == 1
    assert capsys.readouterr().out == ""


def test_a_refused_option_with_json_is_the_same_indented_document(
        capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        cli.main(["report", "--json", "--bogus"])
    assert stop.value.code == 2
    message = "python -m toolkit report: unrecognized arguments: --bogus"
    assert capsys.readouterr().out == (
        '{\n  "ok": false,\n  "error": {\n'
        f'    "message": "{message}",\n    "exit_code": 2\n  }}\n}}\n')


def test_the_check_document_is_indented_too(capsys: pytest.CaptureFixture[str]) -> None:
    args = argparse.Namespace(json=True, command="check")
    cli.fail(args, "gone", 2)
    out = capsys.readouterr().out
    assert out.startswith('{\n  "schema_version": ') and out.endswith("\n}\n")
    assert '\n  "ok": false,\n' in out and '\n    "exit_code": 2\n' in out
