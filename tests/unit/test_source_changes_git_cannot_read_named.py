"""A checkout whose changes git itself cannot read is a failed step (README: exit 5, "a build
step (or a command it runs) failed") in one line naming the folder and which git failed, never
taken for a clean checkout. Real git on real damage:

- an index file git cannot parse (``fatal: index file smaller than expected``): HEAD still
  resolves, but ``git diff HEAD`` / ``git ls-files`` fail, so the changes cannot be listed;
- a committed blob gone from the object store while the change is staged: ``git diff HEAD
  --name-only`` compares object ids and lists the file, ``git diff HEAD --binary`` needs the
  old content and fails (``fatal: unable to read <oid>``)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from toolkit.core.errors import StepFailed
from toolkit.env.project import source_changes

ENV = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e.invalid",
       "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e.invalid",
       "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, env=ENV, check=True, capture_output=True,
                          text=True).stdout.strip()


def _repo(root: Path) -> Path:
    root.mkdir()
    (root / "setup.py").write_text("v = 1\n")  # not empty: git knows the empty blob built in
    _git(root, "init", "-q")
    _git(root, "add", ".")
    _git(root, "commit", "-qm", "one")
    return root


def test_an_unreadable_index_names_the_folder_and_that_git_status_fails(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "r")
    (repo / ".git" / "index").write_bytes(b"junk\n")
    with pytest.raises(StepFailed) as caught:
        source_changes(repo)
    assert caught.value.exit_code == 5
    assert caught.value.message.startswith(f"git cannot list the changes of {repo} (")
    assert caught.value.message.endswith(" (git status fails there)")


def test_a_diff_git_cannot_write_names_git_diff_head_and_the_folder(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "r")
    old = _git(repo, "rev-parse", "HEAD:setup.py")
    (repo / "setup.py").write_text("v = 2\n")
    _git(repo, "add", "setup.py")
    (repo / ".git" / "objects" / old[:2] / old[2:]).unlink()
    with pytest.raises(StepFailed) as caught:
        source_changes(repo)
    assert caught.value.exit_code == 5
    assert caught.value.message == f"git diff HEAD fails in {repo}"
