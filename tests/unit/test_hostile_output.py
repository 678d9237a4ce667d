"""No raw control bytes from outside input on the terminal (issue 20): wheel member names,
METADATA values, manifest fields, data values and paths are escaped in text output, cut when
long; JSON output keeps them exactly (json escapes them itself)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from tests.fixtures.wheels import make_wheel
from toolkit.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
RAW = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
EVIL = "demo/\x1b[2Jx\n  ok  policy: forged.py"


def test_check_text_escapes_member_names_json_keeps_them(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    whl = make_wheel(tmp_path, "demo", "1.0", "py3-none-any",
                     {"demo/__init__.py": "", EVIL: "x = 1\n", "demo/\x1b]0;t\x07.so": b"junk"})
    code = main(["check", str(whl), "--verbose"])
    out = capsys.readouterr().out
    assert code == 1
    assert not RAW.search(out), out
    assert "\\x1b[2Jx\\n  ok  policy: forged.py" in out or "\\x1b]0;t\\x07.so" in out
    assert not any(line.startswith("  ok  policy: forged") for line in out.splitlines())
    assert main(["check", str(whl), "--json"]) == 1
    raw = capsys.readouterr().out
    names = json.dumps(json.loads(raw))
    assert json.dumps("demo/\x1b]0;t\x07.so")[1:-1] in names  # the exact name, JSON-escaped


def test_a_long_gfx_id_is_cut_with_its_length(capsys: pytest.CaptureFixture[str]) -> None:
    gfx = "gfx9" + "x" * 9_999
    assert len(gfx) == 10_003
    assert main(["plan", "apex-1.8.0-cp312-rocm7.0", "--gfx", gfx]) == 2
    err = capsys.readouterr().err
    assert "…' (10003 chars)" in err and len(err) < 600, err


def test_a_data_value_with_control_characters_is_escaped(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "data"
    shutil.copytree(ROOT / "toolkit" / "data", data)
    gpus = data / "gpus.toml"
    text = gpus.read_text().replace('targets = ["gfx942"]', 'targets = ["gfx\\u001b[2J\\n942"]')
    gpus.write_text(text)
    monkeypatch.setenv("TOOLKIT_DATA_DIR", str(data))
    code = main(["matrix"])
    captured = capsys.readouterr()
    assert code == 3 and "gpus.toml" in captured.err, captured
    assert not RAW.search(captured.out + captured.err), captured
    assert "\\x1b[2J\\n942" in captured.err, captured.err


def test_a_manifest_field_with_control_characters_is_escaped(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps({"build": {"id": "x\x1b[2J\nforged", "package": "p\x1b",
                                          "version": "1", "python": "3.11", "rocm": "7.0"}}))
    assert main(["repro", str(path), "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert not RAW.search(err) and err.count("\n") == 1, err
    assert "\\x1b[2J\\nforged" in err


@pytest.mark.parametrize("flag, value, why", [
    ("--max-member-size", "-5", "a size is not negative"),
    ("--max-total-size", "-1M", "a size is not negative"),
    ("--max-member-size", "1e400G", "bad size"),
    ("--max-ratio", "-3", "expected a positive number"),
    ("--max-ratio", "nan", "expected a positive number"),
    ("--jobs", "0", "expected 1 or more"),
])
def test_negative_sizes_and_budgets_are_refused(tmp_path: Path, flag: str, value: str, why: str,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    whl = make_wheel(tmp_path, "demo", "1.0", "py3-none-any", {"demo/__init__.py": ""})
    with pytest.raises(SystemExit) as exc:
        main(["check", str(whl), f"{flag}={value}"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert why in err and "Traceback" not in err, err
