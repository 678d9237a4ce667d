"""Where things go: one work folder (dist/, artifacts/, build/, locks/) and one cache folder."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from toolkit.core.versions import rocm_label
from toolkit.data.matrix import Build


def default_cache() -> Path:
    env = os.environ.get("TOOLKIT_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "rocm-wheel-toolkit"


@dataclass(frozen=True)
class Layout:
    root: Path  # the work folder (the repo root, or --workdir)
    cache: Path  # envs, source mirrors, downloads

    @classmethod
    def default(cls, root: str | os.PathLike[str] | None = None) -> Layout:
        """The work folder ``root`` (default: the current one) and the cache; a path holding
        a control character is refused (``UsageError``): shown anywhere, a newline in it
        would forge a line."""
        from toolkit.core.errors import UsageError
        from toolkit.core.text import quoted, unsafe

        layout = cls(Path(root or os.getcwd()).resolve(), default_cache().resolve())
        for what, path in (("work folder", layout.root), ("cache (TOOLKIT_CACHE_DIR)",
                                                         layout.cache)):
            if unsafe(str(path)):
                raise UsageError(f"the {what} {quoted(path)} holds a control character; "
                                 "valid: a folder whose path has none")
        return layout

    def env_name(self, build: Build) -> str:
        torch = build.pkg_version.torch_minor
        rocm = rocm_label(build.rocm.version)
        return f"{build.python}-{rocm}" + (f"-torch{torch}" if torch else "")

    def env_dir(self, build: Build) -> Path:
        return self.cache / "envs" / self.env_name(build)

    def env_python(self, build: Build) -> Path:
        return self.env_dir(build) / "bin" / "python"

    def mirror(self, package: str) -> Path:
        return self.cache / "sources" / f"{package}.git"

    def build_dir(self, build: Build) -> Path:
        return self.root / "build" / build.id

    def worktree(self, build: Build) -> Path:
        return self.build_dir(build) / "src"

    def dist(self, build: Build) -> Path:
        return self.root / "dist" / build.id

    def artifacts(self, build: Build) -> Path:
        return self.root / "artifacts" / build.id

    def artifacts_rel(self, build_id: str) -> str:
        """``artifacts/<id>`` relative to the current folder when inside it, else absolute."""
        path = self.root / "artifacts" / build_id
        try:
            return str(path.relative_to(Path.cwd()))
        except ValueError:
            return str(path)

    def locks(self) -> Path:
        return self.root / "locks"
