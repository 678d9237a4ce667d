"""Contract tests against the real upstream repositories.

They run when ``TOOLKIT_UPSTREAM_DIR`` names a folder holding git repositories ``apex``
(ROCm/apex) and ``FBGEMM`` (pytorch/FBGEMM), bare or not, with the refs the matrix names;
otherwise every test here is skipped with that reason (CI cannot reach GitHub).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

REPOS = ("apex", "FBGEMM")


def upstream_dir() -> tuple[Path | None, str]:
    value = os.environ.get("TOOLKIT_UPSTREAM_DIR")
    if not value:
        return None, ("TOOLKIT_UPSTREAM_DIR is not set: these contract tests read the real "
                      "ROCm/apex and pytorch/FBGEMM repositories (a folder holding git "
                      "repositories apex and FBGEMM); CI cannot reach GitHub")
    root = Path(value)
    for name in REPOS:
        res = subprocess.run(["git", "--git-dir", str(_git_dir(root / name)), "rev-parse",
                              "--git-dir"], capture_output=True, text=True, check=False)
        if res.returncode != 0:
            return None, f"TOOLKIT_UPSTREAM_DIR={value} holds no git repository {name}"
    return root, ""


def _git_dir(path: Path) -> Path:
    return path / ".git" if (path / ".git").exists() else path


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    root, reason = upstream_dir()
    if root is None:
        here = Path(__file__).parent
        for item in items:
            if here in Path(str(item.fspath)).parents:
                item.add_marker(pytest.mark.skip(reason=reason))


class Upstream:
    """Read-only access to one upstream repository (never checked out, never written)."""

    def __init__(self, path: Path) -> None:
        self.git_dir = _git_dir(path)

    def git(self, *args: str) -> str:
        return subprocess.run(["git", "--git-dir", str(self.git_dir), *args], check=True,
                              capture_output=True, text=True).stdout

    def show(self, ref: str, path: str) -> str:
        return self.git("show", f"{ref}:{path}")

    def commit(self, ref: str) -> str:
        return self.git("rev-parse", f"{ref}^{{commit}}").strip()

    def gitlinks(self, ref: str) -> dict[str, str]:
        """path -> commit of every submodule recorded at ``ref``."""
        out = {}
        for line in self.git("ls-tree", "-r", ref).splitlines():
            meta, path = line.split("\t", 1)
            mode, _kind, sha = meta.split()
            if mode == "160000":
                out[path] = sha
        return out

    def export(self, ref: str, dest: Path, *paths: str) -> Path:
        """``ref``'s files (or only ``paths``) as plain files under ``dest``."""
        dest.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "--git-dir", str(self.git_dir), "archive", ref, *paths],
                                 check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
        return dest


@pytest.fixture(scope="session")
def upstream() -> dict[str, Upstream]:
    root, reason = upstream_dir()
    if root is None:
        pytest.skip(reason)
    return {name: Upstream(root / name) for name in REPOS}
