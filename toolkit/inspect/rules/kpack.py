"""kpack-split wheels: a host library whose device code is in kpack archives, and the
archives a device wheel carries.

A split host library (``.rocm_kpack_ref``, HIPK wrappers) has no GPU code of its own: it is
reported as "device code in kpack archives (search paths ...)", never as a CPU-only library.
Its code objects are those of the archives the check is given (the checked inputs' own and
``--with`` ones, e.g. the device wheels) whose table of contents holds its kernel name (the
key the runtime looks up); with ``--gfx``, a target none of them holds code for is an error,
as a fat library missing that target is. A device wheel's archives count as its GPU code
(per target: code objects and stored bytes). TheRock ships such wheels as an arch-neutral host
wheel and per-target device wheels carrying the ``.kpack`` archives, installed next to it
(ROCm/TheRock@e13807b docs/packaging/python_packaging.md "Kpack-split packaging").
"""

from __future__ import annotations

from collections.abc import Sequence

from toolkit.core.gfx import TargetId, sort_key
from toolkit.inspect.readers.kpack import Archive, KpackRef
from toolkit.inspect.report import Finding, TargetCode
from toolkit.inspect.rules.gpu import code_runs_on

WHERE = "device code in kpack archives"


def _paths(ref: KpackRef) -> str:
    return ", ".join(ref.search_paths) or "unreadable"


def library_code(path: str, ref: KpackRef,
                 archives: Sequence[Archive]) -> tuple[dict[str, TargetCode], str, list[str]]:
    """Per target the code objects and stored bytes the archives hold for one split library,
    its *where* line and the archives that hold them."""
    code: dict[str, TargetCode] = {}
    used: list[str] = []
    for a in archives:
        found = a.holds(ref.kernel_name) if ref.kernel_name else []
        if found:
            used.append(a.path)
        for k in found:
            tc = code.setdefault(k.target, TargetCode([path]))
            tc.code_objects += 1
            tc.bytes += k.stored
    return {t: code[t] for t in sorted(code, key=sort_key)}, f"{WHERE} (search paths {_paths(ref)})", used


def library_findings(path: str, ref: KpackRef, carried: Sequence[str],
                     targets: Sequence[TargetId]) -> list[Finding]:
    """An info finding naming where a split library's code is; with ``--gfx`` and no archive
    given for it, an error per target (it cannot be shown to run there)."""
    out = [Finding("gpu-targets", "info", path,
                   f"{path}: {WHERE} (search paths {_paths(ref)}), kernel name {ref.kernel_name or '?'}",
                   cause=WHERE)]
    if carried:
        return out  # (a missing target is gpu.library_findings' error, as for a fat library)
    return out + [
        Finding("gpu-targets", "error", path,
                f"{path} keeps its device code in kpack archives (search paths {_paths(ref)}) and no "
                f"archive given holds code for it, so {t} cannot be checked: give its device wheel "
                "(--with)", cause=f"no kpack archive for {t}")
        for t in targets
    ]


def archive_code(archives: Sequence[Archive]) -> dict[str, TargetCode]:
    """Per target the archives (by path), code objects and stored bytes of an input's archives."""
    out: dict[str, TargetCode] = {}
    for a in archives:
        for target, (n, size) in a.per_target().items():
            tc = out.setdefault(target, TargetCode())
            tc.libraries.append(a.path)
            tc.code_objects += n
            tc.bytes += size
    return {t: out[t] for t in sorted(out, key=sort_key)}


def archive_findings(archives: Sequence[Archive], targets: Sequence[TargetId], what: str) -> list[Finding]:
    """With ``--gfx``: an error per target none of an input's own archives holds code for."""
    held = [k.target for a in archives for k in a.kernels]
    return [Finding("gpu-targets", "error", None,
                    f"no code object for {t} in {what}'s kpack archives (they hold "
                    f"{', '.join(sorted(set(held), key=sort_key)) or 'none'})",
                    cause=f"no code object for {t}")
            for t in targets if not any(code_runs_on(c, t) for c in held)]


def json_archives(archives: Sequence[Archive]) -> dict[str, dict[str, dict[str, int]]]:
    """``{archive: {target: {"code_objects", "bytes"}}}`` (the report's ``kpack_archives``)."""
    return {a.path: {t: {"code_objects": n, "bytes": b} for t, (n, b) in
                     sorted(a.per_target().items(), key=lambda kv: sort_key(kv[0]))} for a in archives}
