"""SOURCE_DATE_EPOCH is the time of the checkout's HEAD commit (reproducible-builds.org's
definition: "the last modification of something"; the commit time), also when the history
holds older commits at other times; a copy that fails names both folders. Times are set by
hand with GIT_COMMITTER_DATE (git(1), "DATE FORMATS": ``@<seconds> <offset>``)."""

from __future__ import annotations

import io
import os
import subprocess
from pathlib import Path

import pytest

from toolkit.core.errors import StepFailed
from toolkit.core.steps import CopySources, Step
from toolkit.plan.layout import Layout
from toolkit.plan.model import Options, Plan
from toolkit.plan.recipes import load_matrix
from toolkit.run import sources
from toolkit.run.context import Run


def _git(path: Path, *args: str, when: int) -> None:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid",
           "GIT_AUTHOR_DATE": f"@{when} +0000", "GIT_COMMITTER_DATE": f"@{when} +0000"}
    subprocess.run(["git", "-C", str(path), *args], check=True, capture_output=True, env=env)


def _run(tmp_path: Path) -> Run:
    plan = Plan(load_matrix().builds[0], ("gfx942",), None, (), options=Options(allow_dirty=True))
    return Run(plan, Layout(tmp_path / "work", tmp_path / "cache"), io.StringIO())


def test_the_epoch_is_heads_commit_time_not_an_older_ones(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    _git(src, "init", "-q", "-b", "main", when=0)
    for n, when in enumerate((1_600_000_000, 1_650_000_000, 1_700_000_123)):
        (src / "setup.py").write_text(f"x = {n}\n")
        _git(src, "add", "-A", when=when)
        _git(src, "commit", "-q", "-m", f"c{n}", when=when)
    run = _run(tmp_path)
    sources.copy_sources(Step("get-sources", "copy", CopySources(str(src), str(tmp_path / "wt"))), run)
    assert run.values["SOURCE_DATE_EPOCH"] == "1700000123"


def test_a_copy_that_fails_names_the_source_and_the_worktree(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "setup.py").write_text("x = 1\n")
    (tmp_path / "a-file").write_text("")  # the worktree's parent is a file: no folder there
    wt = tmp_path / "a-file" / "wt"
    with pytest.raises(StepFailed) as exc:
        sources.copy_sources(Step("get-sources", "copy", CopySources(str(src), str(wt))), _run(tmp_path))
    assert str(exc.value).startswith(f"cannot copy {src} to {wt}: ")
    assert "Not a directory" in str(exc.value)  # the OSError's own words (ENOTDIR)


def test_a_checkout_holding_a_file_named_head_still_has_its_commit_time(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    _git(src, "init", "-q", "-b", "main", when=0)
    (src / "setup.py").write_text("x = 1\n")
    # `git log HEAD` alone is ambiguous here ("both revision and filename"): `HEAD --` is not
    (src / "HEAD").write_text("a file a project may hold\n")
    _git(src, "add", "-A", when=1_700_000_456)
    _git(src, "commit", "-q", "-m", "c", when=1_700_000_456)
    run = _run(tmp_path)
    sources.copy_sources(Step("get-sources", "copy", CopySources(str(src), str(tmp_path / "wt"))), run)
    assert run.values["SHA"] != sources.NO_COMMIT
    assert run.values["SOURCE_DATE_EPOCH"] == "1700000456"
