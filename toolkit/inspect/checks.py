"""Wheel inspection: symbol versions and manylinux policy, undefined symbols, required
symbols, GPU code targets and packaging hygiene, for wheels or folders of libraries.

``check_paths`` is the library entry point (the CLI is ``toolkit.cli.commands.check``). It
never prints. Wheels are read in place: only ELF members are inflated, in a process pool
when there is enough to do, and only the sections the checks need are kept in memory.
"""

from __future__ import annotations

import email.parser
import fnmatch
import mmap
import os
import posixpath
import re
import shutil
import subprocess
import zipfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from functools import cache
from multiprocessing import get_context
from pathlib import Path
from typing import Any, Literal

from packaging.utils import (
    InvalidWheelFilename,
    canonicalize_name,
    parse_wheel_filename,
)
from packaging.version import InvalidVersion, Version

from toolkit.core.errors import UsageError
from toolkit.core.gfx import TargetId, parse_target, runs_on, split_tokens
from toolkit.inspect import wheelzip
from toolkit.inspect.demangle import demangle_many, source_name_fragment
from toolkit.inspect.elf import (
    ElfError,
    ElfInfo,
    Image,
    NeedRanges,
    is_elf,
    parse_elf,
    parse_header,
    section_table_range,
    segment_ranges,
)
from toolkit.inspect.offload import gpu_targets, read_bundles
from toolkit.inspect.policy import (
    ARCH_OF_MACHINE,
    Policy,
    best_policy,
    get_policy,
    max_versions,
    policy_for_tag,
    version_key,
)
from toolkit.inspect.wheelzip import MemberError, WheelZip

Severity = Literal["error", "warning", "info"]
HEAD_KEEP = 16 << 20  # bytes kept from the start of each ELF member while inflating it
TAIL_KEEP = 1 << 20  # bytes kept before the section header table (section names)
POOL_MIN_BYTES = 24 << 20  # compressed ELF bytes worth a process pool
STD_DIRS = ("/lib64", "/usr/lib64", "/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
            "/lib", "/usr/lib", "/usr/local/lib")  # fmt: skip
INTERPRETER_PREFIXES = (b"Py", b"_Py")  # defined by the Python interpreter loading the module
TORCH_LIBS = ("libtorch", "libtorch_cpu", "libtorch_cuda", "libtorch_hip", "libtorch_python",
              "libtorch_global_deps", "libc10", "libc10_hip", "libc10_cuda", "libshm",
              "libcaffe2_nvrtc")  # fmt: skip
ROCM_LIBS = ("libamdhip64", "libhiprtc", "libhiprtc-builtins", "librocblas", "libhipblas",
             "libhipblaslt", "libMIOpen", "librccl", "libhsa-runtime64", "libhsakmt",
             "libamd_comgr", "librocsolver", "libhipsolver", "librocfft", "libhipfft",
             "librocrand", "libhiprand", "librocsparse", "libhipsparse", "libhipsparselt",
             "libroctx64", "libroctracer64", "librocm_smi64", "libamd_smi", "librocprofiler64",
             "librocprofiler-register", "librocm-core", "libhipfort", "libmagma")  # fmt: skip
_BUNDLED = re.compile(r"^(" + "|".join(map(re.escape, TORCH_LIBS + ROCM_LIBS)) + r")(?:[.-]|$)")
_NOT_ELF = "%s is named like a library but is not an ELF file"
UNSAFE_RPATH = re.compile(r"^(/tmp|/var/tmp|/home|/root|/build|/workspace|/__w|/github|/io)(/|$)")
GENERIC_TARGETS = {
    "gfx9-generic": ("gfx900", "gfx902", "gfx904", "gfx906", "gfx909", "gfx90c"),
    "gfx9-4-generic": ("gfx940", "gfx941", "gfx942", "gfx950"),
    "gfx10-1-generic": ("gfx1010", "gfx1011", "gfx1012", "gfx1013"),
    "gfx10-3-generic": ("gfx1030", "gfx1031", "gfx1032", "gfx1033", "gfx1034", "gfx1035",
                        "gfx1036"),
    "gfx11-generic": ("gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151",
                      "gfx1152", "gfx1153"),
    "gfx12-generic": ("gfx1200", "gfx1201"),
}  # fmt: skip


