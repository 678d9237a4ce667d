"""Find the Python interpreter a session asks for (``3.12``; ``3.14t`` free-threaded).

Where we look, in order (the first candidate that really is the requested Python wins):

1. ``PATH``: ``python3.12`` (``python3.13t`` for free-threaded). pyenv shims on PATH that
   refuse to run (``pyenv: python3.12: command not found``) are skipped: every candidate is
   verified by running it once.
2. pyenv's versions folder: ``$PYENV_ROOT/versions/3.12.*[t]/bin/python3.12[t]``
   (``PYENV_ROOT`` defaults to ``~/.pyenv``); the highest patch release first.
3. manylinux containers: ``/opt/python/cp312-cp312[t]/bin/python``.
4. uv-managed (or uv-known) interpreters: ``uv python find --no-python-downloads 3.12``.

Verification runs the candidate once and reads its version and ``Py_GIL_DISABLED``
(free-threaded) from ``sysconfig``; results are cached per (path, mtime, size) for the life
of the process. A missing interpreter is an ``EnvironmentProblem`` (exit 4) that lists where
it looked and how to get one.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from toolkit.core.errors import CommandFailed, EnvironmentProblem, UsageError
from toolkit.core.proc import run

_REQUEST = re.compile(r"^(?P<major>3)\.(?P<minor>[0-9]+)(?P<t>t?)$")
_PROBE = (
    "import json, sys, sysconfig; "
    "print(json.dumps({'version': list(sys.version_info[:3]), "
    "'free_threaded': bool(sysconfig.get_config_var('Py_GIL_DISABLED')), "
    "'executable': sys.executable}))"
)
PROBE_TIMEOUT_S = 20.0


@dataclass(frozen=True)
class Interpreter:
    request: str  # "3.12" or "3.13t"
    path: str  # the executable that was verified (as found, not resolved)
    version: str  # "3.12.1"
    free_threaded: bool
    where: str  # "PATH", "pyenv", "manylinux", "uv"


@dataclass(frozen=True)
class Probe:
    version: tuple[int, int, int]
    free_threaded: bool


def parse_request(python: str) -> tuple[int, int, bool]:
    m = _REQUEST.match(python)
    if not m:
        raise UsageError(f"not a Python version: {python!r}; valid: X.Y or X.Yt (free-threaded), "
                         "e.g. 3.12, 3.14t")
    return int(m["major"]), int(m["minor"]), bool(m["t"])


_PROBES: dict[tuple[str, int, int], Probe | None] = {}


def probe(path: str) -> Probe | None:
    """Run ``path`` once: its version and whether it is free-threaded (cached); None if broken."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    key = (os.path.abspath(path), st.st_mtime_ns, st.st_size)
    if key in _PROBES:
        return _PROBES[key]
    result: Probe | None = None
    try:
        res = run([path, "-c", _PROBE], timeout=PROBE_TIMEOUT_S, check=False)
        if res.ok:
            data = json.loads(res.stdout.strip().splitlines()[-1])
            v = data["version"]
            result = Probe((int(v[0]), int(v[1]), int(v[2])), bool(data["free_threaded"]))
    except (CommandFailed, ValueError, KeyError, IndexError, TypeError):
        result = None
    _PROBES[key] = result
    return result


def clear_cache() -> None:
    _PROBES.clear()


def _patch_key(name: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"[0-9]+", name))


