"""Packaging hygiene: RPATH/RUNPATH entries and torch/ROCm libraries bundled into a wheel."""

from __future__ import annotations

import fnmatch
import posixpath
import re
from collections.abc import Sequence

from toolkit.inspect.elf import ElfInfo
from toolkit.inspect.report import Finding

# library names (without ``.so``) that only torch / ROCm may ship
TORCH_LIBS = tuple(
    """libtorch libtorch_cpu libtorch_cuda libtorch_hip libtorch_python libtorch_global_deps
    libc10 libc10_hip libc10_cuda libshm libcaffe2_nvrtc""".split()
)
ROCM_LIBS = tuple(
    """libamdhip64 libhiprtc libhiprtc-builtins librocblas libhipblas libhipblaslt libMIOpen
    librccl libhsa-runtime64 libhsakmt libamd_comgr librocsolver libhipsolver librocfft
    libhipfft librocrand libhiprand librocsparse libhipsparse libhipsparselt libroctx64
    libroctracer64 librocm_smi64 libamd_smi librocprofiler64 librocprofiler-register
    librocm-core libhipfort libmagma""".split()
)
_BUNDLED = re.compile(r"^(" + "|".join(map(re.escape, TORCH_LIBS + ROCM_LIBS)) + r")(?:[.-]|$)")
UNSAFE_RPATH = re.compile(r"^(/tmp|/var/tmp|/home|/root|/build|/workspace|/__w|/github|/io)(/|$)")


def rpath_findings(path: str, info: ElfInfo) -> list[Finding]:
    """RPATH/RUNPATH entries not relative to $ORIGIN: errors for build-machine or relative
    paths, warnings for other absolute ones."""
    out = []
    for kind, entries in (("RPATH", info.rpath), ("RUNPATH", info.runpath)):
        for entry in entries:
            if entry.startswith(("$ORIGIN", "${ORIGIN}")):
                continue
            severe = UNSAFE_RPATH.match(entry) or not entry.startswith("/")
            msg = (
                f"{path} has {kind} {entry!r}: not relative to $ORIGIN (a build-machine "
                "path leaks into the wheel; libraries there would load on users' machines)"
            )
            out.append(Finding("rpath", "error" if severe else "warning", path, msg))
    return out


def bundled_findings(path: str, project: str, allow: Sequence[str]) -> list[Finding]:
    """A torch or ROCm library inside a wheel that is not torch/ROCm itself (``project`` is
    the wheel's canonical name) and not allowed by ``--allow-bundled``."""
    base = posixpath.basename(path)
    if not _BUNDLED.match(base):
        return []
    is_torch = base.startswith(("libtorch", "libc10", "libshm", "libcaffe2"))
    owner = project in ("torch", "pytorch-triton-rocm") or (
        not is_torch and (project.startswith("rocm-sdk") or project == "rocm")
    )
    allowed = any(fnmatch.fnmatch(base, a) or fnmatch.fnmatch(base, a + "*") for a in allow)
    if owner or allowed:
        return []
    what = "torch" if is_torch else "ROCm"
    msg = (
        f"{path} bundles a {what} library: it must come from the installed {what} "
        f"(or pass --allow-bundled {base.split('.')[0]})"
    )
    return [Finding("bundled-library", "error", path, msg)]
