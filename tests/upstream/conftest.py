"""Contract tests against the real upstream repositories.

They run when ``TOOLKIT_UPSTREAM_DIR`` names a folder holding the git repositories, bare or
not, with the refs the matrix names, either as ``OWNER+NAME/repo`` (``ROCm+apex/repo``,
``pytorch+FBGEMM/repo``, ...: the layout of ``invoke upstream --dir DIR``), ``OWNER+NAME`` or plain
``NAME`` (``apex``, ``FBGEMM``); otherwise every test here is skipped with that reason (CI
cannot reach GitHub). ROCm/apex and pytorch/FBGEMM are required; tests that read
pytorch/test-infra or ROCm/TheRock skip when those are absent.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

REPOS = {"apex": "ROCm/apex", "FBGEMM": "pytorch/FBGEMM"}  # short name -> owner/name
OPTIONAL = {"test-infra": "pytorch/test-infra", "TheRock": "ROCm/TheRock"}


def locate(root: Path, name: str, slug: str) -> Path | None:
    """The git dir of ``slug`` under ``root``, in any of the layouts above."""
    flat = slug.replace("/", "+")
    for candidate in (root / flat / "repo", root / flat, root / name):
        if candidate.exists():
            return _git_dir(candidate)
    return None


def upstream_dir() -> tuple[Path | None, str]:
    value = os.environ.get("TOOLKIT_UPSTREAM_DIR")
    if not value:
        return None, ("TOOLKIT_UPSTREAM_DIR is not set: these contract tests read the real "
                      "upstream repositories (a folder holding ROCm+apex/repo, "
                      "pytorch+FBGEMM/repo ..., e.g. /work/.mirror); CI cannot reach GitHub")
    root = Path(value)
    for name, slug in REPOS.items():
        path = locate(root, name, slug)
        res = subprocess.run(["git", "--git-dir", str(path), "rev-parse", "--git-dir"],
                             capture_output=True, text=True, check=False) if path else None
        if res is None or res.returncode != 0:
            return None, (f"TOOLKIT_UPSTREAM_DIR={value} holds no git repository {slug} "
                          f"({slug.replace('/', '+')}/repo or {name})")
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
        self.path = path

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
    repos = {name: Upstream(locate(root, name, slug)) for name, slug in REPOS.items()}  # type: ignore[arg-type]
    for name, slug in OPTIONAL.items():
        path = locate(root, name, slug)
        if path is not None:
            repos[name] = Upstream(path)
    return repos


@pytest.fixture
def mirrors(upstream: dict[str, Upstream], tmp_path: Path) -> Path:
    """The four repositories as OWNER+NAME/repo (symlinks: never written)."""
    missing = [slug for name, slug in OPTIONAL.items() if name not in upstream]
    if missing:
        pytest.skip(f"TOOLKIT_UPSTREAM_DIR lacks {', '.join(missing)}")
    root = tmp_path / "mirrors"
    for name, slug in {**REPOS, **OPTIONAL}.items():
        link = root / slug.replace("/", "+") / "repo"
        link.parent.mkdir(parents=True)
        link.symlink_to(upstream[name].git_dir.resolve())
    return root
