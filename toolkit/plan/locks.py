"""Lock files: ``locks/<py>-rocm<rocm>.txt`` written by pip-compile ``--generate-hashes``.

One lock per build environment. A (Python, ROCm) pair whose builds need several torch
releases (apex 1.7 -> torch 2.7 and apex 1.8 -> torch 2.8 on 3.12/rocm6.4) gets one lock per
torch: ``locks/3.12-rocm6.4-torch2.7.txt``, ``locks/3.12-rocm6.4-torch2.8.txt``.

Each lock starts with a toolkit header::

    # toolkit-lock: 3.12-rocm7.0 torch 2.8
    # toolkit-lock-inputs: <sha256 of what the lock was compiled from>
    # regenerate: nox -s lock-3.12-rocm7.0

The inputs hash covers the Python, ROCm, torch release, the SDK requirement, its index and
GPU family and the torch source (``provision.Sources``). When the matrix or the options
change, the hash no longer matches and the lock is *stale*: a build refuses it (with the
command to regenerate it, or ``--no-lock``) instead of installing something else than CI.

Reading lock files happens in the callers (``read_locks`` -> ``Options.locks``) so that
``plan()`` stays pure. Credentials in index URLs are masked everywhere in the file.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolkit.core.urls import mask
from toolkit.data.matrix import Build, Matrix
from toolkit.plan.sources import Sources

LOCK_FORMAT = 1
_INPUTS = re.compile(r"^# toolkit-lock-inputs: ([0-9a-f]{64})\s*$", re.M)


@dataclass(frozen=True)
class LockRef:
    """A lock file as found on disk (read by the caller of ``plan()``)."""

    name: str  # "3.12-rocm7.0.txt"
    path: str
    inputs: str | None  # the inputs hash from its header; None when the header is missing


def lock_name(matrix: Matrix, build: Build) -> str:
    """``3.12-rocm7.0.txt``, or ``3.12-rocm6.4-torch2.7.txt`` when the pair needs several torch."""
    base = f"{build.python}-rocm{build.rocm.version}"
    minors = {b.pkg_version.torch_minor for b in matrix.builds
              if b.python == build.python and b.rocm.version == build.rocm.version}
    if len(minors) > 1:
        return f"{base}-torch{build.pkg_version.torch_minor}.txt"
    return f"{base}.txt"


def inputs_hash(build: Build, sources: Sources) -> str:
    doc: dict[str, Any] = {
        "format": LOCK_FORMAT,
        "python": build.python,
        "rocm": build.rocm.version,
        "torch": build.pkg_version.torch_minor,
        "sources": sources.as_json(),
    }
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()


def read_locks(folder: str | os.PathLike[str]) -> tuple[LockRef, ...]:
    """Every ``*.txt`` in the locks folder with its inputs hash (no folder: none)."""
    path = Path(folder)
    if not path.is_dir():
        return ()
    out: list[LockRef] = []
    for f in sorted(path.glob("*.txt")):
        try:
            head = f.read_text(encoding="utf-8")[:4096]
        except OSError:
            continue
        m = _INPUTS.search(head)
        out.append(LockRef(f.name, str(f.resolve()), m[1] if m else None))
    return tuple(out)


def find_lock(locks: Iterable[LockRef], name: str) -> LockRef | None:
    return next((lk for lk in locks if lk.name == name), None)


# ----------------------------------------------------------------------------- compiling
def requirements_in(sources: Sources) -> str:
    """The pip-compile input for one environment: index options, the SDK and torch."""
    lines: list[str] = []
    indexes: list[str] = []
    if sources.sdk_index:
        indexes.append(sources.sdk_index)
    args = list(sources.torch_args)
    links = list(sources.find_links)
    i = 0
    while i < len(args):
        opt, val = args[i], args[i + 1]
        if opt in ("--index-url", "--extra-index-url"):
            indexes.append(val)
        elif opt == "--find-links":
            links.append(val)
        i += 2
    seen: list[str] = []
    for url in indexes:
        if url not in seen:
            seen.append(url)
    for n, url in enumerate(seen):
        lines.append(f"{'--index-url' if n == 0 else '--extra-index-url'} {url}")
    for link in dict.fromkeys(links):
        lines.append(f"--find-links {link}")
    if sources.sdk_spec:
        lines.append(sources.sdk_spec)
    lines.append(sources.torch_spec)
    return "\n".join(lines) + "\n"


def header(build: Build, sources: Sources, name: str, digest: str) -> str:
    desc = f"{build.python}-rocm{build.rocm.version} torch {build.pkg_version.torch_minor}"
    if sources.family:
        desc += f" family {sources.family}"
    return "\n".join([
        f"# toolkit-lock: {desc}",
        f"# toolkit-lock-inputs: {digest}",
        f"# sdk: {mask(sources.sdk_spec or 'system ROCm')}"
        + (f" from {mask(sources.sdk_index)}" if sources.sdk_index else ""),
        f"# torch: {mask(sources.torch_spec)} {mask(' '.join(sources.torch_args))}".rstrip(),
        f"# regenerate: nox -s lock-{build.python}-rocm{build.rocm.version}  (file {name})",
        "#",
    ]) + "\n"