# ------------------------------------------------------------------------------ results
@dataclass(frozen=True)
class Finding:
    check: str  # policy, undefined-symbol, missing-library, symbol-version, required-symbol,
    # gpu-targets, rpath, bundled-library, metadata, platform-tag, elf, archive
    severity: Severity
    library: str | None
    message: str

    def to_json(self) -> dict[str, Any]:
        return {"check": self.check, "severity": self.severity, "library": self.library,
                "message": self.message}  # fmt: skip


@dataclass
class LibraryResult:
    path: str
    kind: str  # shared-library, executable, object, gpu-code-object, unreadable
    max_versions: dict[str, str] = field(default_factory=dict)
    policy: str | None = None
    gpu_targets: list[str] = field(default_factory=list)
    unresolved: list[dict[str, str | None]] = field(default_factory=list)
    needed: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "kind": self.kind, "max_versions": self.max_versions,
                "policy": self.policy, "gpu_targets": self.gpu_targets,
                "unresolved": self.unresolved, "needed": self.needed,
                "missing": self.missing}  # fmt: skip


@dataclass
class WheelResult:
    path: str
    name: str | None = None
    version: str | None = None
    tags: list[str] = field(default_factory=list)
    policy: str | None = None
    findings: list[Finding] = field(default_factory=list)
    libraries: list[LibraryResult] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not any(f.severity == "error" for f in self.findings)

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "name": self.name, "version": self.version,
                "tags": self.tags, "policy": self.policy, "ok": self.ok,
                "findings": [f.to_json() for f in self.findings],
                "libraries": [lib.to_json() for lib in self.libraries]}  # fmt: skip


@dataclass
class Report:
    wheels: list[WheelResult]

    @property
    def ok(self) -> bool:
        return all(w.ok for w in self.wheels)

    @property
    def findings(self) -> list[Finding]:
        return [f for w in self.wheels for f in w.findings]

    def to_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "wheels": [w.to_json() for w in self.wheels]}


# ------------------------------------------------------------------------------ loading
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


def _slice(chunks: Iterable[bytes], start: int, end: int) -> Iterator[memoryview]:
    pos = 0
    for chunk in chunks:
        a, b = max(start, pos), min(end, pos + len(chunk))
        if a < b:
            yield memoryview(chunk)[a - pos : b - pos]
        pos += len(chunk)
        if pos >= end:
            return


def _inflate(wz: WheelZip, info: zipfile.ZipInfo, ranges: list[tuple[int, int]], *,
             full: bool) -> list[tuple[int, bytearray]]:  # fmt: skip
    """One streaming pass over a member, keeping ``ranges`` (grown from the ELF header)."""
    held: dict[tuple[int, int], bytearray] = {r: bytearray() for r in ranges}
    stop = None if full else max(b for _, b in ranges)
    pos, first = 0, full
    for chunk in wz.stream(info, stop=stop):
        if first:
            first = False
            for r in _header_ranges(chunk, info.file_size):
                held.setdefault(r, bytearray())
        end = pos + len(chunk)
        view = memoryview(chunk)
        for (a, b), buf in held.items():
            if a < end and b > pos:
                buf += view[max(a, pos) - pos : min(b, end) - pos]
        pos = end
    return [(a, buf) for (a, _), buf in held.items() if buf]


def _header_ranges(first: bytes, size: int) -> list[tuple[int, int]]:
    """From the first chunk: the dynamic segment, the section table and the bytes before it."""
    try:
        img = Image(size, [(0, first)])
        hdr = parse_header(img)
        out = segment_ranges(img, hdr, 2)
    except (ElfError, NeedRanges):
        return []
    if hdr.shoff:
        a, b = section_table_range(hdr)
        out.append((max(0, a - TAIL_KEEP), b))
    return [(a, min(b, size)) for a, b in out if a < b]


def load_member(wz: WheelZip, info: zipfile.ZipInfo) -> ElfInfo:
    """Parse one ELF member of a wheel, inflating it once (more only when needed)."""
    pieces = _inflate(wz, info, [(0, min(HEAD_KEEP, info.file_size))], full=True)
    img = Image(info.file_size, pieces)
    for _ in range(4):
        try:
            elf = parse_elf(img)
            break
        except NeedRanges as need:
            for a, buf in _inflate(wz, info, need.ranges, full=False):
                img.add(a, buf)
    else:
        raise ElfError("could not gather the sections it needs")
    if elf.fatbin_range:
        off, size = elf.fatbin_range
        try:
            chunks = _slice(wz.stream(info, stop=off + size), off, off + size)
            elf.gpu_targets = gpu_targets(read_bundles(chunks, size))
        except ElfError as err:
            elf.problems.append(f".hip_fatbin: {err}")
        elf.fatbin_range = None
    return elf


