"""The refusal of a checkout with uncommitted changes, word for word (README: exit 12 unless
``--allow-dirty``; the line names the first changed files). A real git repository; the
expectations are hand-written."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from toolkit.core.errors import DirtySource
from toolkit.env.project import dirty_version, refuse_dirty


def _repo(root: Path) -> Path:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e.invalid"}
    root.mkdir()
    (root / "setup.py").write_text("")
    for args in (["init", "-q"], ["add", "."], ["commit", "-qm", "one"]):
        subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)
    return root


def test_one_changed_file_is_named_in_the_singular(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "r")
    assert refuse_dirty(repo, allow=False) is None
    (repo / "setup.py").write_text("# changed\n")
    with pytest.raises(DirtySource) as caught:
        refuse_dirty(repo, allow=False)
    assert caught.value.message == (f"the source {repo} has uncommitted changes (1 file: setup.py); "
                                    "its wheel would carry the clean commit's name")
    assert caught.value.hint == "commit or stash them, or pass --allow-dirty to build it named +...dirty"
    assert caught.value.exit_code == 12


def test_two_changed_files_and_allowed_changes(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "r")
    (repo / "setup.py").write_text("# changed\n")
    (repo / "new.py").write_text("")
    with pytest.raises(DirtySource) as caught:
        refuse_dirty(repo, allow=False)
    assert "(2 files: setup.py, new.py)" in caught.value.message
    allowed = refuse_dirty(repo, allow=True)
    assert allowed is not None and allowed.files == ("setup.py", "new.py")


@pytest.mark.parametrize(("version", "dirty"), [
    ("1.0", "1.0+dirty"), ("1.8.0+rocm7.0git8d873bb6", "1.8.0+rocm7.0git8d873bb6.dirty")])
def test_the_dirty_label_is_the_last_local_segment(version: str, dirty: str) -> None:
    assert dirty_version(version) == dirty
