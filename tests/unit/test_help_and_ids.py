"""``matrix --ids`` prints one build id per line (cibuildwheel's --print-build-identifiers),
the filters applied; every subcommand's ``--help`` has a description and its exit codes."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from toolkit.cli.main import SUBCOMMAND_MODULES, command_name, main

ROOT = Path(__file__).resolve().parents[2]
# package-version-<cp3XY, cp3XYt, or an abi3 wheel's cp3XY-abi3>-rocm<release>
BUILD_ID = re.compile(r"^[a-z0-9_]+-[0-9][0-9a-z.]*-cp3\d+(t|-abi3)?-rocm[0-9.]+$")


def _toolkit(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "toolkit", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


def test_ids_one_per_line_are_the_json_builds() -> None:
    ids = _toolkit("matrix", "--ids")
    assert ids.returncode == 0, ids.stderr
    lines = ids.stdout.splitlines()
    doc = json.loads(_toolkit("matrix", "--format", "json").stdout)
    assert lines == [b["id"] for b in doc]  # the same builds, in the same order
    assert len(set(lines)) == len(lines) and all(BUILD_ID.match(x) for x in lines), lines[:5]


def test_ids_honour_the_filters_and_invoke_prints_the_same() -> None:
    filters = ["--package", "apex", "--rocm", "7.0", "--python", "3.12"]
    res = _toolkit("matrix", "--ids", *filters)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines and all(x.startswith("apex-") and x.endswith("-cp312-rocm7.0") for x in lines)
    every = _toolkit("matrix", "--ids").stdout.splitlines()
    assert lines == [x for x in every if x.startswith("apex-") and x.endswith("-cp312-rocm7.0")]
    inv = subprocess.run([sys.executable, "-m", "invoke", "-r", str(ROOT), "matrix", "--ids",
                          *filters], capture_output=True, text=True, timeout=120)
    assert inv.returncode == 0 and inv.stdout == res.stdout, inv.stderr


@pytest.mark.parametrize("extra", [["--format", "github"], ["--trigger", "push"],
                                   ["--explain", "apex-1.8.0-cp312-rocm7.0"]])
def test_ids_refuses_options_of_other_outputs(extra: list[str]) -> None:
    res = _toolkit("matrix", "--ids", *extra)
    assert res.returncode == 2 and res.stdout == ""
    assert len(res.stderr.splitlines()) == 1, res.stderr
    assert "--ids" in res.stderr or extra[0] in res.stderr, res.stderr


def _readme_codes() -> set[int]:
    text = (ROOT / "README.md").read_text(encoding="utf-8").split("## Exit codes", 1)[1]
    return {int(m) for m in re.findall(r"^\| (\d+) \|", text, re.M)}


@pytest.mark.parametrize("command", [command_name(m) for m in SUBCOMMAND_MODULES])
def test_every_help_has_a_description_and_exit_codes(command: str,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main([command, "--help"])
    assert stop.value.code == 0
    out = capsys.readouterr().out
    paragraphs = out.split("\n\n")
    assert paragraphs[0].startswith(f"usage: python -m toolkit {command}")
    description = paragraphs[1]
    assert not description.lstrip().startswith(("options:", "positional arguments:")), out
    assert len(description.split()) >= 8, description  # a sentence, not a word
    codes_line = " ".join(out.split("exit codes:", 1)[1].split())
    codes = {int(c) for c in re.findall(r"(?:^|, )(\d+) ", codes_line)}
    assert 0 in codes and 2 in codes, codes_line
    assert codes <= _readme_codes(), codes - _readme_codes()
