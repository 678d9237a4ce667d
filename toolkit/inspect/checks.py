"""Wheel inspection: symbol versions and manylinux policy, undefined symbols, required
symbols, GPU code targets and packaging hygiene, for wheels or folders of libraries.

``check_paths`` is the library entry point (the CLI is ``toolkit.cli.commands.check``). It
never prints. This module only orchestrates: reading inputs (:mod:`.inputs`,
:mod:`.readers.members`), resolving libraries (:mod:`.readers.resolver`) and the rules
(:mod:`.rules`: metadata, manylinux, machine, gpu, hygiene, symbols, needed, variants,
abi3) that
fill in the report (:mod:`.report`).
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from packaging.utils import canonicalize_name

from toolkit.core.errors import UsageError
from toolkit.core.gfx import TargetId, sort_key
from toolkit.inspect.inputs import Input, collect_archives, collect_dir, collect_wheel, open_input
from toolkit.inspect.readers.elf import ET_REL, ElfInfo
from toolkit.inspect.readers.kpack import Archive, KpackRef
from toolkit.inspect.readers.kpackfiles import is_archive, with_archives
from toolkit.inspect.readers.members import load_file as load_file
from toolkit.inspect.readers.policy import (
    ARCH_OF_MACHINE,
    LOADERS,
    Policy,
    assumed_libraries,
    get_policy,
    glibc_floor,
    load_policies,
)
from toolkit.inspect.readers.resolver import Lib, Resolver, host_system_dirs, with_libraries
from toolkit.inspect.readers.wheelzip import Budget, WheelZip
from toolkit.inspect.report import Finding, LibraryResult, Report, TargetCode, WheelResult
from toolkit.inspect.rules import abi3, gpu, hygiene, kpack, machine, manylinux, needed, symbols
from toolkit.inspect.rules.gpu import code_runs_on as code_runs_on
from toolkit.inspect.rules.metadata import check_metadata
from toolkit.inspect.rules.needed import Missing
from toolkit.inspect.rules.symbols import Unresolved
from toolkit.inspect.rules.variant_labels import variant_findings
from toolkit.inspect.rules.variants import content_key, identical_findings, redundant_variant

# ``load_file`` and ``code_runs_on`` are re-exported for the smoke suite (smoke_tests/),
# which imports them from here.
__all__ = ["Report", "check_paths", "code_runs_on", "load_file"]


def check_paths(
    paths: Sequence[str | os.PathLike[str]],
    *,
    targets: Sequence[TargetId] = (),
    policy: str | None = None,
    with_paths: Sequence[str | os.PathLike[str]] = (),
    required_symbols: Sequence[str] = (),
    allow_bundled: Sequence[str] = (),
    excludes: Sequence[str] = (),
    jobs: int | None = None,
    budget: Budget | None = None,
    system_path: Sequence[str] | None = None,
) -> Report:
    """Check wheels, folders of libraries or single libraries; never prints.

    ``targets`` are GPU target ids every GPU library must carry code for (family names are
    expanded by the caller); an input without any GPU code fails for each of them.
    ``budget`` bounds what a wheel may make us inflate. ``excludes`` are ``--exclude``
    patterns (needed libraries not checked). ``system_path`` is the system library search
    path (None: this machine's); it only names where a missing library lives here and never
    changes a verdict. Bad requests (missing paths,
    unreadable archives, policy names) raise ``UsageError`` before anything is inspected;
    problems found in the inputs are ``Finding``s in the report.
    """
    if not paths:
        raise UsageError("nothing to check: give at least one wheel, folder or library")
    req_policy = get_policy(policy) if policy else None
    inputs = [open_input(p, budget) for p in paths]
    allowed = LOADERS.union(*(p.libraries for p in load_policies()))
    system = host_system_dirs() if system_path is None else tuple(system_path)
    libraries, companions = _with(with_paths, budget)
    resolver = Resolver(libraries, system, allowed)
    pending: list[Unresolved] = []
    cands: dict[Path, set[str]] = {}
    try:
        for inp in inputs:
            _collect(inp, jobs)
            inp.companions = companions
            cands[inp.path] = symbols.compact_defined(inp.libs, required_symbols)
            pending += _check_libraries(inp, resolver, targets, allow_bundled, req_policy)
    finally:
        for inp in inputs:
            inp.close()
    demangled = symbols.demangle_all(pending, cands.values())
    symbols.report_unresolved(pending, demangled)
    for inp in inputs:
        ctx = WheelContext(inp, required_symbols, cands[inp.path], demangled, req_policy, excludes)
        for rule in WHEEL_RULES:
            rule(ctx)
    identical_findings([inp.result for inp in inputs])
    for inp in inputs:
        inp.result.findings.sort(key=lambda x: (_RANK[x.severity], x.check, x.cause or "", x.library or ""))
    return Report([inp.result for inp in inputs])


_RANK = {"error": 0, "warning": 1, "info": 2}


def _with(paths: Sequence[str | os.PathLike[str]],
          budget: Budget | None) -> tuple[dict[str, list[Lib]], list[Archive]]:
    """``--with``: the libraries it provides, and its kpack archives (a device wheel's)."""
    return with_libraries([p for p in paths if not is_archive(str(p))]), with_archives(paths, budget)


def _collect(inp: Input, jobs: int | None) -> None:
    """Read an input's libraries (and a wheel's metadata) into a fresh result."""
    inp.result = WheelResult(str(inp.path))
    if inp.wheel is not None:
        collect_wheel(inp, inp.wheel, jobs)
        check_metadata(inp.result, inp.wheel)
        inp.result.content_key = _content_key(inp, inp.wheel)
    else:
        collect_dir(inp)
    collect_archives(inp)


def _kind(info: ElfInfo) -> str:
    if info.is_gpu_code_object:
        return "gpu-code-object"
    return {1: "object", 2: "executable", 3: "shared-library"}.get(info.type, "other")


def _content_key(inp: Input, wz: WheelZip) -> str | None:
    res = inp.result
    if res.name is None or None in inp.digests.values():
        return None
    meta = next((i for i in wz.members if i.filename.endswith(".dist-info/METADATA")), None)
    try:
        text = wz.read_small(meta) if meta is not None else None
    except UsageError:
        return None
    return content_key(res.name, inp.digests, text)


def _check_libraries(
    inp: Input, resolver: Resolver, targets: Sequence[TargetId], allow: Sequence[str],
    required: Policy | None = None,
) -> list[Unresolved]:
    """Per library: readability, policy data, hygiene, GPU code, the DT_NEEDED closure and
    symbol versions; returns the undefined symbols still to be demangled and reported."""
    res = inp.result
    own_files = {posixpath.basename(n) for n in inp.index}
    project = canonicalize_name(res.name) if res.name else ""
    code_objects: list[str] = []
    hosts: list[tuple[str, ElfInfo]] = []
    loaded = _Loaded()
    f = res.findings
    claim = required if required is not None else manylinux.claimed_policy(res.tags)[0]
    for lib in inp.libs:
        lr = _library_result(inp, lib)
        if lr is None or lib.info is None:
            continue
        info = lib.info
        if info.is_gpu_code_object:
            code_objects.extend(info.gpu_targets)
            continue
        unjudged = manylinux.library_policy(lr, info, own_files)
        if unjudged is not None:
            f.append(unjudged)
        hosts.append((lib.path, info))
        if inp.wheel is not None:
            f.extend(hygiene.bundled_findings(lib.path, project, allow))
        f.extend(gpu.library_findings(lib.path, lr.gpu_targets, targets))
        if info.kpack is not None:
            f.extend(kpack.library_findings(lib.path, info.kpack, lr.gpu_targets, targets))
        if info.type != ET_REL and info.has_sections:  # else: not loaded / nothing to resolve
            _resolve_library(inp, resolver, lib, lr, loaded, claim)
    f.extend(loaded.findings())
    _input_findings(inp, hosts, code_objects, targets)
    return loaded.pending


def _library_result(inp: Input, lib: Lib) -> LibraryResult | None:
    """A library's result (added to the input's), with its ELF and GPU-code reading
    findings; None for an unreadable one."""
    res, f = inp.result, inp.result.findings
    if lib.info is None:
        res.libraries.append(LibraryResult(lib.path, "unreadable"))
        msg = f"{lib.path}: corrupt or unreadable ELF ({lib.error}): it cannot be judged"
        f.append(Finding("elf", "error", lib.path, msg, cause="corrupt or unreadable ELF"))
        return None
    info = lib.info
    code, where = gpu.library_code(info.gpu_code, lib.path)
    lr = LibraryResult(
        lib.path, _kind(info), needed=list(info.needed), gpu_targets=list(info.gpu_targets),
        gpu_code=code, gpu_where=where,
    )
    if info.kpack is not None:
        _split_library(inp, lr, info.kpack)
    res.libraries.append(lr)
    inp.pairs.append((lib, lr))
    for prob in info.problems:
        f.append(Finding("elf", "error", lib.path, f"{lib.path}: {prob}", cause="ELF cannot be judged"))
    for prob in info.gpu_problems:
        f.append(Finding("gpu-code", "error", lib.path, f"{lib.path}: {prob}",
                         cause="GPU code present but unreadable"))
    f.extend(gpu.mislabel_findings(lib.path, info.gpu_code))
    return lr


def _split_library(inp: Input, lr: LibraryResult, ref: KpackRef) -> None:
    """A kpack-split library's code: that of the archives given for it (its own wheel's, --with)."""
    code, where, used = kpack.library_code(lr.path, ref, [*inp.archives, *inp.companions])
    for target, tc in code.items():
        mine = lr.gpu_code.setdefault(target, TargetCode([lr.path]))
        mine.code_objects += tc.code_objects
        mine.bytes += tc.bytes
    lr.gpu_code = {t: lr.gpu_code[t] for t in sorted(lr.gpu_code, key=sort_key)}
    lr.gpu_targets = list(lr.gpu_code)
    lr.gpu_where.append(where)
    lr.kpack = {"kernel_name": ref.kernel_name, "search_paths": list(ref.search_paths),
                "hipk": ref.hipk, "hipf": ref.hipf, "archives": used}


def _input_findings(inp: Input, hosts: list[tuple[str, ElfInfo]], code_objects: list[str],
                    targets: Sequence[TargetId]) -> None:
    """The findings about the input as a whole: machine, RPATHs, GPU code, variants."""
    res, f = inp.result, inp.result.findings
    arch = machine.tag_arch(res.tags)
    if arch is not None:
        f.extend(x for path, info in hosts if (x := machine.mismatch(path, info, *arch)))
    tops = {n.split("/")[0] for n in inp.names if "/" in n} if inp.wheel is not None else None
    f.extend(hygiene.rpath_findings(hosts, tops))
    f.extend(gpu.code_object_findings(code_objects, targets))
    what = "this wheel" if inp.wheel is not None else str(inp.path)
    if inp.archives:  # a device wheel: its archives are its GPU code
        f.extend(kpack.archive_findings(inp.archives, targets, what))
    else:
        f.extend(gpu.no_gpu_code_findings(targets, res.libraries, what))
    f.extend(gpu.runtime_compile_findings(res.libraries))
    res.gpu = gpu.wheel_code(res.libraries)
    if inp.archives:
        res.gpu = _merged(res.gpu, kpack.archive_code(inp.archives))
        res.kpack_archives = kpack.json_archives(inp.archives)
    res.built_against = gpu.built_against(res.libraries, hygiene.ROCM_LIBS)
    if inp.wheel is not None:
        f.extend(redundant_variant(res))
        f.extend(variant_findings(res, inp.wheel.path.name, _variant_json(inp.wheel)))


def _variant_json(wz: WheelZip) -> bytes | None:
    """A wheel's ``.dist-info/variant.json`` (a wheel variant's label), or None."""
    for info in wz.members:
        top, _, rest = info.filename.partition("/")
        if top.endswith(".dist-info") and rest == "variant.json":
            try:
                return wz.read_small(info)
            except UsageError:
                return b""
    return None


def _merged(a: dict[str, TargetCode], b: dict[str, TargetCode]) -> dict[str, TargetCode]:
    out = {t: TargetCode(list(tc.libraries), tc.code_objects, tc.bytes) for t, tc in a.items()}
    for t, tc in b.items():
        m = out.setdefault(t, TargetCode())
        m.libraries += tc.libraries
        m.code_objects += tc.code_objects
        m.bytes += tc.bytes
    return {t: out[t] for t in sorted(out, key=sort_key)}


@dataclass
class _Loaded:
    """What an input's libraries load, gathered while they are resolved: whether a library is
    imported (a Python extension module, or loaded by one through the NEEDED graph) decides
    how its load failures are worded, so their findings wait until every closure is known."""

    imported: set[str] = field(default_factory=set)  # paths
    versions: list[tuple[Lib, ElfInfo, dict[str, Lib]]] = field(default_factory=list)
    pending: list[Unresolved] = field(default_factory=list)

    def findings(self) -> list[Finding]:
        out = []
        for lib, info, by_name in self.versions:
            out += symbols.version_need_findings(lib, info, by_name, imported=lib.path in self.imported)[1]
        for p in self.pending:
            p.imported = p.lib.path in self.imported
        return out


def _resolve_library(
    inp: Input, resolver: Resolver, lib: Lib, lr: LibraryResult, loaded: _Loaded,
    claim: Policy | None,
) -> None:
    """The DT_NEEDED closure of one host library, its symbol versions and undefined symbols
    (glibc's judged from the glibc floor of ``claim``, else of the library's own policy)."""
    info = lib.info
    assert info is not None
    f = inp.result.findings
    order, missing, by_name, assumed = resolver.closure(lib, inp.index)
    if symbols.is_extension_module(info):
        loaded.imported.update(d.path for d in order)
    lr.missing = [m for m, _ in missing]
    needers = {d.path: d for d in order}
    inp.missing += [Missing(n, needer, lib.path, resolver.on_host(n, info),
                            **needed.unreached(n, needers[needer], inp.index)) for n, needer in missing]
    inp.assumed[lib.path] = assumed
    bad_versions, _ = symbols.version_need_findings(lib, info, by_name)
    loaded.versions.append((lib, info, by_name))
    if missing:
        return
    floor = glibc_floor(claim if claim is not None else _own_policy(lr.policy, info))
    undefined, notes = _undefined(lib.path, info, order, by_name, assumed, bad_versions, floor)
    f.extend(notes)
    loads = [*info.needed, *(d.path for d in order[1:])]
    vfiles = {v: file for file, vs in info.version_needs.items() for v in vs}
    loaded.pending.append(Unresolved(inp.result, lib, lr, undefined, loads, vfiles))


def _own_policy(name: str | None, info: ElfInfo) -> Policy | None:
    arch = ARCH_OF_MACHINE.get(info.machine)
    return get_policy(name, arch) if name and arch else None


def _undefined(
    path: str, info: ElfInfo, order: list[Lib], by_name: dict[str, Lib], assumed: list[str],
    bad_versions: set[str], floor: tuple[int, ...],
) -> tuple[list[tuple[bytes, str | None]], list[Finding]]:
    """Undefined symbols no library of the load tree defines (those of the glibc libraries
    assumed present, for every glibc from ``floor`` on, included), and the notes on those
    the interpreter provides."""
    judged_elsewhere = {v for file, vs in info.version_needs.items() if file not in by_name for v in vs}
    undefined = symbols.undefined_symbols(info, order[1:], bad_versions | judged_elsewhere)
    if any(symbols.unversioned_library(n) for n in assumed):  # names cannot be attributed
        undefined = [(n, v) for n, v in undefined if v is not None]
    undefined, provided = symbols.glibc_provided(info, undefined, assumed, floor)
    return undefined, _interpreter_notes(path, provided, info)


def _interpreter_notes(path: str, provided: dict[str, list[str]], info: ElfInfo) -> list[Finding]:
    """A hygiene note per glibc library an extension module uses without linking it."""
    out = []
    for lib, names in sorted(provided.items()):
        short = lib.split(".so")[0].removeprefix("lib")
        shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
        msg = (f"{path} uses {len(names)} {lib} symbol{'s' * (len(names) != 1)} ({shown}) without "
               f"linking {lib}: the interpreter provides them, so the import works; link "
               f"{short} explicitly (-l{short})")
        out.append(Finding("interpreter-symbols", "info", path, msg, cause=f"uses {lib} without linking it"))
    return out


@dataclass
class WheelContext:
    """What the wheel-level rules read and fill in, once every library of an input is read."""

    inp: Input
    required_symbols: Sequence[str]
    candidates: set[str]
    demangled: dict[str, str]
    required_policy: Policy | None
    excludes: Sequence[str]
    judged: Policy | None = None  # set by the policy rule, read by the needed-library rule


def _rule_required_symbols(c: WheelContext) -> None:
    c.inp.result.findings.extend(
        symbols.required_findings(c.inp.path.name, c.required_symbols, c.candidates, c.demangled))


def _rule_policy(c: WheelContext) -> None:
    own_files = {posixpath.basename(n) for n in c.inp.index}
    c.judged = manylinux.check_policy(c.inp.result, c.inp.pairs, own_files, is_wheel=c.inp.wheel is not None,
                                      required=c.required_policy)


def _rule_needed(c: WheelContext) -> None:
    _account_needed(c.inp, c.judged, c.excludes)


def _rule_abi3(c: WheelContext) -> None:
    """A wheel tagged ``cpXY-abi3``: each extension module within the stable ABI of X.Y."""
    base = abi3.baseline(c.inp.result.tags) if c.inp.wheel is not None else None
    if base is None:
        return
    for lib, _lr in c.inp.pairs:
        if lib.info is not None and symbols.is_extension_module(lib.info):
            lib.info.unpack_undefined()
            c.inp.result.findings.extend(abi3.module_findings(lib.path, lib.info, base))


# The wheel-level rules, in order (the needed-library rule reads the policy rule's verdict).
WHEEL_RULES: tuple[Callable[[WheelContext], None], ...] = (
    _rule_required_symbols, _rule_policy, _rule_needed, _rule_abi3)


def _account_needed(inp: Input, judged: Policy | None, excludes: Sequence[str]) -> None:
    """Every DT_NEEDED nothing provided: excluded, a provider's (warning) or an error; and
    the policy libraries the judged policy does not allow (an older policy's shorter list)."""
    res = inp.result
    name = judged.name if judged is not None else "the newest manylinux policy"
    allowed = assumed_libraries(judged)
    missing = list(inp.missing)
    for lib, names in inp.assumed.items():
        missing += [Missing(n, lib, lib) for n in dict.fromkeys(names) if n not in allowed]
    seen: set[tuple[str, str]] = set()
    for m in missing:
        if (m.name, m.library) not in seen:
            seen.add((m.name, m.library))
            res.findings.extend(needed.missing_findings(m, policy=name, requires=res.requires,
                                                        excludes=excludes))
