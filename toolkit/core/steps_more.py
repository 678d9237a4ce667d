"""Typed actions of the sources and the wheel's identity (see ``toolkit.core.steps``): the
submodules a build needs, each from a cached mirror, a library the build links (provided and
checked before it), and the name and version the built wheel must have before it is renamed."""

from __future__ import annotations

import re
from dataclasses import dataclass

from toolkit.core.command import Command

LIB_DIR = re.compile(r"\{[A-Z0-9]+_LIB_DIR\}")  # placeholders ProvideLibrary steps learn


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
class ExpectWheel:
    """The one wheel in ``wheelhouse`` must be distribution ``dist`` at ``version``."""

    wheelhouse: str
    dist: str  # normalized (PEP 503), e.g. fbgemm_gpu_rocm
    version: str  # e.g. 1.5.0, or 1.8.0+rocm7.0.git{SHA8}

    def command(self) -> Command | None:
        return None

    def explain(self) -> list[str]:
        return [f"the one wheel in {self.wheelhouse} must be {self.dist} {self.version}"]


@dataclass(frozen=True)
class ProvideLibrary:
    """A library the build links (shared object and headers): ``install`` it, then check it
    is there before the build starts and learn ``<NAME>_LIB_DIR`` (``{TBB_LIB_DIR}``)."""

    install: Command | None
    source: str  # where it comes from: "pypi tbb-devel==2022.2.0", "system"
    name: str  # "tbb": libtbb.so, placeholder {TBB_LIB_DIR}
    headers: tuple[str, ...]  # any one of them must exist: "tbb/tbb.h", "oneapi/tbb.h"
    lib_dirs: tuple[str, ...]
    include_dirs: tuple[str, ...]
    why: str = ""  # why the build needs it, for the failure message

    @property
    def library(self) -> str:
        return f"lib{self.name}.so"

    @property
    def placeholder(self) -> str:
        return f"{{{self.name.upper()}_LIB_DIR}}"

    def command(self) -> Command | None:
        return self.install

    def explain(self) -> list[str]:
        return [f"then {self.library} must be in one of {', '.join(self.lib_dirs)} and "
                f"{' or '.join(self.headers)} in one of {', '.join(self.include_dirs)} (else "
                f"fail before the build); learn {self.placeholder.strip('{}')}"]