def candidates(
    python: str,
    *,
    path_env: str | None = None,
    pyenv_root: str | os.PathLike[str] | None = None,
    manylinux_root: str | os.PathLike[str] = "/opt/python",
    uv: str | None = None,
) -> Iterator[tuple[str, str]]:
    """(where, executable) candidates for ``python``, in search order; nothing is run."""
    major, minor, threaded = parse_request(python)
    suffix = "t" if threaded else ""
    exe = f"python{major}.{minor}{suffix}"
    # 1. PATH
    search = path_env if path_env is not None else os.environ.get("PATH", "")
    found = shutil.which(exe, path=search)
    if found:
        yield "PATH", found
    # 2. pyenv versions folder
    root = Path(pyenv_root or os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv")
    yield from _pyenv(root / "versions", major, minor, suffix, exe)
    # 3. manylinux
    tag = f"cp{major}{minor}"
    cand = Path(manylinux_root) / f"{tag}-{tag}{suffix}" / "bin" / "python"
    if cand.is_file():
        yield "manylinux", str(cand)
    # 4. uv
    uv_bin = uv if uv is not None else find_uv()
    if uv_bin:
        yield from _uv_find(uv_bin, python, search)


def _pyenv(versions: Path, major: int, minor: int, suffix: str,
           exe: str) -> Iterator[tuple[str, str]]:
    """pyenv's interpreters of ``major.minor`` (``suffix``: "t", free-threaded), newest first."""
    if versions.is_dir():
        pattern = re.compile(rf"^{major}\.{minor}\.[0-9]+{suffix}$")
        for d in sorted((d for d in versions.iterdir() if pattern.match(d.name)),
                        key=lambda d: _patch_key(d.name), reverse=True):
            cand = d / "bin" / exe
            if cand.is_file():
                yield "pyenv", str(cand)


def _uv_find(uv_bin: str, python: str, search: str) -> Iterator[tuple[str, str]]:
    """The interpreter ``uv python find`` names (nothing when it cannot run)."""
    try:
        res = run([uv_bin, "python", "find", "--no-python-downloads", python],
                  timeout=PROBE_TIMEOUT_S, check=False, env={**os.environ, "PATH": search})
    except CommandFailed:
        return
    out = res.stdout.strip()
    if res.ok and out:
        yield "uv", out.splitlines()[-1]


def places(python: str, *, pyenv_root: str | os.PathLike[str] | None = None,
           manylinux_root: str | os.PathLike[str] = "/opt/python") -> list[str]:
    """Human-readable list of where ``find`` looks (for error messages)."""
    major, minor, threaded = parse_request(python)
    suffix = "t" if threaded else ""
    root = Path(pyenv_root or os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv")
    tag = f"cp{major}{minor}"
    return [
        f"python{major}.{minor}{suffix} on PATH",
        f"{root}/versions/{major}.{minor}.*{suffix}/bin/python{major}.{minor}{suffix}",
        f"{manylinux_root}/{tag}-{tag}{suffix}/bin/python",
        f"uv python find {python}",
    ]


def matches(python: str, found: Probe) -> bool:
    major, minor, threaded = parse_request(python)
    return found.version[:2] == (major, minor) and found.free_threaded == threaded


def find(
    python: str,
    *,
    path_env: str | None = None,
    pyenv_root: str | os.PathLike[str] | None = None,
    manylinux_root: str | os.PathLike[str] = "/opt/python",
    uv: str | None = None,
) -> Interpreter:
    """The first verified interpreter for ``python``; ``EnvironmentProblem`` when none."""
    rejected: list[str] = []
    for where, path in candidates(python, path_env=path_env, pyenv_root=pyenv_root,
                                  manylinux_root=manylinux_root, uv=uv):
        found = probe(path)
        if found is None:
            rejected.append(f"{path} (does not run)")
            continue
        if not matches(python, found):
            ver = ".".join(map(str, found.version)) + ("t" if found.free_threaded else "")
            rejected.append(f"{path} (is {ver})")
            continue
        return Interpreter(python, path, ".".join(map(str, found.version)),
                           found.free_threaded, where)
    looked = "; ".join(places(python, pyenv_root=pyenv_root, manylinux_root=manylinux_root))
    extra = f"; rejected: {', '.join(rejected)}" if rejected else ""
    raise EnvironmentProblem(
        f"no Python {python} interpreter found (looked at: {looked}){extra}",
        hint=f"uv python install {python}, or pyenv install {python}",
    )


def find_uv() -> str | None:
    """uv on PATH, else the binary of the ``uv`` package installed next to the toolkit."""
    found = shutil.which("uv")
    if found:
        return found
    try:
        from uv import find_uv_bin

        return str(find_uv_bin())
    except (ImportError, FileNotFoundError):
        return None
