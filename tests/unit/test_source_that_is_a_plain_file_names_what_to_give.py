"""`--source FILE` where FILE is neither a folder nor an sdist: one line (exit 2, README "Exit
codes": 2 bad usage) naming what is valid, with the project files' real names: file names are
case-sensitive on Linux, and build backends read `pyproject.toml` and `setup.py` (PEP 517/518),
so advice to give "PYPROJECT.TOML" would be wrong."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolkit.core.errors import UsageError
from toolkit.env.project import check_project


def test_a_plain_file_is_refused_naming_the_folder_or_sdist_to_give(tmp_path: Path) -> None:
    plain = tmp_path / "notes.txt"
    plain.write_text("x")
    with pytest.raises(UsageError) as caught:
        check_project(str(plain))
    msg = str(caught.value)
    assert caught.value.exit_code == 2
    assert str(plain) in msg and "\n" not in msg
    for name in ("pyproject.toml", "setup.py", ".tar.gz", ".zip", "sdist", "folder"):
        assert name in msg
