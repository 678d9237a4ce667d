"""The command line's own answers, in process (the CLI tests that run ``python -m toolkit`` in a
child prove the same end to end): no command is exit 2 with the help, ``--version`` names the
version pyproject.toml declares, a misspelt command gets the nearest ones, and with ``--json``
a refusal is a JSON document on stdout (``check``'s judged by its published schema
check.schema.json with jsonschema; the other commands' ``{"ok": false, "error": {...}}``) beside
the one ``error:`` line on stderr. Exit codes per README "## Exit codes"."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import jsonschema
import pytest
import tomllib

import toolkit.inspect
from toolkit.cli.main import main

cli = importlib.import_module("toolkit.cli.main")  # the module (toolkit.cli.main is also a function)

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((Path(toolkit.inspect.__file__).parent / "check.schema.json").read_text())


def test_no_command_is_exit_2_with_the_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    out = capsys.readouterr().out
    assert out.startswith("usage: python -m toolkit") and "check" in out and "repro" in out


def test_version_is_the_declared_one(capsys: pytest.CaptureFixture[str]) -> None:
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0
    assert capsys.readouterr().out.strip() == f"toolkit {declared}"


def test_a_misspelt_command_names_the_nearest(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["chek"])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "'chek'" in err and "check" in err.split("'chek'", 1)[1]
    assert "did you mean" in err


def test_check_json_refusal_of_an_option_is_the_schemas_error_document(
        capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["check", "--json", "--jobs", "0", "a.whl"])
    assert stop.value.code == 2
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    jsonschema.validate(doc, SCHEMA)
    assert doc["error"]["exit_code"] == 2 and "--jobs" in doc["error"]["message"]
    assert "bad job count '0'" in captured.err


def test_other_json_commands_refuse_in_the_plain_error_document(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["report", "--json", "--no-such-option"])
    assert stop.value.code == 2
    doc = json.loads(capsys.readouterr().out)
    assert doc["ok"] is False and doc["error"]["exit_code"] == 2
    assert "--no-such-option" in doc["error"]["message"]
    # a refusal the command raises (a missing file): exit 2, the document and one error line
    assert main(["report", "--json", "--nox-report", str(tmp_path / "none.json")]) == 2
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    assert doc == {"ok": False, "error": {"message": doc["error"]["message"], "exit_code": 2}}
    assert "none.json" in doc["error"]["message"]
    assert captured.err.startswith("error: ") and captured.err.count("\n") == 1


def test_without_json_stdout_stays_empty(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["report", "--nox-report", str(tmp_path / "none.json")]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.startswith("error: ")
    with pytest.raises(SystemExit):
        main(["report", "--bogus"])
    assert capsys.readouterr().out == ""


def test_json_after_a_double_dash_or_on_a_command_without_it_is_no_json_request() -> None:
    parser = cli.build_parser()
    assert cli._wants_json(parser, ["report", "--json"]) is True
    assert cli._wants_json(parser, ["report", "--", "--json"]) is False
    assert cli._wants_json(parser, ["index", "--json"]) is False  # index has no --json
    assert cli._wants_json(parser, ["nosuch", "--json"]) is False
    assert cli._wants_json(parser, []) is False


def test_json_before_a_double_dash_still_makes_the_refusal_a_json_document(
        capsys: pytest.CaptureFixture[str]) -> None:
    """``report --json -- stray``: --json comes before the ``--`` (right after the command), so
    the refusal of the stray argument is the JSON error document too, naming the argument."""
    with pytest.raises(SystemExit) as stop:
        main(["report", "--json", "--", "stray"])
    assert stop.value.code == 2
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    assert doc["ok"] is False and doc["error"]["exit_code"] == 2
    assert "stray" in doc["error"]["message"]
    assert "stray" in captured.err


def test_a_command_that_printed_its_document_gets_no_second_one(capsys: pytest.CaptureFixture[str]) -> None:
    import argparse

    from toolkit.core.errors import CheckFailed

    def body(args: argparse.Namespace) -> int:
        print('{"mine": true}')
        raise CheckFailed("it failed after printing")

    args = argparse.Namespace(func=body, json=True, command="report")
    assert cli._run(args) == 1
    captured = capsys.readouterr()
    assert captured.out == '{"mine": true}\n'
    assert captured.err == "error: it failed after printing\n"


def test_exit_code_lines_say_each_codes_meaning() -> None:
    readme = (ROOT / "README.md").read_text().split("## Exit codes", 1)[1]
    line = cli.exit_codes((0, 2, 130))
    assert line.startswith("exit codes: 0 ok, 2 bad input")
    assert ", 130 interrupted" in line
    assert "| 130 | interrupted" in readme
