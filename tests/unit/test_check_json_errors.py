"""``--json`` on a usage error: the real CLI (``python -m toolkit check --json``) prints the
error document of the published schema (toolkit/inspect/check.schema.json) on stdout, the one
``error:`` line on stderr, and exits 2 (README, "Exit codes": bad input)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import toolkit.inspect

SCHEMA = json.loads((Path(toolkit.inspect.__file__).parent / "check.schema.json").read_text())
ROOT = Path(__file__).resolve().parents[2]


def _cli(cwd: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "toolkit", *argv], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def _truncated(tmp: Path) -> str:
    whole = tmp / "whole.whl"
    with zipfile.ZipFile(whole, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("demo/__init__.py", "x = 1\n" * 2000)
        z.writestr("demo-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\n")
    data = whole.read_bytes()
    (tmp / "demo-1.0-py3-none-any.whl").write_bytes(data[: len(data) // 2])  # no central directory
    return "demo-1.0-py3-none-any.whl"


def _fifo(tmp: Path) -> str:
    os.mkfifo(tmp / "pipe.whl")
    return "pipe.whl"


@pytest.mark.parametrize(("make", "extra", "stderr"), [
    (_truncated, (), "error: demo-1.0-py3-none-any.whl: not a readable zip archive (File is not a zip file)"),
    (lambda tmp: "missing.whl", (), "error: missing.whl: no such file or directory"),
    (_fifo, (), "error: wheel pipe.whl: not a regular file (a FIFO)"),
    (_truncated, ("--policy", "manylinux_9"), None),  # an unknown policy: named with the valid ones
])
def test_check_json_on_bad_input_prints_the_error_document(
        tmp_path: Path, make: Any, extra: tuple[str, ...], stderr: str | None) -> None:
    res = _cli(tmp_path, "check", "--json", *extra, make(tmp_path))
    assert res.returncode == 2, res.stderr
    doc = json.loads(res.stdout)  # one JSON object, nothing else on stdout
    jsonschema.Draft202012Validator(SCHEMA).validate(doc)
    assert set(doc) == {"schema_version", "ok", "error"} and doc["ok"] is False
    assert doc["schema_version"] == 3 and doc["error"]["exit_code"] == 2
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0] == "error: " + doc["error"]["message"], res.stderr
    if stderr is not None:
        assert lines[0] == stderr
    else:
        assert "manylinux_9" in lines[0] and "valid: manylinux_2_5" in lines[0]


def test_check_json_on_a_bad_argument_prints_the_error_document(tmp_path: Path) -> None:
    res = _cli(tmp_path, "check", "--json", "--jobs", "0", "a.whl")
    assert res.returncode == 2
    doc = json.loads(res.stdout)
    jsonschema.Draft202012Validator(SCHEMA).validate(doc)
    assert doc["error"] == {"message": "python -m toolkit check: argument --jobs: bad job count '0': "
                                       "expected 1 or more", "exit_code": 2}
    assert res.stderr.splitlines()[-1] == "python -m toolkit check: error: argument --jobs: bad job " \
                                          "count '0': expected 1 or more"


def test_without_json_stdout_stays_empty_and_other_json_commands_say_it_too(tmp_path: Path) -> None:
    plain = _cli(tmp_path, "check", "missing.whl")
    assert (plain.returncode, plain.stdout) == (2, "")
    assert plain.stderr == "error: missing.whl: no such file or directory\n"
    other = _cli(tmp_path, "report", "--json", "--nox-report", "missing.json")
    assert other.returncode == 2
    assert json.loads(other.stdout) == {"ok": False, "error": {
        "message": "missing.json: no such nox report (written by `nox --report FILE`)", "exit_code": 2}}


def test_the_error_document_is_not_a_report_and_a_report_is_not_an_error() -> None:
    validator = jsonschema.Draft202012Validator(SCHEMA)
    assert not validator.is_valid({"schema_version": 3, "ok": False, "error": {"message": "x"}})
    bad_ok = {"schema_version": 3, "ok": True, "error": {"message": "x", "exit_code": 2}}
    assert not validator.is_valid(bad_ok)
    assert not validator.is_valid({"schema_version": 3, "ok": False, "wheels": [],
                                   "error": {"message": "x", "exit_code": 2}})
    assert validator.is_valid({"schema_version": 3, "ok": True, "wheels": []})
