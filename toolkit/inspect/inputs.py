"""The things ``toolkit check`` is given: wheels, folders of libraries or single libraries.

Each input becomes an :class:`Input`: its ELF files as :class:`Lib` objects, an index by
path (member name in a wheel, normalised absolute path on disk) for RPATH resolution, and
the findings of reading it (archive damage, files named like libraries that are not ELF).
"""

from __future__ import annotations

import os
import posixpath
import zipfile
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from toolkit.core.errors import ElfError, UsageError
from toolkit.core.files import missing, open_regular
from toolkit.core.text import escape
from toolkit.inspect.readers.elf import is_elf
from toolkit.inspect.readers.kpack import Archive
from toolkit.inspect.readers.kpackfiles import file_archive, folder_files, is_archive, member_archive
from toolkit.inspect.readers.members import load_file, read_members, start_pool, stop_pool
from toolkit.inspect.readers.resolver import Lib
from toolkit.inspect.readers.wheelzip import Budget, WheelZip
from toolkit.inspect.report import Finding, LibraryResult, WheelResult
from toolkit.inspect.rules.needed import Missing
from toolkit.inspect.rules.record import algorithm, read_record, record_findings

_NOT_ELF = "%s is named like a library but is not an ELF file"


@dataclass
class Input:
    path: Path
    wheel: WheelZip | None
    libs: list[Lib] = field(default_factory=list)
    index: dict[str, Lib] = field(default_factory=dict)
    result: WheelResult = field(default_factory=lambda: WheelResult(""))
    names: list[str] = field(default_factory=list)  # every member / file name
    pairs: list[tuple[Lib, LibraryResult]] = field(default_factory=list)
    digests: dict[str, str | None] = field(default_factory=dict)  # member -> RECORD-style digest
    missing: list[Missing] = field(default_factory=list)  # needed libraries nothing provided
    assumed: dict[str, list[str]] = field(default_factory=dict)  # library -> policy libraries it needs
    archives: list[Archive] = field(default_factory=list)  # its own kpack archives
    companions: list[Archive] = field(default_factory=list)  # the --with kpack archives

    def close(self) -> None:
        if self.wheel is not None:
            self.wheel.close()


def open_input(raw: str | os.PathLike[str], budget: Budget | None = None) -> Input:
    """A wheel (opened, not yet read), a folder or an ELF file; anything else is a UsageError."""
    p = Path(raw)
    if os.path.isdir(p):
        return Input(p, None)
    if missing(p):
        raise UsageError(f"{escape(p)}: no such file or directory")
    with open_regular(p, "wheel") as f:  # a FIFO, a device, an oversize file: one line
        head = f.read(4)
    if head.startswith(b"PK"):
        return Input(p, WheelZip.open(p, budget))
    if is_elf(head):
        return Input(p, None)
    raise UsageError(f"{p}: not a wheel, a directory or an ELF file")


def looks_native(name: str) -> bool:
    base = posixpath.basename(name)
    return base.endswith((".so", ".hsaco", ".co")) or ".so." in base


def collect_wheel(inp: Input, wz: WheelZip, jobs: int | None) -> None:
    """Read every member of a wheel once (within its budget): RECORD verified, ELF parsed."""
    pool = start_pool(wz, jobs)
    try:
        _collect_wheel(inp, wz, pool)
    finally:
        stop_pool(wz, pool)


