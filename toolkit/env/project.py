"""What a Python project says about itself: its distribution name, version and build
requirements, asked of its own build backend (pypa/build's hooks), never parsed from files.

``read_project(path, log)`` copies the project (the contributor's checkout is never modified:
setuptools writes ``*.egg-info`` where it runs), then in an isolated environment installs the
backend's requirements and calls ``get_requires_for_build_wheel`` and
``prepare_metadata_for_build_wheel`` (or builds the wheel when the backend has no metadata
hook: pypa/build's fallback). When that fails (a setup.py importing a module that is not
declared, e.g. torch), the hooks run once more without isolation, in the toolkit's own
interpreter. Every hook's output goes to ``log``; a failure is a ``StepFailed`` naming it.

``source_changes(path)`` says whether a checkout holds uncommitted changes under ``path``:
tracked files that differ from ``HEAD`` (staged or not, deleted ones too) and untracked files
git does not ignore (the build copies them, so they may change the wheel; files ``.gitignore``
names are not counted: they are no part of the source, and the copy's ``TREE`` hash covers
them). Its ``diff_sha256`` is one sha256 over ``git diff HEAD --binary`` and each untracked
file's path and bytes: two builds from the same commit agree on it exactly when their
changes agree. ``refuse_dirty`` is the one refusal (``DirtySource``, exit 12) every entry
point uses unless ``--allow-dirty``.
"""

from __future__ import annotations

import contextlib
import email.parser
import logging
import os
import re
import shutil
import sys
import tempfile
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TextIO

from toolkit.core.errors import CommandFailed, DirtySource, StepFailed, UsageError
from toolkit.core.proc import run as run_proc
from toolkit.core.text import escape
from toolkit.core.urls import mask

MARKERS = ("pyproject.toml", "setup.py", "setup.cfg")
_IGNORED = shutil.ignore_patterns(".git", "build", "dist", "*.egg-info", "__pycache__", ".nox",
                                  ".venv")


@dataclass(frozen=True)
class ProjectInfo:
    path: str  # the project folder, resolved
    name: str  # the distribution name its metadata gives (``Name:``)
    version: str  # its ``Version:``
    requires: tuple[str, ...]  # what building a wheel needs (backend + get_requires_for_build_wheel)

    @property
    def package(self) -> str:
        """The name in build ids and wheel file names: normalised, ``_`` for runs of ``-_.``."""
        return re.sub(r"[-_.]+", "_", self.name).lower()


def check_project(path: str) -> Path:
    """``path`` as a readable Python project folder; else a one-line ``UsageError``."""
    folder = Path(path).expanduser()
    if not folder.exists():
        raise UsageError(f"--source {path}: no such folder; give the folder holding the "
                         "project's pyproject.toml or setup.py")
    if not folder.is_dir():
        raise UsageError(f"--source {path}: not a folder nor an sdist (.tar.gz, .zip); give "
                         "the folder holding the project's pyproject.toml or setup.py, or its "
                         "sdist")
    if not os.access(folder, os.R_OK | os.X_OK):
        raise UsageError(f"--source {path}: not readable (permission denied)")
    try:
        present = [m for m in MARKERS if (folder / m).is_file()]
    except OSError as exc:
        raise UsageError(f"--source {path}: not readable ({exc.strerror})") from None
    if not present:
        raise UsageError(f"--source {path}: not a Python project (no {', '.join(MARKERS)})")
    unreadable = [m for m in present if not os.access(folder / m, os.R_OK)]
    if unreadable:
        raise UsageError(f"--source {path}: {', '.join(unreadable)} not readable "
                         "(permission denied)")
    return folder.resolve()


class HookFailed(Exception):
    """A build-backend hook (or the installer) exited non-zero."""


def _runner(log: TextIO) -> object:
    def run(cmd: Sequence[str], cwd: str | None = None,
            extra_environ: Mapping[str, str] | None = None) -> None:
        env = {**os.environ, **(extra_environ or {})}
        log.write(f"$ {' '.join(cmd)}\n")
        try:
            res = run_proc(list(cmd), cwd=cwd, env=env, timeout=1800, check=False)
        except CommandFailed as exc:
            raise OSError(f"{cmd[0]}: {exc.reason or 'failed'}") from None
        log.write(res.stdout + res.stderr)
        log.flush()
        if not res.ok:
            raise HookFailed(f"{cmd[0]} exited {res.returncode}")
    return run


def _installer() -> Literal["uv", "pip"]:
    """uv when pypa/build can find it (the ``uv`` package or on PATH): much faster."""
    import importlib.util

    return "uv" if importlib.util.find_spec("uv") or shutil.which("uv") else "pip"


