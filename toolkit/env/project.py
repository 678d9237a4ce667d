"""What a Python project says about itself: its distribution name, version and build
requirements, asked of its own build backend (pypa/build's hooks), never parsed from files.

``read_project(path, log)`` copies the project (the contributor's checkout is never modified:
setuptools writes ``*.egg-info`` where it runs), then in an isolated environment installs the
backend's requirements and calls ``get_requires_for_build_wheel`` and
``prepare_metadata_for_build_wheel`` (or builds the wheel when the backend has no metadata
hook: pypa/build's fallback). When that fails (a setup.py importing a module that is not
declared, e.g. torch), the hooks run once more without isolation, in the toolkit's own
interpreter. Every hook's output goes to ``log``; a failure is a ``StepFailed`` naming it.
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
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TextIO

from toolkit.core.errors import StepFailed, UsageError
from toolkit.core.proc import CommandFailed
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
        raise UsageError(f"--source {path}: not a folder; give the folder holding the "
                         "project's pyproject.toml or setup.py")
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
    """pypa/build's own progress lines go to ``log``, never to the console."""
    logger = logging.getLogger("build")
    handler = logging.StreamHandler(log)
    saved = (logger.propagate, logger.level)
    logger.addHandler(handler)
    logger.propagate = False
    logger.setLevel(logging.INFO)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.propagate, logger.level = saved


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
