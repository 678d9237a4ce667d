"""A ``--source`` project whose build requirements cannot be installed (issue 29, class 4):
one line naming the requirement and the index, exit 11; an index that cannot be reached is
exit 8 (``SourceUnreachable``), naming it. Real uv and pip, a real index on 127.0.0.1 (the
test doubles' server, holding no such project) and a dead port."""

from __future__ import annotations

import contextlib
import io
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.doubles.index import LocalIndex, serve
from toolkit.cli.main import main
from toolkit.core.errors import BuildRequirementsUnavailable, SourceUnreachable
from toolkit.env.buildreqs import install_failure

MISSING = "no-such-pkg-i29"


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalIndex]:
    """A real simple index on 127.0.0.1 that holds one project page, none for MISSING."""
    root = tmp_path_factory.mktemp("index")
    (root / "simple" / "other").mkdir(parents=True)
    (root / "simple" / "index.html").write_text('<a href="other/">other</a>\n')
    (root / "simple" / "other" / "index.html").write_text("<html></html>\n")
    served = serve(root)
    yield served
    served.close()


@pytest.fixture(scope="module")
def dead() -> str:
    """An index URL on a port where nothing listens (bound, then closed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/simple"


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> str:
    where = tmp_path_factory.mktemp("venv") / "v"
    subprocess.run([sys.executable, "-m", "uv", "venv", "-q", str(where)], check=True)
    return str(where / "bin" / "python")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project whose only build requirement is MISSING (an in-tree backend: nothing else
    to install)."""
    p = tmp_path / "proj"
    p.mkdir()
    (p / "pyproject.toml").write_text(
        f'[build-system]\nrequires = ["{MISSING}"]\nbuild-backend = "backend"\n'
        'backend-path = ["."]\n[project]\nname = "p"\nversion = "0.1"\n')
    (p / "backend.py").write_text("def build_wheel(*a, **k):\n    raise SystemExit(1)\n")
    return p


def _uv(venv: str, index: str, *reqs: str) -> str:
    env = {**os.environ, "UV_HTTP_RETRIES": "0", "UV_NO_CACHE": "1"}
    res = subprocess.run([sys.executable, "-m", "uv", "pip", "install", "--python", venv,
                          "--index-url", index, *reqs], capture_output=True, text=True,
                         env=env, timeout=120)
    assert res.returncode != 0, res.stdout + res.stderr
    return res.stdout + res.stderr


def _pip(venv: str, index: str, *reqs: str) -> str:
    env = {**os.environ, "PIP_RETRIES": "1", "PIP_TIMEOUT": "5", "PIP_CONFIG_FILE": os.devnull,
           "PIP_FIND_LINKS": "", "PIP_NO_INPUT": "1"}
    res = subprocess.run([sys.executable, "-m", "pip", "--python", venv, "install",
                          "--index-url", index, *reqs], capture_output=True, text=True,
                         env=env, timeout=120)
    assert res.returncode != 0, res.stdout + res.stderr
    return res.stdout + res.stderr


@pytest.mark.parametrize("tool", [_uv, _pip])
def test_an_unknown_requirement_names_it_and_the_index(tool: object, venv: str,
                                                       index: LocalIndex) -> None:
    url = index.url + "simple"
    out = tool(venv, url, MISSING)  # type: ignore[operator]
    err = install_failure(out, [MISSING], [url], "the project at /p")
    assert isinstance(err, BuildRequirementsUnavailable) and err.exit_code == 11, out
    assert f"'{MISSING}'" in str(err) and url in str(err) and "\n" not in str(err)


def test_a_version_no_index_holds_names_the_requirement(venv: str, index: LocalIndex) -> None:
    url = index.url + "simple"
    out = _uv(venv, url, "other>=5")  # the project exists, no version does
    err = install_failure(out, ["other>=5"], [url], "the project at /p")
    assert isinstance(err, BuildRequirementsUnavailable) and "'other" in str(err), out


@pytest.mark.parametrize("tool", [_uv, _pip])
def test_a_dead_index_is_unreachable_exit_8(tool: object, venv: str, dead: str) -> None:
    out = tool(venv, dead, MISSING)  # type: ignore[operator]
    err = install_failure(out, [MISSING], [dead], "the project at /p")
    assert isinstance(err, SourceUnreachable) and err.exit_code == 8, out
    assert dead in str(err) and "Connection refused" in str(err), str(err)


def test_other_failures_stay_failed_steps() -> None:
    out = "error: Failed to build `x @ file:///x`\n  cause: The build backend returned an error"
    assert install_failure(out, ["x"], ["https://pypi.org/simple"], "p") is None


def _demo(argv: list[str]) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, err.getvalue()


def test_demo_source_with_an_unknown_requirement_is_exit_11(
        project: Path, index: LocalIndex, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI, through pypa/build's isolated environment and the real installer (uv)."""
    url = index.url + "simple"
    monkeypatch.setenv("UV_DEFAULT_INDEX", url)
    monkeypatch.setenv("PIP_INDEX_URL", url)
    monkeypatch.setenv("CI", "true")
    code, err = _demo(["demo", "--source", str(project), "--workdir", str(tmp_path / "w"),
                       "--cpu", "--no-smoke"])
    lines = err.strip().splitlines()
    assert code == 11 and len(lines) == 1, err
    assert lines[0].startswith("error: ") and f"'{MISSING}'" in lines[0] and url in lines[0]
    assert "Traceback" not in err


def test_demo_source_with_a_dead_index_is_exit_8(project: Path, dead: str, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UV_DEFAULT_INDEX", dead)
    monkeypatch.setenv("PIP_INDEX_URL", dead)
    monkeypatch.setenv("UV_HTTP_RETRIES", "0")
    monkeypatch.setenv("CI", "true")
    code, err = _demo(["demo", "--source", str(project), "--workdir", str(tmp_path / "w"),
                       "--cpu", "--no-smoke"])
    lines = err.strip().splitlines()
    assert code == 8 and len(lines) == 1, err
    assert dead in lines[0] and "cannot be reached" in lines[0], lines