def load_file(path: str | os.PathLike[str]) -> ElfInfo:
    """Parse an ELF file on disk through mmap (only the pages read are touched)."""
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size == 0:
            raise ElfError("empty file")
        mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    try:
        return parse_elf(Image.whole(memoryview(mm)))
    finally:
        try:
            mm.close()
        except BufferError:  # a view is still referenced (an exception frame); GC closes it
            pass


_WORKER_ZIPS: dict[str, WheelZip] = {}


def _member_job(wheel: str, name: str) -> ElfInfo | str:
    wz = _WORKER_ZIPS.get(wheel)
    if wz is None:
        wz = _WORKER_ZIPS[wheel] = WheelZip.open(wheel)
    try:
        return load_member(wz, wz.zf.getinfo(name))
    except UsageError as err:
        return str(err)


def _load_members(wz: WheelZip, infos: list[zipfile.ZipInfo], jobs: int | None) -> list[ElfInfo | str]:
    """Load ELF members, in a process pool when they are big enough to pay for it."""
    workers = min(jobs or os.cpu_count() or 1, len(infos), 8)
    big = sum(i.compress_size for i in infos) >= POOL_MIN_BYTES
    if workers > 1 and big and "fork" in _start_methods():
        order = sorted(range(len(infos)), key=lambda k: -infos[k].compress_size)
        out: list[ElfInfo | str] = [""] * len(infos)
        with ProcessPoolExecutor(workers, mp_context=get_context("fork")) as pool:
            futs = {k: pool.submit(_member_job, str(wz.path), infos[k].filename) for k in order}
            for k, fut in futs.items():
                out[k] = fut.result()
        return out
    results: list[ElfInfo | str] = []
    for info in infos:
        try:
            results.append(load_member(wz, info))
        except UsageError as err:
            results.append(str(err))
    return results


def _start_methods() -> list[str]:
    import multiprocessing

    return multiprocessing.get_all_start_methods()


# ------------------------------------------------------------------------------ resolution
@cache
def _ldconfig() -> dict[str, tuple[str, ...]]:
    exe = shutil.which("ldconfig") or next(
        (p for p in ("/sbin/ldconfig", "/usr/sbin/ldconfig") if os.path.exists(p)), None
    )
    out: dict[str, list[str]] = {}
    if exe:
        try:
            text = subprocess.run([exe, "-p"], capture_output=True, text=True, timeout=30).stdout
        except (OSError, subprocess.SubprocessError):
            text = ""
        for line in text.splitlines():
            name, sep, path = line.strip().partition(" => ")
            if sep:
                out.setdefault(name.split(" (")[0], []).append(path.strip())
    return {k: tuple(v) for k, v in out.items()}


class Resolver:
    """Finds DT_NEEDED libraries like ld.so: RPATH/RUNPATH ($ORIGIN), then the ``--with``
    libraries (as if already loaded, which is how torch's libraries reach extensions), then
    the system (ld.so.cache and the standard directories)."""

    def __init__(self, with_libs: dict[str, list[Lib]]) -> None:
        self.with_libs = with_libs
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

    def system(self, name: str, want: ElfInfo) -> Lib | None:
        paths = list(_ldconfig().get(name, ())) + [os.path.join(d, name) for d in STD_DIRS]
        for p in paths:
            lib = self.fs_lib(p)
            if lib and lib.info and _compatible(lib.info, want):
                return lib
        return None

    def find(self, name: str, obj: Lib, dirs: Sequence[str], index: dict[str, Lib]) -> Lib | None:
        assert obj.info is not None
        for d in dirs:
            if d.startswith("wheel:"):
                hit = index.get(posixpath.normpath(posixpath.join(d[6:], name)).lstrip("/"))
                if hit:
                    return hit
            elif os.path.isabs(d):
                hit = index.get(os.path.normpath(os.path.join(d, name))) or (
                    self.fs_lib(os.path.join(d, name)) if obj.origin.startswith("/") else None
                )
                if hit and hit.info and _compatible(hit.info, obj.info):
                    return hit
        for lib in self.with_libs.get(name, ()):
            lib.load()
            if lib.info and _compatible(lib.info, obj.info):
                return lib
        return self.system(name, obj.info)

    def closure(
        self, lib: Lib, index: dict[str, Lib]
    ) -> tuple[list[Lib], list[tuple[str, str]], dict[str, Lib]]:
        """Breadth-first DT_NEEDED closure: (libraries, [(missing, needed by)], name -> lib)."""
        order, missing, by_name = [lib], [], {}
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
                    missing.append((name, obj.path))
                    continue
                by_name[name] = dep
                if id(dep) not in seen_ids:
                    seen_ids.add(id(dep))
                    order.append(dep)
                    queue.append((dep, own_rpath + inherited))
        return order, missing, by_name