@contextlib.contextmanager
def _build_logs_to(log: TextIO) -> Iterator[None]:
    """pypa/build's own progress lines, and the warnings the backend's hooks emit (pypa/build
    re-raises them here as ``BuildBackendWarning``: setuptools' deprecations...), go to
    ``log``, never to the console."""
    logger = logging.getLogger("build")
    handler = logging.StreamHandler(log)
    saved = (logger.propagate, logger.level)
    logger.addHandler(handler)
    logger.propagate = False
    logger.setLevel(logging.INFO)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            yield
        finally:
            logger.removeHandler(handler)
            logger.propagate, logger.level = saved
            for w in caught:
                log.write(f"# warning: {w.category.__name__}: {w.message}\n")


def _uv() -> str:
    """The uv pypa/build uses: the ``uv`` package's binary, else ``$UV`` or uv on PATH."""
    try:
        import uv

        return str(uv.find_uv_bin())
    except (ImportError, FileNotFoundError):
        return shutil.which(os.environ.get("UV") or "uv") or "uv"


def _install_into(python: str, source: str, log: TextIO) -> Callable[[Sequence[str]], None]:
    """How the isolated environment gets its build requirements: uv (or pip) through the
    toolkit's one subprocess runner, its output to ``log``; a failure that is an unreachable
    index or an unavailable requirement is its one-line error (``toolkit.env.buildreqs``)."""
    from toolkit.env.buildreqs import install_failure, installer_indexes

    installer = _installer()

    def install(requirements: Sequence[str]) -> None:
        if not requirements:
            return
        argv = ([_uv(), "pip", "install", "--python", python, *requirements]
                if installer == "uv" else
                [sys.executable, "-m", "pip", "--python", python, "install",
                 "--no-warn-script-location", *requirements])
        log.write(f"$ {mask(' '.join(argv))}\n")
        try:
            res = run_proc(argv, timeout=1800, check=False)
        except CommandFailed as exc:
            raise OSError(f"{argv[0]}: {exc.reason or 'failed'}") from None
        log.write(mask(res.stdout + res.stderr))
        log.flush()
        if res.ok:
            return
        said = install_failure(res.stdout + res.stderr, requirements,
                               installer_indexes(installer), f"the project at {escape(source)}")
        if said is not None:
            raise said
        raise HookFailed(f"{installer} exited {res.returncode} installing "
                         f"{', '.join(requirements)}")
    return install


def _hooks(copy: Path, out: Path, log: TextIO, *, isolated: bool,
           source: str = "") -> tuple[str, str, list[str]]:
    import build
    import build.env

    def ask(builder: build.ProjectBuilder, install: object | None) -> tuple[str, str, list[str]]:
        requires = sorted(builder.build_system_requires)  # a set: its order is the hash seed's
        if install is not None:
            install(requires)  # type: ignore[operator]
        extra = sorted(builder.get_requires_for_build("wheel"))
        if install is not None and extra:
            install(extra)  # type: ignore[operator]
        meta = Path(builder.metadata_path(out))
        fields = email.parser.Parser().parsestr(
            (meta / "METADATA").read_text(encoding="utf-8"), headersonly=True)
        if not fields.get("Name") or not fields.get("Version"):
            raise HookFailed(f"the project's metadata names no Name or Version ({meta})")
        return str(fields["Name"]), str(fields["Version"]), [*requires, *extra]

    runner = _runner(log)
    if not isolated:
        return ask(build.ProjectBuilder(copy, python_executable=sys.executable,
                                        runner=runner), None)  # type: ignore[arg-type]
    with build.env.DefaultIsolatedEnv(installer=_installer()) as env:
        builder = build.ProjectBuilder.from_isolated_env(env, copy,
                                                         runner=runner)  # type: ignore[arg-type]
        return ask(builder, _install_into(env.python_executable, source or str(copy), log))


def read_project(path: str, log_path: Path) -> ProjectInfo:
    """The project's name, version and build requirements (see the module's text)."""
    import build

    folder = check_project(path)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="toolkit-project-") as tmp, \
            log_path.open("w", encoding="utf-8") as log, _build_logs_to(log):
        copy = Path(tmp) / "src"
        try:
            shutil.copytree(folder, copy, ignore=_IGNORED, symlinks=True)
        except (OSError, shutil.Error) as exc:
            raise UsageError(f"--source {path}: not readable ({exc})") from None
        errors: list[str] = []
        for isolated in (True, False):
            log.write(f"# {'isolated' if isolated else 'not isolated'}: the project's metadata\n")
            try:
                name, version, requires = _hooks(copy, Path(tmp) / f"meta{int(isolated)}", log,
                                                 isolated=isolated, source=path)
                return ProjectInfo(str(folder), name, version, tuple(dict.fromkeys(requires)))
            except (build.BuildException, build.BuildBackendException, HookFailed, OSError,
                    UnicodeDecodeError) as exc:
                errors.append(f"{'isolated' if isolated else 'not isolated'}: "
                              f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}")
                log.write(f"# failed: {exc}\n")
    raise StepFailed(f"cannot read the metadata of the project at {path} "
                     f"({'; '.join(errors)}); its log: {log_path}")


