"""Symbols: versions a library needs from its providers, undefined symbols no loaded library
defines (``import`` would fail, for a Python extension module and what it loads; loading the
library would fail, for any other), and required symbols some library must define.

Names are shown demangled; the demangling of everything a run reports or matches happens
in one batch (:func:`demangle_all`), so findings about undefined symbols wait in
:class:`Unresolved` records until then.
"""

from __future__ import annotations

import posixpath
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from toolkit.inspect.readers import glibc
from toolkit.inspect.readers.demangle import demangle_many, source_name_fragment
from toolkit.inspect.readers.elf import ElfInfo
from toolkit.inspect.readers.policy import max_versions
from toolkit.inspect.readers.resolver import Lib, defines
from toolkit.inspect.report import Finding, LibraryResult, WheelResult

INTERPRETER_PREFIXES = (b"Py", b"_Py")  # defined by the Python interpreter loading the module
EXAMPLES = 5  # undefined symbols shown per group without --verbose


# Libraries the policies allow whose exports all carry version nodes (glibc's, the GCC
# runtime's): an unversioned reference binds to a default version, so only a list can say
# whose it is (glibc's: readers/glibc.py). The others of auditwheel's lists (libGL,
# libX11 ..., glib, libexpat, and zlib: its zlib.map versions only the names added since 1.2.0,
# so Debian's zlib1g 1.2.13 libz.so.1 exports 55 global names without a version, zlibVersion and
# inflate among them, per readelf --dyn-syms) export unversioned names, which only their file
# could attribute.
VERSIONED_POLICY_LIBS = frozenset({
    "libc.so.6", "libm.so.6", "libmvec.so.1", "libpthread.so.0", "libdl.so.2", "librt.so.1",
    "libutil.so.1", "libnsl.so.1", "libresolv.so.2", "libanl.so.1", "libstdc++.so.6",
    "libgcc_s.so.1", "libatomic.so.1",
})


def unversioned_library(name: str) -> bool:
    """A library assumed present (the policy's) whose unversioned exports nothing here lists."""
    return name not in VERSIONED_POLICY_LIBS and not name.startswith("ld")


def is_extension_module(info: ElfInfo) -> bool:
    """A Python extension module exports ``PyInit_<name>``."""
    return any(n.startswith(b"PyInit_") for n in info.defined)


def glibc_provided(
    info: ElfInfo, undefined: list[tuple[bytes, str | None]], loaded: Collection[str],
    floor: tuple[int, ...],
) -> tuple[list[tuple[bytes, str | None]], dict[str, list[str]]]:
    """Unversioned references that a glibc library of the load tree (``loaded``, and libc,
    in every process) defines on every glibc from ``floor`` on resolve, as ld.so resolves
    them; in an extension module so do those the interpreter's glibc libraries define:
    (the rest, library -> names the interpreter provides without ``info`` loading it)."""
    extension = is_extension_module(info)
    scope = {*loaded, *(glibc.INTERPRETER if extension else glibc.EVERY_PROCESS)}
    rest: list[tuple[bytes, str | None]] = []
    provided: dict[str, list[str]] = {}
    for name, ver in undefined:
        text = name.decode("utf-8", "replace") if ver is None else ""
        libs = glibc.resolve(text, scope, floor, prefer=loaded) if text else None
        if libs is None:
            rest.append((name, ver))
        elif extension and (extra := [lib for lib in libs if lib not in loaded]):
            provided.setdefault(extra[0], []).append(text)
    return rest, provided


@dataclass
class Unresolved:
    """A library's undefined symbols, waiting for the one batched demangling run."""

    wheel: WheelResult  # where the findings go
    lib: Lib
    result: LibraryResult
    symbols: list[tuple[bytes, str | None]]
    providers: list[str] = field(default_factory=list)  # the libraries it loads (paths or names)
    version_files: dict[str, str] = field(default_factory=dict)  # version node -> the file it names
    imported: bool = True  # an extension module or loaded by one (else: not an import)


def failing(path: str, imported: bool) -> str:
    """What fails when ``path`` cannot be loaded: the import, for an extension module and the
    libraries it loads; loading the library itself, for any other (a dlopen'ed plugin)."""
    return "import would fail" if imported else f"loading {path} would fail"


def version_need_findings(
    lib: Lib, info: ElfInfo, by_name: Mapping[str, Lib], *, imported: bool = True
) -> tuple[set[str], list[Finding]]:
    """Versions ``info`` needs that its resolved provider does not define: (versions, findings);
    ``imported``: is ``lib`` an extension module or loaded by one (the wording)."""
    bad: set[str] = set()
    out: list[Finding] = []
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
                why = f"required by {lib.path}; " if imported else ""
                msg = (f"{failing(lib.path, imported)}: version `{v}' not found in {file} ({why}"
                       f"{dep.path} provides up to {have or 'none of that prefix'})")
                cause = f"version {v} not found in {file} ({dep.path})"
                out.append(Finding("symbol-version", "error", lib.path, msg, cause=cause))
    return bad, out