def _collect_wheel(inp: Input, wz: WheelZip, pool: ProcessPoolExecutor | None) -> None:
    res = inp.result
    for prob in wz.problems:
        res.findings.append(Finding("archive", "error", prob.member, prob.message, cause="unsafe archive"))
    if not wz.zf.infolist():
        res.findings.append(Finding("archive", "error", None, "empty wheel: the archive holds no files"))
    entries, rec_findings = read_record(wz)
    res.findings += rec_findings
    algos = {n: algorithm(e) for n, e in entries.items()} if entries else {}
    todo: list[zipfile.ZipInfo] = []
    seen: dict[str, tuple[str | None, int]] = {}
    unread: set[str] = set()
    left = wz.budget.total
    for info in wz.members:
        inp.names.append(info.filename)
        why = wz.bomb_check(info)
        if why is None and info.file_size > left:
            why = (
                f"{info.filename}: the archive's members declare more than {left} inflated bytes "
                "in all (--max-total-size): not inspected"
            )
        if why:
            res.findings.append(Finding("archive", "error", info.filename, why, cause="over the size budget"))
            seen[info.filename] = (None, info.file_size)
            unread.add(info.filename)
            continue
        left -= info.file_size
        todo.append(info)
    res.members = len(wz.members)
    for info, r in zip(todo, read_members(wz, todo, algos, pool), strict=True):
        seen[info.filename] = (r.digest, r.size)
        inp.digests[info.filename] = r.digest
        if r.error:
            bad = Finding("archive", "error", info.filename, r.error, cause="unreadable member")
            res.findings.append(bad)
            unread.add(info.filename)
            continue
        if r.is_elf:
            origin = "wheel:" + posixpath.dirname(info.filename)
            lib = Lib(info.filename, origin, r.elf, r.elf_error)
            inp.libs.append(lib)
            inp.index[info.filename] = lib
        elif looks_native(info.filename):
            msg = _NOT_ELF % info.filename
            res.findings.append(
                Finding("elf", "error", info.filename, msg, cause="named like a library, not ELF")
            )
    if entries is not None:
        res.findings += record_findings(entries, seen, unread)


def _collect_file(inp: Input, f: Path) -> None:
    """One regular file of a folder: an ELF file is read (its errors kept), a file named like
    a library that is not ELF is a finding, anything else is left alone."""
    inp.names.append(str(f))
    try:
        with open(f, "rb") as fh:
            head = fh.read(4)
    except OSError as err:
        inp.result.findings.append(Finding("elf", "error", str(f), f"{f}: unreadable ({err})"))
        return
    if not is_elf(head):
        if looks_native(f.name):
            inp.result.findings.append(Finding("elf", "error", str(f), _NOT_ELF % f))
        return
    try:
        lib = Lib(str(f), str(f.parent.resolve()), load_file(f))
    except (ElfError, OSError, ValueError) as err:
        lib = Lib(str(f), str(f.parent.resolve()), None, str(err))
    inp.libs.append(lib)
    inp.index[os.path.normpath(str(f.resolve()))] = lib


def collect_dir(inp: Input) -> None:
    """Read the ELF files of a folder (recursively) or one ELF file."""
    root = inp.path
    if root.is_file():
        files = [root]
    else:
        files = sorted(Path(d) / f for d, _, fs in os.walk(root) for f in fs)
    for f in files:
        if not f.is_symlink() and f.is_file():
            _collect_file(inp, f)
    if not inp.libs and not inp.result.findings and not (root.is_dir() and folder_files(root)):
        raise UsageError(f"{escape(root)}: no ELF files found (give wheels, folders of .so "
                         "files or .so files)")
    # symlinks (libfoo.so -> libfoo.so.1.2) resolve names inside the folder
    for f in files:
        if f.is_symlink() and f.exists():
            target = inp.index.get(os.path.normpath(str(f.resolve())))
            if target:
                inp.index[os.path.normpath(str(f.parent.resolve() / f.name))] = target


def collect_archives(inp: Input) -> None:
    """Read the input's kpack archives; one that cannot be read is a finding (as a bad
    offload bundle is), its code counting for no target."""
    wz = inp.wheel
    if wz is not None:
        todo: list[tuple[str, Callable[[], Archive]]] = [
            (i.filename, partial(member_archive, wz, i, i.filename)) for i in wz.members
            if is_archive(i.filename) and wz.bomb_check(i) is None]
    else:
        folder = folder_files(inp.path) if inp.path.is_dir() else []
        todo = [(str(f), partial(file_archive, f)) for f in folder]
    for name, read in todo:
        try:
            inp.archives.append(read())
        except UsageError as err:  # (KpackError, MemberError)
            msg = f"unreadable kpack archive: {err}"  # (the error names the archive)
            inp.result.findings.append(Finding("gpu-code", "error", name, msg,
                                               cause="GPU code present but unreadable"))