def _expand(paths: Iterable[str], obj: Lib) -> list[str]:
    out = []
    for p in paths:
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


def _compatible(a: ElfInfo, b: ElfInfo) -> bool:
    return a.machine == b.machine and a.elf_class == b.elf_class


def _defines(lib: Lib, name: bytes, version: str | None) -> bool:
    info = lib.info
    if info is None or name not in info.defined:
        return False
    if version is None:
        return True
    versions = info.defined_versions.get(name)
    return versions is None or version in versions or "" in versions


def _with_libraries(paths: Sequence[str | os.PathLike[str]]) -> dict[str, list[Lib]]:
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
    return lambda: load_member(wz, info)


# ------------------------------------------------------------------------------ inputs
@dataclass
class _Input:
    path: Path
    wheel: WheelZip | None
    libs: list[Lib] = field(default_factory=list)
    index: dict[str, Lib] = field(default_factory=dict)
    result: WheelResult = field(default_factory=lambda: WheelResult(""))
    names: list[str] = field(default_factory=list)  # every member / file name
    pairs: list[tuple[Lib, LibraryResult]] = field(default_factory=list)


def _open_input(raw: str | os.PathLike[str]) -> _Input:
    p = Path(raw)
    if p.is_dir():
        return _Input(p, None)
    if not p.is_file():
        raise UsageError(f"{p}: no such file or directory")
    with open(p, "rb") as f:
        head = f.read(4)
    if head.startswith(b"PK"):
        return _Input(p, WheelZip.open(p))
    if is_elf(head):
        return _Input(p, None)
    raise UsageError(f"{p}: not a wheel, a directory or an ELF file")


def _collect_wheel(inp: _Input, jobs: int | None) -> None:
    wz = inp.wheel
    assert wz is not None
    res = inp.result
    for prob in wz.problems:
        res.findings.append(Finding("archive", "error", prob.member, prob.message))
    if not wz.zf.infolist():
        res.findings.append(Finding("archive", "error", None, "empty wheel: the archive holds no files"))
    candidates: list[zipfile.ZipInfo] = []
    budget = wheelzip.MAX_TOTAL_BYTES
    for info in wz.members:
        inp.names.append(info.filename)
        try:
            head = wz.sniff(info)
        except MemberError as err:
            res.findings.append(Finding("archive", "error", info.filename, str(err)))
            continue
        if is_elf(head):
            why = wz.bomb_check(info)
            if why is None and info.file_size > budget:
                why = (f"{info.filename}: the archive's ELF members declare more than "
                       f"{wheelzip.MAX_TOTAL_BYTES} inflated bytes in all: not inspected")
            if why:
                res.findings.append(Finding("archive", "error", info.filename, why))
            else:
                budget -= info.file_size
                candidates.append(info)
        elif _looks_native(info.filename):
            res.findings.append(Finding("elf", "error", info.filename, _NOT_ELF % info.filename))
    for info, loaded in zip(candidates, _load_members(wz, candidates, jobs), strict=True):
        origin = "wheel:" + posixpath.dirname(info.filename)
        if isinstance(loaded, str):
            lib = Lib(info.filename, origin, None, loaded)
        else:
            lib = Lib(info.filename, origin, loaded)
        inp.libs.append(lib)
        inp.index[info.filename] = lib


def _looks_native(name: str) -> bool:
    base = posixpath.basename(name)
    return base.endswith((".so", ".hsaco", ".co")) or ".so." in base


