"""Reading files: bounded and only regular files (``open_regular``, ``read_bytes``,
``read_text``: data files, manifests, reports, locks, stamps, wheels); hashing files and
folders (wheels, locks, source trees, build keys): one way each."""

from __future__ import annotations

import errno
import hashlib
import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

from toolkit.core.errors import ToolkitError, UsageError, os_cause
from toolkit.core.text import escape

CHUNK = 1 << 20
# like shutil.ignore_patterns: (folder, names) -> the names to leave out
Ignore = Callable[[str, list[str]], set[str]]


def sha256_file(path: str | os.PathLike[str]) -> str:
    """The file's sha256 (hex), read in chunks; ``OSError`` when it cannot be read or is not
    a regular file."""
    h = hashlib.sha256()
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # a FIFO or device is never hashed
            raise OSError(errno.EINVAL, "not a regular file", os.fspath(path))
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
                mode = os.lstat(path).st_mode
                if stat.S_ISLNK(mode):
                    h.update(b"->" + os.readlink(path).encode())
                elif stat.S_ISREG(mode):
                    h.update(path.read_bytes())
                else:  # a FIFO or a device in a tree is never opened (it would block)
                    h.update(f"<special {stat.S_IFMT(mode):o}>".encode())
            except OSError:
                h.update(b"<unreadable>")
            h.update(b"\0")


# Size caps per kind of file the toolkit reads (a larger one is refused in one line).
MiB = 1 << 20
CAPS: dict[str, int] = {
    "data file": 4 * MiB,
    "manifest": 32 * MiB,
    "report": 64 * MiB,  # JUnit XML, nox --report JSON
    "lock file": 16 * MiB,
    "stamp": 4 * MiB,
    "wheel": 16 << 30,
}


