"""GPU code: which libraries carry it, for which targets, and does it run on each target
asked for (``--gfx``)? Also what a wheel was built against (HIP runtime, torch, ROCm libraries).

A *GPU library* is a host library carrying device code (offload bundles or raw AMDGPU code
objects, wherever they are stored); standalone code objects (``.hsaco``/``.co`` or any
AMDGPU ELF member) count too. ``--gfx`` on an input with no GPU code at all fails for every
target: a CPU-only build cannot pass a GPU gate, unless a library links ``libhiprtc`` (it
compiles its kernels at run time, for whatever GPU it finds). A bundle entry whose id names
another processor than its code object's ELF header is an error and counts for neither.
"""

from __future__ import annotations

import posixpath
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from toolkit.core.errors import UsageError
from toolkit.core.gfx import TargetId, parse_target, runs_on, sort_key
from toolkit.inspect.readers.gpuscan import CodeObject
from toolkit.inspect.report import Finding, LibraryResult, TargetCode

# generic processors (LLVM AMDGPUUsage "Generic processors") -> the processors they run on
GENERIC_TARGETS = {
    "gfx9-generic": ("gfx900", "gfx902", "gfx904", "gfx906", "gfx909", "gfx90c"),
    "gfx9-4-generic": ("gfx940", "gfx941", "gfx942", "gfx950"),
    "gfx10-1-generic": ("gfx1010", "gfx1011", "gfx1012", "gfx1013"),
    "gfx10-3-generic": ("gfx1030", "gfx1031", "gfx1032", "gfx1033", "gfx1034", "gfx1035", "gfx1036"),
    "gfx11-generic": (
        "gfx1100",
        "gfx1101",
        "gfx1102",
        "gfx1103",
        "gfx1150",
        "gfx1151",
        "gfx1152",
        "gfx1153",
    ),
    "gfx12-generic": ("gfx1200", "gfx1201"),
    "gfx12-5-generic": ("gfx1250", "gfx1251"),  # TheRock's gfx125X family (the reader knows 0x5B)
}


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


def is_hsa_runtime(path: str) -> bool:
    """The HSA runtime embeds its own kernels (blit and trap handlers) as raw code objects."""
    return posixpath.basename(path).startswith("libhsa-runtime64.so")


def library_findings(path: str, carried: Sequence[str], targets: Sequence[TargetId]) -> list[Finding]:
    """One error per target none of a host library's code objects runs on."""
    if not carried:
        return []
    if is_hsa_runtime(path):
        what = f"the HSA runtime's own embedded kernels (blit/trap handlers) in {path}"
        what += " have"
        fate = "this runtime cannot drive that GPU (hsa_init finds no usable agent)"
    else:
        what, fate = f"{path} has", "it would fail with hipErrorNoBinaryForGpu on that GPU"
    return [_missing(path, t, f"{what} no code object for {t} (carries {', '.join(carried)}); {fate}")
            for t in _uncovered(carried, targets)]


def code_object_findings(carried: Sequence[str], targets: Sequence[TargetId]) -> list[Finding]:
    """One error per target no standalone code object (``.co``/``.hsaco``) runs on."""
    if not carried:
        return []
    cover = ", ".join(sorted(set(carried)))
    return [_missing(None, t, f"no standalone code object (.co/.hsaco) for {t}; they cover {cover}")
            for t in _uncovered(carried, targets)]


def _uncovered(carried: Sequence[str], targets: Sequence[TargetId]) -> list[TargetId]:
    """The targets none of the carried code objects runs on."""
    return [t for t in targets if not any(code_runs_on(c, t) for c in carried)]


def _missing(path: str | None, target: TargetId, message: str) -> Finding:
    return Finding("gpu-targets", "error", path, message, cause=f"no code object for {target}")


def mislabel_findings(path: str, objects: Iterable[CodeObject]) -> list[Finding]:
    """One error per (entry id target, code object target) pair of mislabelled bundle entries."""
    out = []
    for label, real in dict.fromkeys((o.label, o.target) for o in objects if o.label):
        msg = (f"{path}: an offload bundle entry labelled {label} holds a code object whose ELF "
               f"header (e_flags) says {real}: the HIP runtime picks it for {label}, where the loader "
               f"refuses {real} code, and never for {real}; it counts for neither")
        out.append(Finding("gpu-targets", "error", path, msg,
                           cause=f"bundle entry labelled {label} holds {real} code"))
    return out


def links_hiprtc(needed: Iterable[str]) -> bool:
    return any(n == "libhiprtc.so" or n.startswith("libhiprtc.so.") for n in needed)


