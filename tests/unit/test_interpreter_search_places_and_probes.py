"""Finding a session's Python (toolkit/env/interpreters.py's module text): the fourth place is
the real ``uv python find --no-python-downloads X.Y``; each candidate is run once (cached per
file) and verified; a miss is one line naming every place, every rejected candidate and how
to get one. Interpreters are the real ones of this machine or sh scripts answering the probe."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from toolkit.core.errors import EnvironmentProblem, UsageError
from toolkit.env import interpreters
from toolkit.env.interpreters import Probe, candidates, clear_cache, find, probe

UV = shutil.which("uv", path=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
needs_uv = pytest.mark.skipif(UV is None, reason="uv is not installed")
REAL = (sys.version_info.major, sys.version_info.minor, sys.version_info.micro)
REQUEST = f"{REAL[0]}.{REAL[1]}"


@pytest.fixture(autouse=True)
def _fresh() -> None:
    clear_cache()


def _answering(path: Path, answer: str, counter: Path | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    count = f"echo x >> {counter}\n" if counter else ""
    path.write_text(f"#!/bin/sh\n{count}echo '{answer}'\n")
    path.chmod(0o755)
    return path


def _probe_answer(version: list[int], free: bool) -> str:
    return json.dumps({"version": version, "free_threaded": free, "executable": "x"})


@pytest.fixture
def uv_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A PATH folder holding only ``python3`` (the real interpreter): ``python3.X`` is not on
    it, so only uv can find it; no venv nor managed install for uv to find instead."""
    folder = tmp_path / "only-python3"
    folder.mkdir()
    os.symlink(os.path.realpath(sys.executable), folder / "python3")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    monkeypatch.delenv("UV_PYTHON", raising=False)
    monkeypatch.setenv("UV_PYTHON_INSTALL_DIR", str(tmp_path / "uv-pythons"))
    return folder


@needs_uv
def test_uv_finds_what_is_only_on_its_search_path(tmp_path: Path, uv_alone: Path) -> None:
    assert UV is not None
    found = find(REQUEST, path_env=str(uv_alone), pyenv_root=tmp_path / "no-pyenv",
                 manylinux_root=tmp_path / "no-ml", uv=UV)
    assert (found.where, found.version, found.free_threaded) == ("uv", ".".join(map(str, REAL)), False)
    assert os.path.realpath(found.path) == os.path.realpath(sys.executable)


@needs_uv
def test_uv_never_downloads_and_a_miss_adds_no_candidate(tmp_path: Path, uv_alone: Path) -> None:
    assert UV is not None
    other = "3.5"  # no such interpreter anywhere here; uv may not fetch one
    assert list(candidates(other, path_env=str(uv_alone), pyenv_root=tmp_path / "p",
                           manylinux_root=tmp_path / "m", uv=UV)) == []
    assert not (tmp_path / "uv-pythons").exists()


def test_a_uv_that_cannot_run_adds_no_candidate(tmp_path: Path) -> None:
    assert list(candidates("3.12", path_env="", pyenv_root=tmp_path / "p", manylinux_root=tmp_path / "m",
                           uv=str(tmp_path / "no-uv"))) == []


def test_uv_is_asked_exactly_for_the_request_without_downloads(tmp_path: Path) -> None:
    said = tmp_path / "args"
    uv = tmp_path / "uv"
    uv.write_text(f'#!/bin/sh\nprintf "%s|" "$@" > {said}\necho "  noise"\necho /py/bin/python3.12t\n')
    uv.chmod(0o755)
    got = list(candidates("3.12t", path_env=str(tmp_path / "empty"), pyenv_root=tmp_path / "p",
                          manylinux_root=tmp_path / "m", uv=str(uv)))
    assert got == [("uv", "/py/bin/python3.12t")]
    assert said.read_text() == "python|find|--no-python-downloads|3.12t|"


def test_a_uv_that_fails_or_prints_nothing_adds_no_candidate(tmp_path: Path) -> None:
    failing = tmp_path / "uv1"
    failing.write_text("#!/bin/sh\necho /py/bin/python3.12\nexit 2\n")
    silent = tmp_path / "uv2"
    silent.write_text("#!/bin/sh\nexit 0\n")
    for uv in (failing, silent):
        uv.chmod(0o755)
        assert list(candidates("3.12", path_env="", pyenv_root=tmp_path / "p", manylinux_root=tmp_path / "m",
                               uv=str(uv))) == []


def test_the_real_interpreter_probes_as_itself() -> None:
    assert probe(sys.executable) == Probe(REAL, False)


