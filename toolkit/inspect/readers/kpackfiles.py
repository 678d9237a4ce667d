"""Where kpack archives come from: a wheel's ``.kpack`` members, a folder's ``.kpack`` files
and ``--with`` locations (a device wheel, a folder, one archive). Each is read through
:func:`~toolkit.inspect.readers.kpack.read_archive`: a file with positioned reads, a wheel
member as one inflating stream (started again only when a read goes back: the header, the
table of contents at the end, then the code objects in order)."""

from __future__ import annotations

import os
import posixpath
import zipfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from toolkit.core.errors import UsageError
from toolkit.core.files import CAPS, open_regular
from toolkit.core.text import escape
from toolkit.inspect.readers.kpack import Archive, read_archive
from toolkit.inspect.readers.wheelzip import Budget, WheelZip

SUFFIX = ".kpack"


class _Forward:
    """``read(offset, n)`` over a stream that can only be read forwards (or started again)."""

    def __init__(self, start: Callable[[], Iterator[bytes]]) -> None:
        self._start = start
        self._it: Iterator[bytes] | None = None
        self._at = 0  # file offset of ``_buf[0]``
        self._buf = b""

    def __call__(self, offset: int, n: int) -> bytes:
        if self._it is None or offset < self._at:
            self._it, self._at, self._buf = self._start(), 0, b""
        while self._at + len(self._buf) < offset + n:
            if offset > self._at + len(self._buf):  # nothing kept before ``offset``
                self._at, self._buf = self._at + len(self._buf), b""
            chunk = next(self._it, None)
            if chunk is None:
                break
            self._buf += chunk
        if offset > self._at:
            self._buf, self._at = self._buf[offset - self._at :], offset
        return self._buf[:n]


def member_archive(wz: WheelZip, info: zipfile.ZipInfo, shown: str) -> Archive:
    """A wheel member's archive (``MemberError``/``KpackError`` when it is unreadable)."""
    return read_archive(_Forward(lambda: wz.stream(info)), info.file_size, shown)


def file_archive(path: Path) -> Archive:
    with open_regular(path, "kpack archive", cap=CAPS["wheel"]) as f:  # (only what it names is read)
        fd = f.fileno()
        return read_archive(lambda off, n: os.pread(fd, n, off), os.fstat(fd).st_size, str(path))


def is_archive(name: str) -> bool:
    return posixpath.basename(name).endswith(SUFFIX)


def folder_files(root: Path) -> list[Path]:
    return sorted(Path(d) / f for d, _, fs in os.walk(root) for f in fs if f.endswith(SUFFIX)
                  and not (Path(d) / f).is_symlink())


def with_archives(paths: Sequence[str | os.PathLike[str]], budget: Budget | None = None) -> list[Archive]:
    """The archives of ``--with`` locations; one that cannot be read is bad input (exit 2)."""
    out: list[Archive] = []
    for raw in paths:
        p = Path(raw)
        try:
            if p.is_dir():
                out += [file_archive(f) for f in folder_files(p)]
            elif p.is_file() and is_archive(p.name):
                out.append(file_archive(p))
            elif p.is_file() and zipfile.is_zipfile(p):
                with WheelZip.open(p, budget) as wz:
                    out += [member_archive(wz, i, f"{p.name}:{i.filename}") for i in wz.members
                            if is_archive(i.filename)]
        except UsageError as err:  # (KpackError, MemberError)
            raise UsageError(f"--with {escape(p)}: unreadable kpack archive: {err}") from err
    return out