def _collect_dir(inp: _Input) -> None:
    root = inp.path
    files = [root] if root.is_file() else sorted(
        Path(d) / f for d, _, fs in os.walk(root) for f in fs
    )
    for f in files:
        if f.is_symlink() or not f.is_file():
            continue
        inp.names.append(str(f))
        try:
            with open(f, "rb") as fh:
                head = fh.read(4)
        except OSError as err:
            inp.result.findings.append(Finding("elf", "error", str(f), f"{f}: unreadable ({err})"))
            continue
        if not is_elf(head):
            if _looks_native(f.name):
                inp.result.findings.append(Finding("elf", "error", str(f), _NOT_ELF % f))
            continue
        try:
            lib = Lib(str(f), str(f.parent.resolve()), load_file(f))
        except (ElfError, OSError, ValueError) as err:
            lib = Lib(str(f), str(f.parent.resolve()), None, str(err))
        inp.libs.append(lib)
        inp.index[os.path.normpath(str(f.resolve()))] = lib
    if not inp.libs and not inp.result.findings:
        raise UsageError(f"{root}: no ELF files found (give wheels, folders of .so files or .so files)")
    # symlinks (libfoo.so -> libfoo.so.1.2) resolve names inside the folder
    for f in files:
        if f.is_symlink() and f.exists():
            target = inp.index.get(os.path.normpath(str(f.resolve())))
            if target:
                inp.index[os.path.normpath(str(f.parent.resolve() / f.name))] = target


# ------------------------------------------------------------------------------ checks
@dataclass
class _Pending:
    """Per-library results that wait for the one batched demangling run."""

    inp: _Input
    lib: Lib
    result: LibraryResult
    unresolved: list[tuple[bytes, str | None]]


def check_paths(
    paths: Sequence[str | os.PathLike[str]],
    *,
    gfx: Sequence[str] = (),
    policy: str | None = None,
    with_paths: Sequence[str | os.PathLike[str]] = (),
    required_symbols: Sequence[str] = (),
    allow_bundled: Sequence[str] = (),
    jobs: int | None = None,
) -> Report:
    """Check wheels, folders of libraries or single libraries; never prints.

    Bad requests (missing paths, unreadable archives, bad gfx ids or policy names) raise
    ``UsageError`` before anything is inspected; problems found in the inputs are
    ``Finding``s in the report.
    """
    if not paths:
        raise UsageError("nothing to check: give at least one wheel, folder or library")
    targets = expand_targets(gfx)
    req_policy = get_policy(policy) if policy else None
    inputs = [_open_input(p) for p in paths]
    with_libs = _with_libraries(with_paths)
    resolver = Resolver(with_libs)
    pending: list[_Pending] = []
    try:
        for inp in inputs:
            inp.result = WheelResult(str(inp.path))
            if inp.wheel is not None:
                _collect_wheel(inp, jobs)
                _check_metadata(inp)
            else:
                _collect_dir(inp)
            pending += _check_libraries(inp, resolver, targets, req_policy, allow_bundled)
    finally:
        for inp in inputs:
            if inp.wheel is not None:
                inp.wheel.close()
    # one demangling run for everything that will be shown or matched
    cands = {inp.path: _required_candidates(inp, required_symbols) for inp in inputs}
    names = {n.decode("utf-8", "replace") for p in pending for n, _ in p.unresolved}
    names |= {n for c in cands.values() for n in c}
    demangled = demangle_many(names)
    for p in pending:
        for raw, ver in p.unresolved:
            mangled = raw.decode("utf-8", "replace")
            nice = demangled.get(mangled, mangled)
            shown = f"{nice} ({mangled}{'@' + ver if ver else ''})" if nice != mangled else (
                mangled + (f"@{ver}" if ver else ""))  # fmt: skip
            p.result.unresolved.append({"symbol": mangled, "demangled": nice, "version": ver})
            p.inp.result.findings.append(Finding("undefined-symbol", "error", p.lib.path,
                f"import would fail: undefined symbol {shown} in {p.lib.path}"))  # fmt: skip
    for inp in inputs:
        _check_required(inp, required_symbols, cands[inp.path], demangled)
        _check_policy(inp, req_policy)
        inp.result.findings.sort(key=lambda f: (f.severity != "error", f.check, f.library or ""))
    return Report([inp.result for inp in inputs])