# ----------------------------------------------------------------------- uncommitted changes
DIRTY_LABEL = "dirty"  # the local-version segment a wheel of uncommitted changes carries
_SHOWN = 3  # changed files a refusal names


def dirty_version(version: str) -> str:
    """``version`` with the local segment ``dirty`` last: ``1.8.0+rocm7.0git8d873bb6`` ->
    ``1.8.0+rocm7.0git8d873bb6.dirty``, ``1.0`` -> ``1.0+dirty`` (PEP 440 local labels)."""
    return f"{version}{'.' if '+' in version else '+'}{DIRTY_LABEL}"


@dataclass(frozen=True)
class SourceChanges:
    """A checkout's uncommitted changes under one folder (see the module's text)."""

    files: tuple[str, ...]  # changed tracked files, then untracked ones; relative to the folder
    diff_sha256: str

    def summary(self) -> str:
        shown = ", ".join(escape(f, 200) for f in self.files[:_SHOWN])
        more = len(self.files) - _SHOWN
        return shown + (f" and {more} more" if more > 0 else "")


def _git(args: Sequence[str], cwd: Path) -> str | None:
    """git's output in ``cwd``; None when git is missing, fails or times out."""
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0"}
    try:
        res = run_proc(["git", *args], cwd=cwd, env=env, timeout=600, check=False)
    except CommandFailed:
        return None
    return res.stdout if res.ok else None


def _untracked_digest(h: Any, folder: Path, names: Sequence[str]) -> None:
    import stat

    for name in sorted(names):
        h.update(b"\0untracked\0" + name.encode("utf-8", "surrogateescape") + b"\0")
        path = folder / name
        try:
            mode = os.lstat(path).st_mode
            if stat.S_ISLNK(mode):
                h.update(b"->" + os.fsencode(os.readlink(path)))
            elif stat.S_ISREG(mode):
                from toolkit.core.files import sha256_file

                h.update(sha256_file(path).encode())
            else:
                h.update(f"<special {stat.S_IFMT(mode):o}>".encode())
        except OSError:
            h.update(b"<unreadable>")


def source_changes(path: str | os.PathLike[str]) -> SourceChanges | None:
    """The uncommitted changes of the git checkout holding ``path``, under ``path``; None when
    there are none, or ``path`` is in no git checkout with a commit (it is then named by its
    tree hash, never by a commit)."""
    import hashlib

    folder = Path(path).expanduser()
    if not folder.is_dir() or _git(["rev-parse", "--verify", "--quiet", "HEAD^{commit}"],
                                   folder) is None:
        return None
    scope = ["--", "."]
    tracked = _git(["diff", "HEAD", "--name-only", "-z", "--relative", "--no-renames",
                    *scope], folder)
    untracked = _git(["ls-files", "--others", "--exclude-standard", "-z", *scope], folder)
    if tracked is None or untracked is None:
        raise StepFailed(f"git cannot list the changes of {escape(os.fspath(folder))} "
                         "(git status fails there)")
    changed = [n for n in tracked.split("\0") if n]
    new = [n for n in untracked.split("\0") if n]
    if not changed and not new:
        return None
    h = hashlib.sha256()
    with tempfile.TemporaryDirectory(prefix="toolkit-diff-") as tmp:
        out = Path(tmp) / "diff"
        if _git(["diff", "HEAD", "--binary", "--relative", "--no-renames", "--no-ext-diff",
                 "--no-textconv", "--no-color", "--full-index", "--src-prefix=a/",
                 "--dst-prefix=b/", f"--output={out}", *scope], folder) is None:
            raise StepFailed(f"git diff HEAD fails in {escape(os.fspath(folder))}")
        with out.open("rb") as fh:  # the diff's own bytes: without untracked files, the
            while block := fh.read(1 << 20):  # digest is sha256 of `git diff HEAD --binary`
                h.update(block)
    _untracked_digest(h, folder, new)
    return SourceChanges((*changed, *new), h.hexdigest())


def refuse_dirty(path: str | os.PathLike[str], allow: bool) -> SourceChanges | None:
    """``source_changes(path)``; with changes and not ``allow``: ``DirtySource`` (exit 12), one
    line naming the first changed files."""
    changes = source_changes(path)
    if changes is not None and not allow:
        raise DirtySource(f"the source {escape(os.fspath(path))} has uncommitted changes "
                          f"({len(changes.files)} file{'s' if len(changes.files) != 1 else ''}: "
                          f"{changes.summary()}); its wheel would carry the clean commit's name",
                          hint="commit or stash them, or pass --allow-dirty to build it named "
                               f"+...{DIRTY_LABEL}")
    return changes
