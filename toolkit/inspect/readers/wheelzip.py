"""Safe, in-place reading of wheel archives.

Nothing is extracted to disk. Member names are checked (no ``..``, no absolute paths),
inflation is bounded (a member never yields more than it declares, and the declared sizes
are capped per member, per archive and by ratio: :class:`Budget`, judged before inflating).
:mod:`toolkit.inspect.readers.inflate` inflates members straight from the archive's bytes.
"""

from __future__ import annotations

import os
import struct
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from toolkit.core.errors import MemberError, WheelZipError
from toolkit.core.text import escape, quoted

MAX_MEMBER_BYTES = 4 << 30  # default: declared inflated size of one member
MAX_TOTAL_BYTES = 16 << 30  # default: declared inflated size of all members
MAX_RATIO = 200  # default: inflated/compressed above this (for large members) is a bomb
RATIO_FLOOR = 64 << 20  # ratios only matter for members larger than this
MAX_SMALL = 64 << 20  # METADATA, WHEEL, RECORD
CHUNK = 1 << 20
# what zipfile/zlib raise for a damaged, truncated or unsupported member
_READ_ERRORS = (
    zipfile.BadZipFile,
    OSError,
    EOFError,
    zlib.error,
    ValueError,
    NotImplementedError,
    RuntimeError,
)


@dataclass(frozen=True)
class Budget:
    """What a wheel may make us inflate, checked on the declared sizes before inflating.

    ``None`` fields take the module defaults when the budget is used (so tests may patch
    them)."""

    member_bytes: int | None = None
    total_bytes: int | None = None
    ratio: float | None = None

    @property
    def member(self) -> int:
        return MAX_MEMBER_BYTES if self.member_bytes is None else self.member_bytes

    @property
    def total(self) -> int:
        return MAX_TOTAL_BYTES if self.total_bytes is None else self.total_bytes

    @property
    def max_ratio(self) -> float:
        return MAX_RATIO if self.ratio is None else self.ratio


@dataclass
class Problem:
    member: str
    message: str


# general purpose flag bits (APPNOTE 4.4.4) with which zipfile, so pip, cannot extract a member
_UNEXTRACTABLE = ((0x01, "encrypted"), (0x20, "compressed patched data"),
                  (0x40, "strong encryption"))


def _unextractable(flags: int) -> str | None:
    """What makes a member unextractable, from its central-directory flags; None: nothing."""
    return next((why for bit, why in _UNEXTRACTABLE if flags & bit), None)


@dataclass
class WheelZip:
    path: Path
    zf: zipfile.ZipFile
    members: list[zipfile.ZipInfo]  # safe, regular files
    problems: list[Problem] = field(default_factory=list)
    budget: Budget = field(default_factory=Budget)

    @classmethod
    def open(cls, path: str | os.PathLike[str], budget: Budget | None = None) -> WheelZip:
        p = Path(path)
        try:
            zf = zipfile.ZipFile(p)
            infos = zf.infolist()
        except (zipfile.BadZipFile, OSError, ValueError, EOFError, NotImplementedError) as err:
            raise WheelZipError(f"{escape(p)}: not a readable zip archive ({escape(err)})") from err
        members, problems, seen = [], [], set()
        for info in infos:
            name = info.filename
            if not safe_name(name):
                problems.append(Problem(name, f"unsafe path in archive: {name!r}"))
                continue
            if name in seen:
                problems.append(Problem(name, f"duplicate archive entry {name!r}"))
                continue
            seen.add(name)
            if info.is_dir():
                continue
            unreadable = _unextractable(info.flag_bits)
            if unreadable:
                problems.append(Problem(name, f"{unreadable} archive entry {name!r}"))
                continue
            members.append(info)
        return cls(p, zf, members, problems, budget or Budget())

    def close(self) -> None:
        self.zf.close()

    def __enter__(self) -> WheelZip:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def bomb_check(self, info: zipfile.ZipInfo) -> str | None:
        """Why a member must not be inflated (judged on its declared sizes), or None."""
        b = self.budget
        if info.file_size > b.member:
            return (
                f"{info.filename} declares {info.file_size} inflated bytes, over the "
                f"{_human(b.member)} limit (--max-member-size): not inspected"
            )
        if info.file_size > RATIO_FLOOR and info.file_size > b.max_ratio * max(info.compress_size, 1):
            return (
                f"{info.filename} inflates {info.file_size // max(info.compress_size, 1)}:1, "
                f"over the {b.max_ratio:g}:1 limit (a zip bomb? --max-ratio): not inspected"
            )
        return None

    def data_offset(self, info: zipfile.ZipInfo) -> int:
        """Where a member's compressed bytes start in the archive (from its local header)."""
        fd = self._fd()
        if info.header_offset < 0:  # zipfile adds the archive's shift: a lying directory
            raise MemberError(f"{info.filename}: its local file header would be at offset "
                              f"{info.header_offset}, before the archive starts")
        local = os.pread(fd, 30, info.header_offset)
        if len(local) < 30 or local[:4] != b"PK\x03\x04":
            raise MemberError(f"{info.filename}: bad local file header")
        name_len, extra_len = struct.unpack_from("<HH", local, 26)
        raw = os.pread(fd, name_len, info.header_offset + 30)
        # as zipfile (and so pip) does: the local header must name the member the central
        # directory names, else the member cannot be extracted
        name = raw.decode("utf-8" if info.flag_bits & 0x800 else "cp437", errors="replace")
        if name != info.orig_filename:
            raise MemberError(f"{info.filename}: the local file header names another file "
                              f"({quoted(name)}); pip cannot extract this member")
        return int(info.header_offset + 30 + name_len + extra_len)

    def _fd(self) -> int:
        fp = self.zf.fp
        if fp is None:
            raise MemberError("the archive is closed")
        return fp.fileno()

    def pread(self, n: int, offset: int) -> bytes:
        return os.pread(self._fd(), n, offset)

    def stream(self, info: zipfile.ZipInfo, chunk: int = CHUNK) -> Iterator[bytes]:
        """Inflate a member chunk by chunk, never past its declared size; the CRC and the size
        are verified at the end. Problems raise ``MemberError``.
        """
        why = self.bomb_check(info)
        if why:
            raise MemberError(why)
        total = 0
        try:
            with self.zf.open(info) as f:
                while data := f.read(chunk):
                    total += len(data)
                    yield data
        except _READ_ERRORS as err:
            raise MemberError(f"{info.filename}: corrupt or truncated archive member ({err})") from err
        if total != info.file_size:
            raise MemberError(f"{info.filename}: inflated to {total} bytes, {info.file_size} declared")

    def read_small(self, info: zipfile.ZipInfo) -> bytes:
        if info.file_size > MAX_SMALL:
            raise MemberError(f"{info.filename}: {info.file_size} bytes is too large")
        return b"".join(self.stream(info))


def _human(n: int) -> str:
    return f"{n / (1 << 30):g} GiB" if n >= 1 << 30 else f"{n / (1 << 20):g} MiB"


def safe_name(name: str) -> bool:
    """A member name that stays inside the extraction root on every platform."""
    if not name or "\0" in name or name.startswith(("/", "\\")) or "\\" in name:
        return False
    if len(name) > 1 and name[1] == ":":  # C:/...
        return False
    return ".." not in name.split("/")
