"""An environment re-created for another definition is set aside, not deleted
(toolkit.env.venvs.set_aside / take_back), so a failed attempt never costs the earlier one."""

from __future__ import annotations

import os
from pathlib import Path

from toolkit.env import venvs


def _ready(env: Path, digest: str) -> Path:
    (env / "bin").mkdir(parents=True)
    python = env / "bin" / "python"
    python.write_text("#!/bin/sh\n")
    python.chmod(0o755)
    venvs.mark_ready(env, digest, values={}, described={})
    return env


def test_a_ready_environment_waits_and_comes_back(tmp_path: Path) -> None:
    env = _ready(tmp_path / "3.12-rocm7.1", "nightly")
    venvs.set_aside(env)
    assert not env.exists() and venvs.is_ready(venvs.previous(env), "nightly")
    env.mkdir()  # the failed attempt's half-made environment
    (env / "half").write_text("x")
    assert not venvs.take_back(env, "stable"), "not the definition set aside"
    assert venvs.take_back(env, "nightly")
    assert venvs.is_ready(env, "nightly") and not (env / "half").exists()
    assert not venvs.previous(env).exists()


def test_an_environment_that_is_not_ready_is_removed_not_kept(tmp_path: Path) -> None:
    kept = _ready(tmp_path / "env", "a")
    venvs.set_aside(kept)  # kept as .previous
    half = tmp_path / "env"
    half.mkdir()
    venvs.set_aside(half)  # no stamp: removed, and the one kept stays
    assert not half.exists() and venvs.is_ready(venvs.previous(half), "a")


def test_a_symlink_set_aside_is_never_taken(tmp_path: Path) -> None:
    elsewhere = _ready(tmp_path / "elsewhere", "a")
    env = tmp_path / "env"
    os.symlink(elsewhere, venvs.previous(env))
    assert not venvs.take_back(env, "a")
    assert venvs.is_ready(elsewhere, "a")
