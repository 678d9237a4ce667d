"""TEST DOUBLE for a faulty disk, loaded by a subprocess through PYTHONPATH.

``TOOLKIT_TEST_FAULTS`` holds ``name:substring:ERRNO[:skip]`` entries separated by ``;``:
the named function (``replace``: ``os.replace``; ``copyfile``: ``shutil.copyfile``;
``open``: ``os.open`` for writing) raises ``OSError(ERRNO)`` when its target path contains
``substring``, after letting ``skip`` such calls through. It stands in for a full disk
(ENOSPC) or a read-only mount (EROFS) where neither can be had (as root, chmod does not make
a folder read-only); the toolkit's own code runs unchanged above the OS boundary.
"""

from __future__ import annotations

import errno
import os
import shutil
from typing import Any

_SPEC = os.environ.get("TOOLKIT_TEST_FAULTS", "")
_RULES: list[list[Any]] = []
for entry in filter(None, _SPEC.split(";")):
    name, sub, code, *rest = entry.split(":")
    _RULES.append([name, sub, getattr(errno, code), int(rest[0]) if rest else 0])


def _check(name: str, path: Any) -> None:
    for rule in _RULES:
        if rule[0] == name and rule[1] in os.fsdecode(path):
            if rule[3] > 0:
                rule[3] -= 1
                continue
            raise OSError(rule[2], os.strerror(rule[2]), os.fsdecode(path))


if _RULES:
    _replace, _copyfile, _open = os.replace, shutil.copyfile, os.open

    def replace(src: Any, dst: Any, **kw: Any) -> None:
        _check("replace", dst)
        _replace(src, dst, **kw)

    def copyfile(src: Any, dst: Any, **kw: Any) -> Any:
        _check("copyfile", dst)
        return _copyfile(src, dst, **kw)

    def open_(path: Any, flags: int, *a: Any, **kw: Any) -> int:
        if flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT):
            _check("open", path)
        return _open(path, flags, *a, **kw)

    os.replace = replace  # type: ignore[assignment]
    shutil.copyfile = copyfile  # type: ignore[assignment]
    os.open = open_  # type: ignore[assignment]
