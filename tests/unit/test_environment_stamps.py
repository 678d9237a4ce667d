"""A build environment's stamp (toolkit/env/venvs.py's module text): ready only when the stamp
holds the digest of everything that defines it and its python runs; what the stamp records;
how an environment is removed. Real folders, real JSON; expectations hand-written."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from toolkit import __version__
from toolkit.env import venvs

STEPS = [("create-env", ("uv", "venv"), {"A": "1", "B": "2"}, ("X", "Y"))]


def _digest(steps: list[tuple[str, tuple[str, ...], dict[str, str], tuple[str, ...]]] = STEPS,
            lock: str | None = None) -> str:
    return venvs.digest(steps, interpreter="/py 3.12.1", lock_text=lock, toolkit_version="1.0")


def test_the_digest_is_a_sha256_that_each_part_of_a_step_changes() -> None:
    base = _digest()
    assert len(base) == 64 and int(base, 16) >= 0
    assert _digest([("create-envs", ("uv", "venv"), {"A": "1", "B": "2"}, ("X", "Y"))]) != base
    assert _digest([("create-env", ("uv", "venv"), {"A": "1", "B": "3"}, ("X", "Y"))]) != base
    assert _digest([("create-env", ("uv", "venv"), {"A": "1", "B": "2"}, ("X",))]) != base
    assert _digest([("create-env", ("venv", "uv"), {"A": "1", "B": "2"}, ("X", "Y"))]) != base


def test_the_order_of_a_step_s_variables_and_unset_names_does_not_matter() -> None:
    assert _digest([("create-env", ("uv", "venv"), {"B": "2", "A": "1"}, ("Y", "X"))]) == _digest()


def test_no_lock_and_an_empty_lock_are_different_definitions() -> None:
    assert _digest(lock=None) != _digest(lock="")
    assert _digest(lock="a==1\n") != _digest(lock="a==2\n")


def _env(tmp_path: Path, python: bool = True) -> Path:
    env = tmp_path / "env"
    (env / "bin").mkdir(parents=True)
    if python:
        (env / "bin" / "python").write_text("#!/bin/sh\n")
        (env / "bin" / "python").chmod(0o755)
    return env


def test_the_stamp_records_format_digest_toolkit_and_masked_values(tmp_path: Path) -> None:
    env = _env(tmp_path)
    path = venvs.mark_ready(env, "d1", values={"INDEX": "https://me:secret@h/simple?t=tok"},
                            described={"argv": ["--index-url", "https://me:secret@h/"], "n": 3})
    assert path == env / ".toolkit-env.json"
    assert json.loads(path.read_text(encoding="utf-8")) == {
        "format": 1, "digest": "d1", "toolkit": __version__,
        "values": {"INDEX": "https://***@h/simple?t=***"},
        "described": {"argv": ["--index-url", "https://***@h/"], "n": 3}}
    assert venvs.is_ready(env, "d1") == json.loads(path.read_text())


def test_an_environment_whose_python_does_not_run_is_not_ready(tmp_path: Path) -> None:
    env = _env(tmp_path, python=False)
    venvs.mark_ready(env, "d1", values={}, described={})
    assert venvs.is_ready(env, "d1") is None
    (env / "bin" / "python").write_text("")
    (env / "bin" / "python").chmod(0o644)
    assert venvs.is_ready(env, "d1") is None


@pytest.mark.parametrize("text", ["[1, 2]", "not json", "", "[" * 100_000, '{"digest": "d1"'])
def test_a_stamp_that_is_no_json_object_is_no_stamp(tmp_path: Path, text: str) -> None:
    env = _env(tmp_path)
    (env / venvs.STAMP).write_text(text)
    assert venvs.read_stamp(env) is None
    assert venvs.is_ready(env, "d1") is None


def test_a_stamp_without_the_digest_or_a_folder_in_its_place_is_not_ready(tmp_path: Path) -> None:
    env = _env(tmp_path)
    (env / venvs.STAMP).write_text("{}")
    assert venvs.read_stamp(env) == {}
    assert venvs.is_ready(env, "") is None
    (env / venvs.STAMP).unlink()
    (env / venvs.STAMP).mkdir()
    assert venvs.read_stamp(env) is None


def test_removing_a_symlink_or_a_file_leaves_what_it_pointed_to(tmp_path: Path) -> None:
    target = _env(tmp_path)
    venvs.mark_ready(target, "d1", values={}, described={})
    link = tmp_path / "link"
    os.symlink(target, link)
    venvs.remove(link)
    assert not os.path.lexists(link) and venvs.is_ready(target, "d1") is not None
    plain = tmp_path / "plain"
    plain.write_text("x")
    venvs.remove(plain)
    assert not plain.exists()
    venvs.remove(tmp_path / "nothing")  # nothing there: nothing to do
    venvs.remove(target)
    assert not target.exists()


def test_the_environment_set_aside_sits_beside_it() -> None:
    assert venvs.previous(Path("/w/envs/3.12-rocm7.0")) == Path("/w/envs/3.12-rocm7.0.previous")