def runtime_compile_findings(libraries: Sequence[LibraryResult]) -> list[Finding]:
    """An info finding per host library that links libhiprtc and carries no code object."""
    return [
        Finding("gpu-targets", "info", lib.path,
                f"{lib.path} compiles its kernels at run time (libhiprtc): it carries no code object, "
                "so no target can be checked", cause="compiles its kernels at run time (libhiprtc)")
        for lib in _hosts(libraries)
        if not lib.gpu_where and links_hiprtc(lib.needed)
    ]


def _hosts(libraries: Sequence[LibraryResult]) -> list[LibraryResult]:
    return [lib for lib in libraries if lib.kind not in ("unreadable", "gpu-code-object")]


# how a no-GPU-code finding says the wheel looks CPU-only (its run names ``--cpu`` then)
CPU_ONLY = ("(a CPU-only build?)", "it has no native library and no code object")


def no_gpu_code_findings(
    targets: Sequence[TargetId], libraries: Sequence[LibraryResult], what: str
) -> list[Finding]:
    """``--gfx`` on an input without any GPU code: one error per target, saying why (none
    when a library compiles its kernels at run time: :func:`runtime_compile_findings`)."""
    if not targets or any(lib.gpu_code or lib.gpu_where for lib in libraries):  # (mislabelled code too)
        return []
    host = _hosts(libraries)
    if any(links_hiprtc(lib.needed) for lib in host):
        return []
    hip = [lib.path for lib in host if any(n.startswith("libamdhip64.so") for n in lib.needed)]
    if not host:
        why = CPU_ONLY[1]
    elif hip:
        why = (f"none of its {len(host)} native libraries carries device code, though "
               f"{len(hip)} link the HIP runtime (host-only HIP, or device code stripped)")
    else:
        why = f"none of its {len(host)} native libraries carries device code or links HIP {CPU_ONLY[0]}"
    return [
        Finding("gpu-targets", "error", None,
                f"no GPU code for {t} in {what}: {why}; it would fail with hipErrorNoBinaryForGpu",
                cause=f"no GPU code for {t}")
        for t in targets
    ]


def library_code(objects: Iterable[CodeObject], path: str) -> tuple[dict[str, TargetCode], list[str]]:
    """Per target the objects and bytes of one library; where they are stored (its *why*)."""
    code: dict[str, TargetCode] = {}
    where: Counter[str] = Counter()
    for obj in objects:
        where[obj.where] += 1
        if obj.label:  # mislabelled: counts for no target (:func:`mislabel_findings`)
            continue
        tc = code.setdefault(obj.target, TargetCode([path]))
        tc.code_objects += 1
        tc.bytes += obj.size
    ordered = {t: code[t] for t in sorted(code, key=sort_key)}
    own = ": the HSA runtime's own embedded kernels" if is_hsa_runtime(path) else ""
    return ordered, [f"{n} code object{'s' * (n != 1)} in {w}{own}" for w, n in where.most_common()]


def wheel_code(libraries: Iterable[LibraryResult]) -> dict[str, TargetCode]:
    """Per target, sorted by family then number: its libraries, code objects and bytes."""
    out: dict[str, TargetCode] = {}
    for lib in libraries:
        for target, tc in lib.gpu_code.items():
            agg = out.setdefault(target, TargetCode())
            agg.libraries.append(lib.path)
            agg.code_objects += tc.code_objects
            agg.bytes += tc.bytes
    return {t: out[t] for t in sorted(out, key=sort_key)}


_HIP = re.compile(r"^libamdhip64\.so\.([0-9]+)$")
_TORCH = ("libtorch.so", "libtorch_cpu.so", "libc10.so", "libtorch_python.so")
_TORCH_HIP = ("libc10_hip.so", "libtorch_hip.so")


def built_against(libraries: Iterable[LibraryResult], rocm_libs: Sequence[str]) -> dict[str, Any]:
    """What the host libraries were linked against: HIP runtime (so ROCm N), torch, ROCm libs."""
    needed = {n for lib in libraries if lib.kind != "gpu-code-object" for n in lib.needed}
    majors = sorted({int(m.group(1)) for n in needed if (m := _HIP.match(n))})
    rocm = sorted(n for n in needed if n.split(".so")[0] in rocm_libs and not n.startswith("libamdhip64"))
    return {
        "hip_runtime": sorted(n for n in needed if n.startswith("libamdhip64.so")),
        "rocm_major": majors[0] if len(majors) == 1 else (majors or None),
        "torch": any(n in needed for n in _TORCH + _TORCH_HIP),
        "torch_hip": any(n in needed for n in _TORCH_HIP),
        "rocm_libraries": rocm,
    }
