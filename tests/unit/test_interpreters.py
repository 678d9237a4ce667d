"""Interpreter discovery against fake pyenv / manylinux / PATH folders (real subprocesses)."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from toolkit.core.errors import EnvironmentProblem
from toolkit.env.interpreters import candidates, clear_cache, find, parse_request


def fake_python(path: Path, version: str, *, free_threaded: bool = False, works: bool = True) -> Path:
    """An executable that answers the probe like a real interpreter would."""
    path.parent.mkdir(parents=True, exist_ok=True)
    major, minor, patch = (int(x) for x in version.split("."))
    payload = json.dumps({"version": [major, minor, patch], "free_threaded": free_threaded,
                          "executable": str(path)})
    body = f"echo '{payload}'" if works else "echo 'pyenv: command not found' >&2; exit 127"
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


@pytest.fixture(autouse=True)
def _fresh() -> None:
    clear_cache()


def test_pyenv_highest_patch_wins(tmp_path: Path) -> None:
    root = tmp_path / "pyenv"
    fake_python(root / "versions/3.12.1/bin/python3.12", "3.12.1")
    fake_python(root / "versions/3.12.10/bin/python3.12", "3.12.10")
    fake_python(root / "versions/3.11.7/bin/python3.11", "3.11.7")
    found = find("3.12", path_env="", pyenv_root=root, manylinux_root=tmp_path / "none", uv="")
    assert found.version == "3.12.10"
    assert found.where == "pyenv"
    assert found.path.endswith("versions/3.12.10/bin/python3.12")


def test_broken_shim_on_path_is_skipped(tmp_path: Path) -> None:
    shims = tmp_path / "shims"
    fake_python(shims / "python3.12", "3.12.1", works=False)
    root = tmp_path / "pyenv"
    fake_python(root / "versions/3.12.1/bin/python3.12", "3.12.1")
    found = find("3.12", path_env=str(shims), pyenv_root=root, manylinux_root=tmp_path, uv="")
    assert found.where == "pyenv"


def test_path_first(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    fake_python(bin_dir / "python3.10", "3.10.13")
    found = find("3.10", path_env=str(bin_dir), pyenv_root=tmp_path / "x", manylinux_root=tmp_path,
                 uv="")
    assert (found.where, found.version) == ("PATH", "3.10.13")


def test_manylinux_layout_and_free_threaded(tmp_path: Path) -> None:
    ml = tmp_path / "opt-python"
    fake_python(ml / "cp313-cp313/bin/python", "3.13.0")
    fake_python(ml / "cp313-cp313t/bin/python", "3.13.0", free_threaded=True)
    normal = find("3.13", path_env="", pyenv_root=tmp_path / "x", manylinux_root=ml, uv="")
    threaded = find("3.13t", path_env="", pyenv_root=tmp_path / "x", manylinux_root=ml, uv="")
    assert normal.path.endswith("cp313-cp313/bin/python") and not normal.free_threaded
    assert threaded.path.endswith("cp313-cp313t/bin/python") and threaded.free_threaded


def test_wrong_build_is_rejected(tmp_path: Path) -> None:
    # a folder named 3.13.0t whose binary is NOT free-threaded must not satisfy 3.13t
    root = tmp_path / "pyenv"
    fake_python(root / "versions/3.13.0t/bin/python3.13t", "3.13.0", free_threaded=False)
    with pytest.raises(EnvironmentProblem) as err:
        find("3.13t", path_env="", pyenv_root=root, manylinux_root=tmp_path, uv="")
    assert "is 3.13.0)" in str(err.value)


def test_missing_interpreter_says_where_and_how(tmp_path: Path) -> None:
    with pytest.raises(EnvironmentProblem) as err:
        find("3.9", path_env="", pyenv_root=tmp_path / "pyenv", manylinux_root=tmp_path / "ml", uv="")
    msg = str(err.value)
    assert err.value.exit_code == 4
    assert "python3.9 on PATH" in msg
    assert f"{tmp_path}/pyenv/versions/3.9.*/bin/python3.9" in msg
    assert f"{tmp_path}/ml/cp39-cp39/bin/python" in msg
    assert "uv python install 3.9" in msg and "pyenv install 3.9" in msg
    assert "\n" not in msg


def test_candidate_order(tmp_path: Path) -> None:
    fake_python(tmp_path / "bin/python3.12", "3.12.1")
    fake_python(tmp_path / "pyenv/versions/3.12.1/bin/python3.12", "3.12.1")
    fake_python(tmp_path / "ml/cp312-cp312/bin/python", "3.12.1")
    got = [w for w, _ in candidates("3.12", path_env=str(tmp_path / "bin"),
                                    pyenv_root=tmp_path / "pyenv", manylinux_root=tmp_path / "ml",
                                    uv="")]
    assert got == ["PATH", "pyenv", "manylinux"]


def test_bad_request() -> None:
    from toolkit.core.errors import UsageError

    with pytest.raises(UsageError):
        parse_request("3")
    assert parse_request("3.13t") == (3, 13, True)


def test_real_pyenv_on_this_machine() -> None:
    pyenv = Path.home() / ".pyenv" / "versions"
    if not any(pyenv.glob("3.12.*")):
        pytest.skip("no pyenv 3.12 here")
    found = find("3.12")
    assert found.version.startswith("3.12.")
