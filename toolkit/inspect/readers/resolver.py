"""Finding DT_NEEDED libraries and the symbols they define, like ld.so does.

Libraries come from the inputs (a wheel's members or files on disk) and from ``--with``
locations (folders, single libraries, other wheels; loaded on first use): the declared
providers. Libraries the judged manylinux policy allows (``allowed``) are taken as present
without a file. The system library search path is an input too (``system_dirs``), used only
to *name* where this machine has a library nothing else provides (:meth:`Resolver.on_host`):
it never satisfies a dependency, so a verdict never depends on the checking machine.
"""

from __future__ import annotations

import os
import posixpath
import shutil
import zipfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from toolkit.core.errors import CommandFailed, ElfError, UsageError
from toolkit.core.proc import run
from toolkit.inspect.readers.elf import ElfInfo
from toolkit.inspect.readers.members import load_file, read_one
from toolkit.inspect.readers.wheelzip import WheelZip

STD_DIRS = (
    "/lib64",
    "/usr/lib64",
    "/lib/x86_64-linux-gnu",
    "/usr/lib/x86_64-linux-gnu",
    "/lib",
    "/usr/lib",
    "/usr/local/lib",
)
LDCONFIG_TIMEOUT_S = 30.0


@dataclass(eq=False)
class Lib:
    """One ELF file somewhere: in the input, in a ``--with`` location or on the system."""

    path: str  # shown to the user (member path in a wheel, else a filesystem path)
    origin: str  # directory $ORIGIN expands to: "wheel:<dir>" in a wheel, else absolute
    info: ElfInfo | None
    error: str | None = None
    loader: Callable[[], ElfInfo] | None = None  # ``--with`` libraries load on first use

    def load(self) -> None:
        if self.loader is not None and self.info is None and self.error is None:
            try:
                self.info = self.loader()
            except (UsageError, OSError, ValueError) as err:
                self.error = str(err)
            self.loader = None


@cache
def _ldconfig() -> dict[str, tuple[str, ...]]:
    """``ldconfig -p``: library name -> paths (empty when ldconfig is missing or fails)."""
    exe = shutil.which("ldconfig") or next(
        (p for p in ("/sbin/ldconfig", "/usr/sbin/ldconfig") if os.path.exists(p)), None
    )
    out: dict[str, list[str]] = {}
    if exe:
        try:
            text = run([exe, "-p"], timeout=LDCONFIG_TIMEOUT_S, check=False).stdout
        except CommandFailed:
            text = ""
        for line in text.splitlines():
            name, sep, path = line.strip().partition(" => ")
            if sep:
                out.setdefault(name.split(" (")[0], []).append(path.strip())
    return {k: tuple(v) for k, v in out.items()}


def compatible(a: ElfInfo, b: ElfInfo) -> bool:
    """Could ld.so load one for the other (same machine, ELF class and data encoding)?"""
    return a.machine == b.machine and a.elf_class == b.elf_class and a.little == b.little


def host_system_dirs() -> tuple[str, ...]:
    """This machine's library search path: ``ldconfig -p``'s folders, then the standard ones."""
    dirs = {os.path.dirname(p): None for paths in _ldconfig().values() for p in paths}
    return tuple(dict.fromkeys([*dirs, *STD_DIRS]))


def defines(lib: Lib, name: bytes, version: str | None) -> bool:
    """Does ``lib`` define ``name`` (at ``version``, when the reference is versioned)?"""
    info = lib.info
    if info is None or name not in info.defined:
        return False
    if version is None:
        return True
    versions = info.defined_versions.get(name)
    return versions is None or version in versions or "" in versions


def _expand(paths: Iterable[str], obj: Lib) -> list[str]:
    """RPATH/RUNPATH entries of ``obj`` with $ORIGIN expanded ("wheel:" dirs in a wheel);
    empty elements (the current directory to ld.so) are left out: never the wheel's."""
    out = []
    for p in paths:
        if not p:
            continue
        if "$ORIGIN" in p or "${ORIGIN}" in p:
            origin = obj.origin
            if origin.startswith("wheel:"):
                rel = p.replace("${ORIGIN}", "$ORIGIN").replace("$ORIGIN", origin[6:] or ".")
                out.append("wheel:" + posixpath.normpath(rel))
            else:
                out.append(os.path.normpath(p.replace("${ORIGIN}", origin).replace("$ORIGIN", origin)))
        elif os.path.isabs(p) and not obj.origin.startswith("wheel:"):
            out.append(p)
    return out


