"""Typed actions that lay out the sources: a worktree of the package's repository at its ref
from a shared mirror, the submodules it needs (each from a cached mirror), or a copy of a
contributor's checkout."""

from __future__ import annotations

from dataclasses import dataclass

from toolkit.core.command import Command


def mirror_name(url: str) -> str:
    """The folder name of ``url``'s cached mirror: ``github.com+asmjit+asmjit.git``."""
    tail = url.split("://", 1)[-1].rstrip("/").removesuffix(".git")
    return "+".join(p for p in tail.replace(":", "/").split("/") if p and p != "..") + ".git"


@dataclass(frozen=True)
class Submodule:
    path: str  # in the worktree, e.g. external/asmjit
    url: str  # as the ref's .gitmodules gives it
    mirror: str  # the cached mirror it is cloned from


@dataclass(frozen=True)
class FetchSubmodules:
    """Submodules at the commits HEAD records, each from a cached mirror; then recursively."""

    worktree: str
    submodules: tuple[Submodule, ...]
    mirrors: str  # where the mirrors of nested submodules go

    def command(self) -> Command | None:
        return None

    def explain(self) -> list[str]:
        lines = [f"{s.path}: git clone --mirror {s.url} {s.mirror} unless it exists (git fetch "
                 "when the commit HEAD records for it is missing); rm -rf it in the worktree; "
                 "git clone --no-checkout from the mirror; git checkout --detach that commit"
                 for s in self.submodules]
        lines.append(f"their own submodules likewise, recursively (mirrors in {self.mirrors}/)")
        lines.append("fail when .gitmodules lacks one of these paths or names another URL")
        return lines


@dataclass(frozen=True)
class FetchSources:
    """A fresh worktree of ``repo`` at ``ref`` from a shared mirror (cloned once, locked)."""

    repo: str
    ref: str
    mirror: str
    worktree: str

    def command(self) -> Command:
        return Command(("git", "-C", self.mirror, "worktree", "add", "--force", "--detach",
                        self.worktree, self.ref))

    def explain(self) -> list[str]:
        return [f"git clone --mirror {self.repo} {self.mirror} unless it exists; "
                f"git fetch --prune when {self.ref} is missing",
                f"git worktree remove --force {self.worktree}; rm -rf {self.worktree}; "
                "git worktree prune",
                "learn SHA (git rev-parse HEAD) and SOURCE_DATE_EPOCH (its commit time)"]


@dataclass(frozen=True)
class CopySources:
    """Copy a contributor's checkout (never modified) into the build's worktree."""

    source: str
    worktree: str

    def command(self) -> Command | None:
        return None

    def explain(self) -> list[str]:
        return [f"rm -rf {self.worktree}; copy {self.source} there (without .git, build, dist, "
                "*.egg-info, __pycache__, .nox)",
                f"learn SHA and SOURCE_DATE_EPOCH from git -C {self.source} (0 outside git) "
                "and TREE, the hash of the copied files",
                "uncommitted changes there (git diff HEAD, untracked files not ignored): "
                "refused (exit 12) unless --allow-dirty, then learn DIFF, their sha256 (the "
                "wheel is named +...dirty)"]
