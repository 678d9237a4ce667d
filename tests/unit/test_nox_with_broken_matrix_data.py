"""``noxfile.py`` when the matrix data does not load (README "## Exit codes": 3, bad data):
asked only for sessions that need no data, nox goes on after one warning line that names the
problem and says the build/smoke/lock sessions are missing until it is fixed; asked for
anything else (``nox -l``, a matrix session), the one ``error:`` line and exit 3, no
traceback. The data is a copy of the real data with one file broken; nox's own option parser
reads the command line."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import nox
import pytest

from toolkit.cli import noxsupport


@pytest.fixture
def broken(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    from toolkit.data.matrix import data_dir

    data = tmp_path / "data"
    shutil.copytree(data_dir(), data, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    (data / "rocm.toml").write_text("[releases\n")  # not TOML
    monkeypatch.setenv("TOOLKIT_DATA_DIR", str(data))
    monkeypatch.setattr(nox.options, "sessions", None)
    return data


def test_data_free_sessions_go_on_after_one_warning(broken: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    before = dict(nox.registry.get())
    monkeypatch.setattr(sys, "argv", ["nox", "-s", "tests", "lint"])
    noxsupport.register_matrix_sessions(["tests", "lint"])
    err = capsys.readouterr().err
    assert err.startswith("warning: ") and err.count("\n") == 1
    assert "rocm.toml" in err
    assert err.endswith(" (build/smoke/lock sessions are not registered until it is fixed)\n")
    assert dict(nox.registry.get()) == before


@pytest.mark.parametrize("argv", [["nox", "-l"], ["nox", "-s", "tests", "build-3.12-rocm7.0"]])
def test_anything_else_is_the_error_line_and_exit_3(broken: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str],
                                                    argv: list[str]) -> None:
    monkeypatch.setattr(sys, "argv", argv)
    with pytest.raises(SystemExit) as stop:
        noxsupport.register_matrix_sessions(["tests", "lint"])
    assert stop.value.code == 3
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "rocm.toml" in err and err.count("\n") == 1