def expand_targets(tokens: Sequence[str]) -> list[TargetId]:
    """gfx ids and (when the matrix is available) family names -> target ids."""
    if not tokens:
        return []
    words = split_tokens(tokens)
    try:
        from toolkit.data.matrix import load_matrix

        expanded: Sequence[str] = load_matrix().expand_gfx(words)
    except UsageError:
        raise
    except Exception:  # the matrix is unavailable or broken: plain gfx ids only
        expanded = words
    return [parse_target(t) for t in expanded]


def code_runs_on(code: str, device: TargetId) -> bool:
    """Can a code object built for ``code`` (maybe a generic target) run on ``device``?"""
    proc, *feats = code.split(":")
    if proc in GENERIC_TARGETS:
        if device.processor not in GENERIC_TARGETS[proc]:
            return False
        code = ":".join([device.processor, *feats])
    try:
        return runs_on(parse_target(code), device)
    except UsageError:
        return False


def _kind(info: ElfInfo) -> str:
    if info.is_gpu_code_object:
        return "gpu-code-object"
    return {1: "object", 2: "executable", 3: "shared-library"}.get(info.type, "other")


def _check_libraries(inp: _Input, resolver: Resolver, targets: list[TargetId],
                     req_policy: Policy | None, allow: Sequence[str]) -> list[_Pending]:  # fmt: skip
    res, out = inp.result, []
    basenames = {posixpath.basename(n) for n in inp.index}
    own = canonicalize_name(res.name) if res.name else ""
    code_objects: list[str] = []
    for lib in inp.libs:
        f = res.findings
        if lib.info is None:
            res.libraries.append(LibraryResult(lib.path, "unreadable"))
            msg = f"{lib.path}: corrupt or unreadable ELF ({lib.error})"
            f.append(Finding("elf", "error", lib.path, msg))
            continue
        info = lib.info
        lr = LibraryResult(lib.path, _kind(info), needed=list(info.needed),
                           gpu_targets=list(info.gpu_targets))  # fmt: skip
        res.libraries.append(lr)
        inp.pairs.append((lib, lr))
        for prob in info.problems:
            f.append(Finding("elf", "warning", lib.path, f"{lib.path}: {prob}"))
        if info.is_gpu_code_object:
            code_objects.extend(info.gpu_targets)
            continue
        arch = ARCH_OF_MACHINE.get(info.machine)
        versions = [v for file, vs in info.version_needs.items() if file not in basenames for v in vs]
        lr.max_versions = max_versions(versions)
        if arch:
            lr.policy = best_policy(versions, arch).name
        _hygiene(inp, lib, info, own, allow)
        if targets and info.gpu_targets:
            for t in targets:
                if not any(code_runs_on(c, t) for c in info.gpu_targets):
                    f.append(Finding("gpu-targets", "error", lib.path,
                        f"{lib.path} has no code object for {t} (carries "
                        f"{', '.join(info.gpu_targets)}); it would fail with "
                        "hipErrorNoBinaryForGpu on that GPU"))  # fmt: skip
        if info.type == 1:  # relocatable objects are not loaded
            continue
        order, missing, by_name = resolver.closure(lib, inp.index)
        lr.missing = [m for m, _ in missing]
        for name, needer in missing:
            f.append(Finding("missing-library", "error", lib.path,
                f"needed library {name} not found (needed by {needer}); its symbols were not "
                "checked (pass --with DIR holding it)"))  # fmt: skip
        bad_versions = _check_version_needs(inp, lib, info, by_name)
        if missing:
            continue
        unresolved = [
            (name, ver) for name, ver in info.undefined
            if not name.startswith(INTERPRETER_PREFIXES) and ver not in bad_versions
            and not any(_defines(d, name, ver) for d in order[1:])
        ]  # fmt: skip
        out.append(_Pending(inp, lib, lr, unresolved))
    if targets and code_objects:
        for t in targets:
            if not any(code_runs_on(c, t) for c in code_objects):
                res.findings.append(Finding("gpu-targets", "error", None,
                    f"no standalone code object (.co/.hsaco) for {t}; they cover "
                    f"{', '.join(sorted(set(code_objects)))}"))  # fmt: skip
    return out


