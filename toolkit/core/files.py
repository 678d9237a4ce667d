"""Hashing files and folders (wheels, locks, source trees, build keys): one way each."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

CHUNK = 1 << 20
# like shutil.ignore_patterns: (folder, names) -> the names to leave out
Ignore = Callable[[str, list[str]], set[str]]


def sha256_file(path: str | os.PathLike[str]) -> str:
    """The file's sha256 (hex), read in chunks; ``OSError`` when it cannot be read."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(CHUNK):
            h.update(block)
    return h.hexdigest()


def hash_tree(h: Any, root: Path, ignore: Ignore | None = None) -> None:
    """Feed ``h`` the relative path and bytes of every file under ``root`` in a fixed order
    (a symbolic link: its target text), leaving out what ``ignore`` names."""
    for dirpath, dirnames, filenames in os.walk(root):
        skip = ignore(dirpath, [*dirnames, *filenames]) if ignore else set()
        dirnames[:] = sorted(d for d in dirnames if d not in skip)
        for name in sorted(f for f in filenames if f not in skip):
            path = Path(dirpath) / name
            h.update(str(path.relative_to(root)).encode() + b"\0")
            try:
                h.update(b"->" + os.readlink(path).encode() if path.is_symlink()
                         else path.read_bytes())
            except OSError:
                h.update(b"<unreadable>")
            h.update(b"\0")