def undefined_symbols(
    info: ElfInfo, providers: Sequence[Lib], skip_versions: set[str]
) -> list[tuple[bytes, str | None]]:
    """Undefined symbols of ``info`` that none of ``providers`` defines (interpreter symbols
    and references to ``skip_versions`` are left out: versions already reported missing, and
    those of libraries assumed present, which the policy judges)."""
    todo = [
        (name, ver)
        for name, ver in info.undefined
        if not name.startswith(INTERPRETER_PREFIXES) and ver not in skip_versions
    ]
    wanted: dict[bytes, set[str | None]] = {}
    for name, ver in todo:
        wanted.setdefault(name, set()).add(ver)
    open_names = _still_open(wanted, providers)
    if not open_names:
        return []
    return [(n, v) for n, v in todo if n in open_names and not any(defines(d, n, v) for d in providers)]


def _still_open(wanted: dict[bytes, set[str | None]], providers: Sequence[Lib]) -> set[bytes]:
    """The wanted names some of whose versions no provider defines."""
    open_names = set(wanted)
    for d in providers:
        if not open_names:
            break
        if d.info is None:
            continue
        for name in open_names & d.info.defined:  # set intersection: the bulk at C speed
            if all(defines(d, name, ver) for ver in wanted[name]):
                open_names.discard(name)
    return open_names


def _candidates(names: Iterable[bytes], symbols: Sequence[str]) -> set[str]:
    if not symbols:
        return set()
    frags = [source_name_fragment(s) for s in symbols]
    plain = {s.encode() for s in symbols}
    return {
        name.decode("utf-8", "replace")
        for name in names
        if name in plain or (name.startswith(b"_Z") and any(fr is None or fr in name for fr in frags))
    }


def compact_defined(libs: Iterable[Lib], symbols: Sequence[str]) -> set[str]:
    """Keep of each library's defined names only those a later rule can ask about: names
    some library of the same input leaves undefined, and ``PyInit_*`` (an extension
    module). Returns the candidates for the required ``symbols``, found before narrowing.
    (A large wheel's libraries define hundreds of thousands of names, of which the checks
    ask about a few thousand.)"""
    libs = [lib for lib in libs if lib.info is not None]
    wanted = {n for lib in libs for n, _ in lib.info.unpack_undefined()}  # type: ignore[union-attr]
    cands: set[str] = set()
    for lib in libs:
        info = lib.info
        assert info is not None
        keep: set[bytes] = set()
        for names in info.defined_batches():
            cands |= _candidates(names, symbols)
            keep |= wanted.intersection(names)
            keep.update(n for n in names if n.startswith(b"PyInit_"))
        info.narrow(keep)
    return cands


def demangle_all(pending: Iterable[Unresolved], candidates: Iterable[set[str]]) -> dict[str, str]:
    """One demangling run for every name that will be shown or matched."""
    names = {n.decode("utf-8", "replace") for p in pending for n, _ in p.symbols}
    for c in candidates:
        names |= c
    return demangle_many(names)


def report_unresolved(pending: Iterable[Unresolved], demangled: Mapping[str, str]) -> None:
    """Record each undefined symbol on its library, and one error per library and likely
    provider: the count, up to ``EXAMPLES`` names, and every name in ``symbols``."""
    for p in pending:
        groups: dict[str, list[str]] = {}
        for raw, ver in p.symbols:
            mangled = raw.decode("utf-8", "replace")
            nice = demangled.get(mangled, mangled)
            at = f"@{ver}" if ver else ""
            shown = f"{nice} ({mangled}{at})" if nice != mangled else mangled + at
            p.result.unresolved.append({"symbol": mangled, "demangled": nice, "version": ver})
            groups.setdefault(_likely_provider(p, ver), []).append(shown)
        for provider, names in groups.items():
            n = len(names)
            more = f" and {n - EXAMPLES} more" if n > EXAMPLES else ""
            where = f" in {p.lib.path}" if p.imported else ""
            msg = (f"{failing(p.lib.path, p.imported)}: {n} undefined symbol{'s' * (n != 1)}{where} "
                   f"({provider}): {', '.join(names[:EXAMPLES])}{more}")
            p.wheel.findings.append(Finding(
                "undefined-symbol", "error", p.lib.path, msg,
                cause=f"undefined symbols ({provider})", symbols=tuple(names),
            ))


def _likely_provider(p: Unresolved, version: str | None) -> str:
    """Where an undefined symbol should have come from: the library whose version node it
    names, else none of the libraries it loads."""
    if version is not None and version in p.version_files:
        return f"likely from {p.version_files[version]}"
    names = list(dict.fromkeys(posixpath.basename(x) for x in p.providers))
    if not names:
        return "it loads no library that could define it"
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    return f"defined by none of {shown}"


def required_findings(
    where: str, symbols: Sequence[str], cands: set[str], demangled: Mapping[str, str]
) -> list[Finding]:
    """An error per required symbol (a demangled name) no candidate defines."""
    out = []
    for sym in symbols:
        if not any(c == sym or demangled.get(c, c).startswith(sym + "(") for c in cands):
            msg = (
                f"required symbol {sym} is defined by no library of {where} "
                f"(like `nm -gDC lib | grep ' {sym}('` finding nothing)"
            )
            out.append(Finding("required-symbol", "error", None, msg))
    return out