def _check_version_needs(inp: _Input, lib: Lib, info: ElfInfo, by_name: dict[str, Lib]) -> set[str]:
    bad: set[str] = set()
    for file, versions in info.version_needs.items():
        dep = by_name.get(file)
        if dep is None or dep.info is None or not dep.info.version_defs:
            continue
        for v in versions:
            if v not in dep.info.version_defs:
                bad.add(v)
                prefix = v.partition("_")[0]
                top = max_versions(dep.info.version_defs).get(prefix)
                have = f"{prefix}_{top}" if top else None
                inp.result.findings.append(Finding("symbol-version", "error", lib.path,
                    f"import would fail: version `{v}' not found in {file} (required by "
                    f"{lib.path}; {dep.path} provides up to {have or 'none of that prefix'})"))  # fmt: skip
    return bad


def _hygiene(inp: _Input, lib: Lib, info: ElfInfo, own: str, allow: Sequence[str]) -> None:
    f = inp.result.findings
    for kind, entries in (("RPATH", info.rpath), ("RUNPATH", info.runpath)):
        for entry in entries:
            if entry.startswith(("$ORIGIN", "${ORIGIN}")):
                continue
            severe = UNSAFE_RPATH.match(entry) or not entry.startswith("/")
            f.append(Finding("rpath", "error" if severe else "warning", lib.path,
                f"{lib.path} has {kind} {entry!r}: not relative to $ORIGIN (a build-machine "
                "path leaks into the wheel; libraries there would load on users' machines)"))  # fmt: skip
    base = posixpath.basename(lib.path)
    if inp.wheel is not None and _BUNDLED.match(base):
        is_torch = base.startswith(("libtorch", "libc10", "libshm", "libcaffe2"))
        owner = own in ("torch", "pytorch-triton-rocm") or (
            not is_torch and (own.startswith("rocm-sdk") or own == "rocm"))
        allowed = any(fnmatch.fnmatch(base, a) or fnmatch.fnmatch(base, a + "*") for a in allow)
        if not owner and not allowed:
            what = "torch" if is_torch else "ROCm"
            f.append(Finding("bundled-library", "error", lib.path,
                f"{lib.path} bundles a {what} library: it must come from the installed {what} "
                f"(or pass --allow-bundled {base.split('.')[0]})"))  # fmt: skip


def _check_metadata(inp: _Input) -> None:
    wz, res = inp.wheel, inp.result
    assert wz is not None
    f = res.findings
    fname = inp.path.name
    try:
        name, version, _build, tags = parse_wheel_filename(fname)
        res.name, res.version = str(name), str(version)
        res.tags = sorted(str(t) for t in tags)
    except (InvalidWheelFilename, InvalidVersion) as err:
        f.append(Finding("metadata", "error", None, f"bad wheel file name {fname!r}: {err}"))
        return
    infos = {i.filename: i for i in wz.members}
    dist_infos = sorted({n.split("/")[0] for n in infos if n.split("/")[0].endswith(".dist-info")})
    if len(dist_infos) != 1:
        msg = f"expected exactly one .dist-info folder, found {dist_infos or 'none'}"
        f.append(Finding("metadata", "error", None, msg))
        return
    di = dist_infos[0]
    di_name, _, di_version = di[: -len(".dist-info")].rpartition("-")
    if canonicalize_name(di_name) != name or not _same_version(di_version, version):
        f.append(Finding("metadata", "error", None, f"{di} does not match the file name ({name} {version})"))
    meta = _headers(wz, infos.get(f"{di}/METADATA"), f, "METADATA")
    if meta is not None:
        m_name, m_version = meta.get("Name"), meta.get("Version")
        if not m_name or canonicalize_name(m_name) != name:
            f.append(Finding("metadata", "error", None,
                             f"METADATA Name {m_name!r} does not match the file name ({name})"))  # fmt: skip
        if not m_version:
            f.append(Finding("metadata", "error", None, "METADATA has no Version"))
        elif not _valid_version(m_version):
            msg = f"METADATA Version {m_version!r} is not valid PEP 440"
            f.append(Finding("metadata", "error", None, msg))
        elif Version(m_version) != version:
            msg = f"METADATA Version {m_version} does not match the file name ({version})"
            f.append(Finding("metadata", "error", None, msg))
    wheel = _headers(wz, infos.get(f"{di}/WHEEL"), f, "WHEEL")
    if wheel is not None:
        wtags = {t.strip() for t in wheel.get_all("Tag") or []}
        expanded = {str(t) for t in tags}
        if wtags != expanded:
            msg = f"WHEEL Tag lines {sorted(wtags)} do not match the file name tags {sorted(expanded)}"
            f.append(Finding("metadata", "error", None, msg))


