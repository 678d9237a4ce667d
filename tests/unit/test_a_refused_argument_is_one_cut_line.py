"""An argument argparse refuses is named on one line (README: bad input is one line, exit 2):
the outside value's credentials masked and its control characters escaped, the message cut
after 1000 characters with an ellipsis and its full length (``… (N chars)``), so a
2000-character value cannot flood the terminal or a CI log."""

from __future__ import annotations

import re

import pytest

from toolkit.cli.main import main


def _refusal(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("usage: python -m toolkit")
    assert len(err) == 2
    return err[1]


def test_a_long_value_is_cut_after_1000_characters(capsys: pytest.CaptureFixture[str]) -> None:
    line = _refusal(["x" * 2000], capsys)
    m = re.fullmatch(r"python -m toolkit: error: (.*)… \((\d+) chars\)", line)
    assert m, line[:120]
    assert m[1] == ("argument COMMAND: invalid choice: '" + "x" * 2000)[:1000]
    assert int(m[2]) > 2000 + len("argument COMMAND: invalid choice: ''")


def test_a_value_with_credentials_and_control_bytes(capsys: pytest.CaptureFixture[str]) -> None:
    line = _refusal(["https://alice:s3cret@h.example/\x1b[2Jx"], capsys)
    assert line.startswith("python -m toolkit: error: argument COMMAND: invalid choice: "
                           "'https://***@h.example/\\x1b[2Jx'")
    assert "s3cret" not in line and "alice" not in line and "\x1b" not in line


def test_the_json_error_document_carries_the_same_cut_masked_line(
        capsys: pytest.CaptureFixture[str]) -> None:
    import json

    with pytest.raises(SystemExit):
        main(["report", "--json", "--u=https://bob:pw@h.example/" + "y" * 2000])
    message = json.loads(capsys.readouterr().out)["error"]["message"]
    m = re.fullmatch(r"python -m toolkit report: (.*)… \((\d+) chars\)", message)
    assert m, message[:120]
    assert m[1] == ("unrecognized arguments: --u=https://***@h.example/" + "y" * 2000)[:1000]
