"""Build environments per (Python, ROCm, torch): create, stamp, reuse.

An environment is *ready* only when its stamp file (``.toolkit-env.json``) exists and holds
the digest of everything that defines it: the plan's provisioning steps (argv, env, unset),
the interpreter really used (path and version), the lock file content and the toolkit
version. The stamp is removed before provisioning starts and written last, atomically
(temporary file + ``os.replace``), after every provisioning step succeeded: a failed or
interrupted provisioning never leaves an environment marked ready.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from toolkit import __version__
from toolkit.core.errors import ToolkitError
from toolkit.core.files import read_bytes
from toolkit.core.urls import mask

STAMP = ".toolkit-env.json"
STAMP_FORMAT = 1


def digest(
    steps: Iterable[tuple[str, Iterable[str], Mapping[str, str], Iterable[str]]],
    *,
    interpreter: str,
    lock_text: str | None,
    toolkit_version: str = __version__,
) -> str:
    """sha256 over the provisioning steps, the interpreter, the lock content and toolkit version."""
    doc = {
        "format": STAMP_FORMAT,
        "toolkit": toolkit_version,
        "interpreter": interpreter,
        "lock": hashlib.sha256(lock_text.encode()).hexdigest() if lock_text is not None else None,
        "steps": [[name, list(argv), sorted(env.items()), sorted(unset)]
                  for name, argv, env, unset in steps],
    }
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()


def stamp_path(env_dir: Path) -> Path:
    return env_dir / STAMP


def read_stamp(env_dir: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(read_bytes(stamp_path(env_dir), "stamp"))
    except (ToolkitError, ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def is_ready(env_dir: Path, wanted: str) -> dict[str, Any] | None:
    """The stamp when the environment is ready for ``wanted`` (and its python still runs)."""
    data = read_stamp(env_dir)
    if not data or data.get("digest") != wanted:
        return None
    python = env_dir / "bin" / "python"
    if not os.access(python, os.X_OK):
        return None
    return data


def invalidate(env_dir: Path) -> None:
    """Un-mark an environment (first thing before provisioning it again)."""
    try:
        stamp_path(env_dir).unlink()
    except FileNotFoundError:
        pass


def remove(env_dir: Path) -> None:
    if env_dir.is_symlink() or env_dir.is_file():  # the link only: its target keeps its stamp
        env_dir.unlink()
        return
    invalidate(env_dir)
    if env_dir.exists():
        shutil.rmtree(env_dir)


def previous(env_dir: Path) -> Path:
    """Where a ready environment waits while its folder is re-created for another definition."""
    return env_dir.with_name(env_dir.name + ".previous")


def set_aside(env_dir: Path) -> None:
    """Before ``env_dir`` is re-created: a ready environment (a stamp) is kept as
    ``<env>.previous`` (the one kept before it goes), anything else is removed. A build that
    then fails leaves the earlier environment, which ``take_back`` restores."""
    if env_dir.is_dir() and not env_dir.is_symlink() and read_stamp(env_dir) is not None:
        remove(previous(env_dir))
        os.replace(env_dir, previous(env_dir))
    else:
        remove(env_dir)


def take_back(env_dir: Path, wanted: str) -> bool:
    """The environment set aside is ready for ``wanted``: it becomes ``env_dir`` again (the
    one there, not ready for ``wanted``, is removed). False when there is none to take."""
    prev = previous(env_dir)
    if prev.is_symlink() or is_ready(prev, wanted) is None:
        return False
    remove(env_dir)
    os.replace(prev, env_dir)
    return is_ready(env_dir, wanted) is not None


def mark_ready(env_dir: Path, wanted: str, *, values: Mapping[str, str],
               described: Mapping[str, Any]) -> Path:
    """Write the stamp atomically; ``values`` are what provisioning learned (masked on disk)."""
    doc = {
        "format": STAMP_FORMAT,
        "digest": wanted,
        "toolkit": __version__,
        "values": {k: mask(v) for k, v in values.items()},
        "described": json.loads(mask(json.dumps(described))),
    }
    fd, tmp = tempfile.mkstemp(prefix=".stamp-", dir=env_dir)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(doc, fh, indent=2, sort_keys=True)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, stamp_path(env_dir))
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return stamp_path(env_dir)