class Resolver:
    """Finds DT_NEEDED libraries like ld.so: RPATH/RUNPATH ($ORIGIN), then the ``--with``
    libraries (as if already loaded, which is how torch's libraries reach extensions). A
    name in ``allowed`` (the policy's libraries, the dynamic loader) needs no file; any
    other name is missing, whatever this machine has (``system_dirs``, information only)."""

    def __init__(
        self,
        with_libs: dict[str, list[Lib]],
        system_dirs: Sequence[str] = (),
        allowed: frozenset[str] = frozenset(),
    ) -> None:
        self.with_libs = with_libs
        self.system_dirs = tuple(system_dirs)
        self.allowed = allowed
        self._fs: dict[str, Lib | None] = {}

    def fs_lib(self, path: str) -> Lib | None:
        real = os.path.realpath(path)
        if real not in self._fs:
            lib = None
            if os.path.isfile(real):
                try:
                    lib = Lib(path, os.path.dirname(os.path.abspath(path)), load_file(real))
                except (ElfError, OSError, ValueError):
                    lib = None
            self._fs[real] = lib
        return self._fs[real]

    def on_host(self, name: str, want: ElfInfo | None) -> str | None:
        """Where the system path has a loadable ``name`` (information, never a provider)."""
        for d in self.system_dirs:
            lib = self.fs_lib(os.path.join(d, name))
            if lib and lib.info and (want is None or compatible(lib.info, want)):
                return lib.path
        return None

    def find(self, name: str, obj: Lib, dirs: Sequence[str], index: dict[str, Lib]) -> Lib | None:
        if obj.info is None:
            return None
        for d in dirs:
            hit = self._in_dir(d, name, obj, index)
            if hit and hit.info and compatible(hit.info, obj.info):
                return hit
        for lib in self.with_libs.get(name, ()):
            lib.load()
            if lib.info and compatible(lib.info, obj.info):
                return lib
        return None

    def _in_dir(self, d: str, name: str, obj: Lib, index: dict[str, Lib]) -> Lib | None:
        """``name`` in a search folder: ``wheel:<dir>`` inside the input, or an absolute
        folder (on disk only for a library loaded from disk)."""
        if d.startswith("wheel:"):
            return index.get(posixpath.normpath(posixpath.join(d[6:], name)).lstrip("/"))
        if os.path.isabs(d):
            return index.get(os.path.normpath(os.path.join(d, name))) or (
                self.fs_lib(os.path.join(d, name)) if obj.origin.startswith("/") else None
            )
        return None

    def closure(
        self, lib: Lib, index: dict[str, Lib]
    ) -> tuple[list[Lib], list[tuple[str, str]], dict[str, Lib], list[str]]:
        """Breadth-first DT_NEEDED closure: (libraries, [(missing, needed by)], name -> lib).

        Names in ``allowed`` that no RPATH/RUNPATH or ``--with`` location provides are
        not missing: they are the fourth item (assumed present)."""
        order, missing, by_name, assumed = [lib], [], {}, []
        seen_ids, tried = {id(lib)}, set()
        queue: list[tuple[Lib, list[str]]] = [(lib, [])]
        while queue:
            obj, inherited = queue.pop(0)
            info = obj.info
            if info is None:
                continue
            own_rpath = [] if info.runpath else _expand(info.rpath, obj)
            dirs = own_rpath + inherited + _expand(info.runpath, obj)
            for name in info.needed:
                if name in tried:
                    continue
                tried.add(name)
                dep = self.find(name, obj, dirs, index)
                if dep is None:
                    if name in self.allowed:
                        assumed.append(name)
                    else:
                        missing.append((name, obj.path))
                    continue
                by_name[name] = dep
                if id(dep) not in seen_ids:
                    seen_ids.add(id(dep))
                    order.append(dep)
                    queue.append((dep, own_rpath + inherited))
        return order, missing, by_name, assumed


def with_libraries(paths: Sequence[str | os.PathLike[str]]) -> dict[str, list[Lib]]:
    """``--with`` locations, indexed by file name and loaded on first use."""
    out: dict[str, list[Lib]] = {}

    def add(name: str, lib: Lib, loader: Callable[[], ElfInfo]) -> None:
        lib.loader = loader
        out.setdefault(name, []).append(lib)

    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            for f in sorted(p.iterdir()):
                if f.is_file():
                    add(f.name, Lib(str(f), str(f.parent.resolve()), None), _file_loader(f))
        elif p.is_file() and zipfile.is_zipfile(p):
            wz = WheelZip.open(p)
            for info in wz.members:
                base = posixpath.basename(info.filename)
                if ".so" in base:
                    origin = "wheel:" + posixpath.dirname(info.filename)
                    lib = Lib(f"{p.name}:{info.filename}", origin, None)
                    add(base, lib, _member_loader(wz, info))
        elif p.is_file():
            lib = Lib(str(p), str(p.parent.resolve()), None)
            add(p.name, lib, _file_loader(p))
            try:
                elf = load_file(p)
                lib.info, lib.loader = elf, None
                if elf.soname and elf.soname != p.name:
                    out.setdefault(elf.soname, []).append(lib)
            except (ElfError, OSError) as err:
                raise UsageError(f"--with {p}: not a readable ELF library ({err})") from err
        else:
            raise UsageError(f"--with {raw}: no such file or directory")
    return out


def _file_loader(p: Path) -> Callable[[], ElfInfo]:
    return lambda: load_file(p)


def _member_loader(wz: WheelZip, info: zipfile.ZipInfo) -> Callable[[], ElfInfo]:
    return lambda: read_one(wz, info)
