"""`python -m toolkit upstream --pr-body FILE` whose folder does not exist: refused before any
upstream repository or data file is read, in one line naming the option, the path (quoted,
as the toolkit names a bad value) and what is valid (the developer guide: "one clear line
naming what was wrong and what is valid"), exit 2 (README "## Exit codes": bad input)."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolkit.cli.main import main


def test_a_body_in_no_folder_is_one_line_naming_what_is_valid(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    body = tmp_path / "no" / "body.md"
    assert main(["upstream", str(tmp_path / "mirrors-never-read"), "--pr-body", str(body)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (f"error: --pr-body '{body}': no such folder; valid: a file in an existing, "
                   "writable folder\n")
