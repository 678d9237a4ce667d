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


OUTPUT_FOLDERS = ("dist", "artifacts")  # what a work folder publishes and records


def is_work_folder(path: Path) -> bool:
    """A folder a build has used as its work folder (a build's manifest in
    ``artifacts/<id>/``, or a build lock in ``build/``), or the current folder: the work
    folder of every run without ``--workdir``."""
    try:
        return (path == Path.cwd().resolve() or any(path.glob("artifacts/*/manifest.json"))
                or any(path.glob("build/*.lock")))
    except OSError:  # an unreadable folder (or no current folder) says nothing
        return False


def check_not_nested(folder: Path) -> None:
    """``UsageError`` (exit 2) when ``folder`` (resolved) lies inside the ``dist/`` or
    ``artifacts/`` of a work folder (``is_work_folder``): another one's, or the current
    folder's."""
    from toolkit.core.errors import UsageError
    from toolkit.core.text import escape

    parts = folder.parts
    for i in range(len(parts) - 1):
        outer, inner = Path(*parts[: i + 1]), parts[i + 1]
        if inner in OUTPUT_FOLDERS and is_work_folder(outer):
            raise UsageError(
                f"work folder {escape(folder)}: it lies inside {escape(outer / inner)}/, the "
                f"{inner}/ of the work folder {escape(outer)}; give a work folder outside "
                "every work folder's dist/ and artifacts/")


@dataclass(frozen=True)
class Layout:
    root: Path  # the work folder (the repo root, or --workdir)
    cache: Path  # envs, source mirrors, downloads

    @classmethod
    def default(cls, root: str | os.PathLike[str] | None = None) -> Layout:
        """The work folder ``root`` (default: the current folder) and this machine's cache.
        A path holding a control character is refused (``UsageError``): shown anywhere, a
        newline in it would forge a line. A work folder inside another's ``dist/`` or
        ``artifacts/`` is refused too (``index dist`` would list its unnamed intermediate
        wheels, a clean-up its builds)."""
        from toolkit.core.errors import UsageError
        from toolkit.core.text import quoted, unsafe

        layout = cls(Path(root or os.getcwd()).resolve(), default_cache().resolve())
        for what, path in (("work folder", layout.root), ("cache (TOOLKIT_CACHE_DIR)",
                                                         layout.cache)):
            if unsafe(str(path)):
                raise UsageError(f"the {what} {quoted(path)} holds a control character; "
                                 "valid: a folder whose path has none")
        check_not_nested(layout.root)
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
