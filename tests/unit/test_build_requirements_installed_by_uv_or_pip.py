"""How a project's isolated build environment gets its requirements (``project._install_into``):
the real uv, or the real pip where pypa/build has no uv, installs them into that environment's
interpreter, each command written to the log first; an index holding no such project is one
line naming the requirement, the index and whose requirement it is (exit 11). The wheel
installed is made here by hand as PEP 427 describes (RECORD with sha256 digests)."""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import io
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from toolkit.core.errors import BuildRequirementsUnavailable
from toolkit.env import project


def _wheel(folder: Path) -> Path:
    files = {"reqdemo.py": b"ANSWER = 42\n",
             "reqdemo-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: reqdemo\nVersion: 1.0\n",
             "reqdemo-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\n"
                                            b"Tag: py3-none-any\n"}
    def digest(data: bytes) -> str:
        return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()

    record = "".join(f"{name},sha256={digest(data)},{len(data)}\n" for name, data in files.items())
    record += "reqdemo-1.0.dist-info/RECORD,,\n"
    path = folder / "reqdemo-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in files.items():
            zf.writestr(name, data)
        zf.writestr("reqdemo-1.0.dist-info/RECORD", record)
    return path


@pytest.fixture
def venv(tmp_path: Path) -> str:
    where = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "uv", "venv", "-q", str(where)], check=True)
    return str(where / "bin" / "python")


@pytest.fixture
def empty_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    root = tmp_path / "index"
    root.mkdir()
    (root / "index.html").write_text("<html></html>\n")
    url = root.as_uri()
    for var in ("UV_DEFAULT_INDEX", "PIP_INDEX_URL"):
        monkeypatch.setenv(var, url)
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("PIP_FIND_LINKS", "")
    monkeypatch.setenv("PIP_NO_INPUT", "1")
    monkeypatch.delenv("UV_INDEX", raising=False)
    monkeypatch.delenv("UV_EXTRA_INDEX_URL", raising=False)
    monkeypatch.delenv("PIP_EXTRA_INDEX_URL", raising=False)
    return url


@pytest.mark.parametrize("installer", ["uv", "pip"])
def test_the_requirements_land_in_the_environment_and_the_command_in_the_log(
        tmp_path: Path, venv: str, empty_index: str, installer: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(project, "_installer", lambda: installer)
    log = io.StringIO()
    install = project._install_into(venv, "/src", log)
    install([])  # nothing to install: nothing runs
    assert log.getvalue() == ""
    wheel = _wheel(tmp_path)
    install([str(wheel)])
    said = subprocess.run([venv, "-c", "import reqdemo; print(reqdemo.ANSWER)"], capture_output=True,
                          text=True)
    assert said.stdout == "42\n", said.stderr
    first = log.getvalue().splitlines()[0]
    expected = (f" pip install --python {venv} {wheel}" if installer == "uv"
                else f" -m pip --python {venv} install --no-warn-script-location {wheel}")
    assert first.startswith("$ ") and first.endswith(expected)


def test_a_requirement_the_index_lacks_is_one_line_naming_it(venv: str, empty_index: str,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(project, "_installer", lambda: "uv")  # pip's words: test_build_requirements.py
    install = project._install_into(venv, "/src/p\x1b", io.StringIO())
    with pytest.raises(BuildRequirementsUnavailable) as caught:
        install(["no-such-req-zz"])
    line = str(caught.value)
    assert line.startswith("the build requirement 'no-such-req-zz' of the project at /src/p\\x1b cannot be "
                           "installed: the index "), line
    assert empty_index.rstrip("/") in line and caught.value.exit_code == 11


def test_uv_is_chosen_when_its_package_or_its_command_is_there(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The ``uv`` package beside the toolkit is enough (pypa/build finds its binary), uv on
    PATH is enough; neither: pip."""
    monkeypatch.setenv("PATH", str(tmp_path))  # no uv on PATH
    if importlib.util.find_spec("uv") is None:
        pytest.skip("the uv package is not installed here")
    assert project._installer() == "uv"
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None)  # no uv package
    assert project._installer() == "pip"
    (tmp_path / "uv").write_text("#!/bin/sh\n")
    (tmp_path / "uv").chmod(0o755)
    assert project._installer() == "uv"


def test_an_installer_that_cannot_be_started_is_an_error_naming_it(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """uv gone from where it was found (the one injection: ``_uv``'s answer, a path that does
    not exist): the error names that path and that it was not found, nothing is installed."""
    gone = tmp_path / "gone" / "uv"
    monkeypatch.setattr(project, "_installer", lambda: "uv")
    monkeypatch.setattr(project, "_uv", lambda: str(gone))
    install = project._install_into(sys.executable, "/src", io.StringIO())
    with pytest.raises(OSError) as caught:
        install(["anything"])
    said = str(caught.value)
    assert said.startswith(f"{gone}: command not found"), said


def test_any_other_installer_failure_names_the_installer_its_exit_status_and_the_requirements(
        venv: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A requirement uv cannot even parse (PEP 508: no spaces inside a name) is neither an
    unreachable index nor a missing requirement: a failed step naming uv, its non-zero exit
    status and what it was asked to install, in the order asked."""
    monkeypatch.setattr(project, "_installer", lambda: "uv")
    install = project._install_into(venv, "/src", io.StringIO())
    with pytest.raises(project.HookFailed) as caught:
        install(["reqdemo", "not a valid req!!"])
    said = str(caught.value)
    assert re.fullmatch(r"uv exited [1-9]\d* installing reqdemo, not a valid req!!", said), said
