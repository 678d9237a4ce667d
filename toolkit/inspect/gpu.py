"""GPU code: does every GPU library (and the standalone code objects) run on each target?"""

from __future__ import annotations

from collections.abc import Sequence

from toolkit.core.errors import UsageError
from toolkit.core.gfx import TargetId, parse_target, runs_on
from toolkit.inspect.report import Finding

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


def library_findings(path: str, carried: Sequence[str], targets: Sequence[TargetId]) -> list[Finding]:
    """One error per target none of a host library's code objects runs on."""
    if not carried:
        return []
    return [
        Finding(
            "gpu-targets",
            "error",
            path,
            f"{path} has no code object for {t} (carries {', '.join(carried)}); it would fail "
            "with hipErrorNoBinaryForGpu on that GPU",
        )
        for t in targets
        if not any(code_runs_on(c, t) for c in carried)
    ]


def code_object_findings(carried: Sequence[str], targets: Sequence[TargetId]) -> list[Finding]:
    """One error per target no standalone code object (``.co``/``.hsaco``) runs on."""
    if not carried:
        return []
    return [
        Finding(
            "gpu-targets",
            "error",
            None,
            f"no standalone code object (.co/.hsaco) for {t}; they cover {', '.join(sorted(set(carried)))}",
        )
        for t in targets
        if not any(code_runs_on(c, t) for c in carried)
    ]