def test_a_probe_runs_a_file_once_until_it_changes(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    py = _answering(tmp_path / "python3.12", _probe_answer([3, 12, 4], False), runs)
    assert probe(str(py)) == Probe((3, 12, 4), False)
    assert probe(str(py)) == Probe((3, 12, 4), False)
    assert runs.read_text().count("x") == 1
    _answering(py, _probe_answer([3, 12, 40], True), runs)  # another size: another key
    assert probe(str(py)) == Probe((3, 12, 40), True)
    assert runs.read_text().count("x") == 2
    clear_cache()
    probe(str(py))
    assert runs.read_text().count("x") == 3


@pytest.mark.parametrize("answer", ["not json", '{"version": [3, 12]}', '{"free_threaded": false}',
                                    '{"version": [3, "x", 1], "free_threaded": false}', "[1]"])
def test_a_probe_answer_that_is_not_a_version_is_no_interpreter(tmp_path: Path, answer: str) -> None:
    assert probe(str(_answering(tmp_path / "py", answer))) is None
    assert probe(str(tmp_path / "absent")) is None


def test_a_miss_names_every_place_every_rejected_candidate_and_how_to_get_one(tmp_path: Path) -> None:
    _answering(tmp_path / "bin" / "python3.13t", _probe_answer([3, 13, 1], True))
    broken = tmp_path / "pyenv" / "versions" / "3.13.2t" / "bin" / "python3.13t"
    broken.parent.mkdir(parents=True)
    broken.write_text("#!/bin/sh\nexit 127\n")
    broken.chmod(0o755)
    wrong = _answering(tmp_path / "ml" / "cp313-cp313t" / "bin" / "python", _probe_answer([3, 12, 9], False))
    with pytest.raises(EnvironmentProblem) as caught:
        find("3.13t", path_env=str(tmp_path / "empty"), pyenv_root=tmp_path / "pyenv",
             manylinux_root=tmp_path / "ml", uv="")
    assert caught.value.message == (
        f"no Python 3.13t interpreter found (looked at: python3.13t on PATH; "
        f"{tmp_path}/pyenv/versions/3.13.*t/bin/python3.13t; {tmp_path}/ml/cp313-cp313t/bin/python; "
        f"uv python find 3.13t); rejected: {broken} (does not run), {wrong} (is 3.12.9)")
    assert caught.value.hint == "uv python install 3.13t, or pyenv install 3.13t"


def test_a_free_threaded_build_is_not_the_normal_one(tmp_path: Path) -> None:
    ft = _answering(tmp_path / "bin" / "python3.13", _probe_answer([3, 13, 1], True))
    with pytest.raises(EnvironmentProblem) as caught:
        find("3.13", path_env=str(tmp_path / "bin"), pyenv_root=tmp_path / "p", manylinux_root=tmp_path / "m",
             uv="")
    assert caught.value.message.endswith(f"; rejected: {ft} (is 3.13.1t)")


def test_the_pyenv_root_comes_from_pyenv_root_else_home(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path / "pr"))
    assert interpreters.places("3.12")[1] == f"{tmp_path}/pr/versions/3.12.*/bin/python3.12"
    monkeypatch.delenv("PYENV_ROOT")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert interpreters.places("3.12")[1] == f"{tmp_path}/home/.pyenv/versions/3.12.*/bin/python3.12"
    py = _answering(tmp_path / "home" / ".pyenv" / "versions" / "3.12.3" / "bin" / "python3.12",
                    _probe_answer([3, 12, 3], False))
    assert list(candidates("3.12", path_env="", manylinux_root=tmp_path / "m", uv="")) == [("pyenv", str(py))]


def test_pyenv_folders_of_other_versions_or_builds_are_not_candidates(tmp_path: Path) -> None:
    versions = tmp_path / "pyenv" / "versions"
    for name in ("3.12.1t", "3.120.1", "3.1.2", "3.12", "x3.12.1", "3.12.1-dev"):
        _answering(versions / name / "bin" / "python3.12", _probe_answer([3, 12, 1], False))
    (versions / "3.12.2" / "bin").mkdir(parents=True)  # no interpreter in it
    assert list(candidates("3.12", path_env="", pyenv_root=tmp_path / "pyenv", manylinux_root=tmp_path / "m",
                           uv="")) == []


@pytest.mark.parametrize("bad", ["3", "3.12.1", "2.7", "3.x", "py3.12", "3.12T", " 3.12"])
def test_a_request_that_is_no_version_is_named_with_the_valid_forms(bad: str) -> None:
    with pytest.raises(UsageError) as caught:
        interpreters.parse_request(bad)
    assert str(caught.value) == (f"not a Python version: {bad!r}; valid: X.Y or X.Yt (free-threaded), "
                                 "e.g. 3.12, 3.14t")


def test_pyenv_versions_are_tried_newest_patch_first_by_number(tmp_path: Path) -> None:
    versions = tmp_path / "pyenv" / "versions"
    for patch in ("2", "10", "9", "11", "1"):
        _answering(versions / f"3.12.{patch}" / "bin" / "python3.12",
                   _probe_answer([3, 12, int(patch)], False))
    got = [path for _, path in candidates("3.12", path_env="", pyenv_root=tmp_path / "pyenv",
                                          manylinux_root=tmp_path / "m", uv="")]
    assert got == [str(versions / f"3.12.{p}" / "bin" / "python3.12") for p in ("11", "10", "9", "2", "1")]