def open_regular(path: str | os.PathLike[str], what: str, error: type[ToolkitError] = UsageError,
                 cap: int | None = None) -> BinaryIO:
    """``path`` opened for reading, only when it is a regular file no larger than the cap of
    its kind (``what``, a key of ``CAPS``). Opened with ``O_NONBLOCK`` and judged on the open
    descriptor (``fstat``), so a FIFO never blocks, a link to ``/dev/zero`` is not read and
    nothing can swap the file between check and read. Every refusal is one ``error`` line:
    "no such file", "not a regular file", "larger than N MiB", "cannot be read (cause)"."""
    limit = CAPS.get(what, 64 * MiB) if cap is None else cap
    shown = escape(os.fspath(path))
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    except FileNotFoundError:
        raise error(f"{what} {shown}: no such file") from None
    except (OSError, ValueError) as exc:
        raise error(f"{what} {shown}: cannot be read ({_cause(exc)})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise error(f"{what} {shown}: not a regular file ({file_kind(st.st_mode)})")
        if st.st_size > limit:
            raise error(f"{what} {shown}: larger than {_mib(limit)} MiB ({st.st_size} bytes)")
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def missing(path: str | os.PathLike[str]) -> bool:
    """True only when nothing (not even a dangling link) is at ``path``; a path that cannot
    be looked up for another reason (too long, a file where a folder should be) is left to
    ``open_regular`` to name."""
    try:
        os.lstat(path)
    except FileNotFoundError:
        return True
    except (OSError, ValueError):
        return False
    return False


def read_bytes(path: str | os.PathLike[str], what: str, error: type[ToolkitError] = UsageError,
               cap: int | None = None) -> bytes:
    """The bytes of a regular file of kind ``what`` (see ``open_regular``), at most its cap
    (a file that grows past the cap while being read is refused too)."""
    limit = CAPS.get(what, 64 * MiB) if cap is None else cap
    with open_regular(path, what, error, limit) as fh:
        try:
            data = fh.read(limit + 1)
        except OSError as exc:
            raise error(f"{what} {escape(os.fspath(path))}: cannot be read ({_cause(exc)})") \
                from None
    if len(data) > limit:
        raise error(f"{what} {escape(os.fspath(path))}: larger than {_mib(limit)} MiB")
    return data


def refusal_reason(err: ToolkitError, path: str | os.PathLike[str], what: str) -> str:
    """Why ``read_bytes``/``read_text`` refused ``path``: their line without its leading
    ``"<what> <path>: "`` (a path may hold ": " itself, so the prefix is matched whole)."""
    return err.message.removeprefix(f"{what} {escape(os.fspath(path))}: ")


def read_text(path: str | os.PathLike[str], what: str, error: type[ToolkitError] = UsageError,
              cap: int | None = None) -> str:
    """``read_bytes`` decoded as UTF-8 (invalid UTF-8 is one ``error`` line)."""
    data = read_bytes(path, what, error, cap)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{what} {escape(os.fspath(path))}: not UTF-8 text ({exc.reason} at byte "
                    f"{exc.start})") from None


def _cause(exc: BaseException) -> str:
    """What went wrong, e.g. ``No space left on device (ENOSPC)``."""
    return os_cause(exc) if isinstance(exc, OSError) else str(exc) or type(exc).__name__


def _mib(n: int) -> str:
    return f"{n / MiB:g}"


def file_kind(mode: int) -> str:
    """What ``mode`` (``os.stat().st_mode``) is, in words for a message."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a file" if stat.S_ISREG(mode) else "not a file"


def usable_folder(path: str | os.PathLike[str], what: str) -> Path:
    """``path`` as a folder that exists (created if needed) and can be written; anything else
    is a one-line ``UsageError`` naming the path and the cause."""
    from toolkit.core.errors import describe_os_error

    p = Path(path)
    try:
        p.mkdir(parents=True, exist_ok=True)
        if not p.is_dir():
            raise NotADirectoryError(errno.ENOTDIR, "Not a directory", str(p))
        if not os.access(p, os.W_OK | os.X_OK):
            raise PermissionError(errno.EACCES, "Permission denied", str(p))
    except FileExistsError:
        raise UsageError(f"{what} {escape(os.fspath(p))}: a file is in the way, not a folder") \
            from None
    except OSError as err:
        raise UsageError(f"{what}: {describe_os_error(err)}") from None
    return p


def refuse_special(path: str | os.PathLike[str], what: str,
                   verb: str = "written") -> os.stat_result | None:
    """The ``lstat`` of what is at ``path`` (None: nothing), when it is a regular file; a
    symlink or anything else (a FIFO, a folder, a device) is a one-line ``UsageError`` naming
    it and what it is: an output is never written, nor a lock opened, through it."""
    shown = escape(os.fspath(path))
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise UsageError(f"{what} {shown}: cannot be {verb} ({_cause(exc)})") from None
    if not stat.S_ISREG(st.st_mode):
        kind = "a symlink" if stat.S_ISLNK(st.st_mode) else file_kind(st.st_mode)
        raise UsageError(f"{what} {shown}: {kind}, not {verb} through; valid: a regular "
                         "file or a new name")
    return st


def write_atomic(path: str | os.PathLike[str], data: str | bytes, what: str) -> Path:
    """Write ``data`` (text as UTF-8) to ``path`` whole or not at all: a new temporary file
    beside it (``O_EXCL``: never an existing name), synced, then ``os.replace``; a failure
    at any point leaves the earlier file as it was and no temporary file. A symlink, or
    anything there that is not a regular file (a FIFO, a folder), is never written through:
    a one-line ``UsageError`` naming it and what it is. The file keeps the earlier one's
    permissions (a new one: 0644)."""
    target = Path(path)
    shown = escape(os.fspath(target))
    st = refuse_special(target, what)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp",
                                   dir=target.parent if str(target.parent) else ".")
    except OSError as exc:
        raise UsageError(f"{what} {shown}: cannot be written ({_cause(exc)})") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data.encode("utf-8") if isinstance(data, str) else data)
            fh.flush()
            os.fchmod(fh.fileno(), stat.S_IMODE(st.st_mode) if st else 0o644)
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise UsageError(f"{what} {shown}: cannot be written ({_cause(exc)})") from None
        raise
    return target