def _same_version(text: str, version: Version) -> bool:
    return _valid_version(text) and Version(text) == version


def _valid_version(text: str) -> bool:
    try:
        Version(text)
        return True
    except InvalidVersion:
        return False


def _headers(wz: WheelZip, info: zipfile.ZipInfo | None, f: list[Finding], what: str) -> Any:
    if info is None:
        f.append(Finding("metadata", "error", None, f"the wheel has no {what} file"))
        return None
    try:
        text = wz.read_small(info).decode("utf-8", "replace")
    except MemberError as err:
        f.append(Finding("metadata", "error", None, str(err)))
        return None
    return email.parser.HeaderParser().parsestr(text)


def _required_candidates(inp: _Input, symbols: Sequence[str]) -> set[str]:
    if not symbols:
        return set()
    frags = [source_name_fragment(s) for s in symbols]
    plain = {s.encode() for s in symbols}
    out: set[str] = set()
    for lib in inp.libs:
        if lib.info is None:
            continue
        for name in lib.info.defined:
            if name in plain or (name.startswith(b"_Z") and any(fr is None or fr in name for fr in frags)):
                out.add(name.decode("utf-8", "replace"))
    return out


def _check_required(inp: _Input, symbols: Sequence[str], cands: set[str], demangled: dict[str, str]) -> None:
    for sym in symbols:
        hit = any(
            c == sym or demangled.get(c, c).startswith(sym + "(") for c in cands
        )
        if not hit:
            inp.result.findings.append(Finding("required-symbol", "error", None,
                f"required symbol {sym} is defined by no library of {inp.path.name} "
                f"(like `nm -gDC lib | grep ' {sym}('` finding nothing)"))  # fmt: skip


def _check_policy(inp: _Input, req: Policy | None) -> None:
    res = inp.result
    host = [(lib, lr) for lib, lr in inp.pairs if lr.kind != "gpu-code-object"]
    native = [lr for lr in res.libraries if lr.kind != "unreadable"]
    claimed: Policy | None = None
    platforms = {t.split("-")[-1] for t in res.tags}
    for plat in platforms:
        for part in plat.split("."):
            pol = policy_for_tag(part)
            if pol and (claimed is None or pol.priority > claimed.priority):
                claimed = pol
    if inp.wheel is not None and res.tags:
        if platforms == {"any"} and native:
            res.findings.append(Finding("platform-tag", "error", None,
                f"native code ({native[0].path}) in a wheel tagged {', '.join(res.tags)}"))  # fmt: skip
        if "any" not in platforms and not native:
            res.findings.append(Finding("platform-tag", "warning", None,
                f"no native code, yet tagged {', '.join(sorted(platforms))}: a redundant "
                "platform variant (a py3-none-any wheel would do)"))  # fmt: skip
    worst: Policy | None = None
    for lib, lr in host:
        if lr.policy is None or lib.info is None:
            continue
        arch = ARCH_OF_MACHINE[lib.info.machine]
        pol = get_policy(lr.policy, arch)
        if worst is None or pol.priority < worst.priority:
            worst = pol
        for want in (req, claimed):
            if want is None or (want is claimed and req is not None):
                continue
            try:
                target = get_policy(want.name, arch)
            except UsageError:
                continue
            basenames = {posixpath.basename(n) for n in inp.index}
            worst_of: dict[str, tuple[str, str]] = {}  # prefix -> (highest bad version, file)
            for file, vs in lib.info.version_needs.items():
                if file in basenames:
                    continue
                for v in target.violations(vs):
                    prefix = v.partition("_")[0]
                    if prefix not in worst_of or version_key(v) > version_key(worst_of[prefix][0]):
                        worst_of[prefix] = (v, file)
            if worst_of:
                why = "required by --policy" if want is req else "claimed by the platform tag"
                needs = " and ".join(f"{v} (from {file})" for v, file in worst_of.values())
                allows = ", ".join(f"{p}_{target.highest(p)}" for p in worst_of)
                res.findings.append(Finding("policy", "error", lib.path,
                    f"{lib.path} needs {needs}, which {target.name} ({why}) does not allow "
                    f"(it allows up to {allows}); the library's symbols need {lr.policy}"))  # fmt: skip
    res.policy = worst.name if worst else None

