"""Packaging hygiene: RPATH/RUNPATH entries and torch/ROCm libraries bundled into a wheel."""

from __future__ import annotations

import fnmatch
import posixpath
import re
from collections.abc import Sequence

from toolkit.inspect.readers.elf import ElfInfo
from toolkit.inspect.report import Finding, Severity

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
# pip-installed packages whose lib/ folders extensions link against on purpose
_LAYOUT_PKG = r"(_rocm_sdk_[a-z0-9_]+|rocm_sdk[a-z0-9_]*|torch|nvidia/[a-z0-9_]+)"
SITE_LAYOUT = re.compile(r"(^|/)(site|dist)-packages/" + _LAYOUT_PKG + r"(/|$)", re.IGNORECASE)
SIBLING_LAYOUT = re.compile(r"^" + _LAYOUT_PKG + r"(/|$)", re.IGNORECASE)
SYSTEM_ROCM = re.compile(r"^/opt/rocm(-[0-9.]+)?(/|$)")

# classification -> (severity, what it means)
_KINDS: dict[str, tuple[Severity, str]] = {
    "empty": ("error", "an empty element: ld.so searches the current directory there"),
    "relative": ("error", "relative to the current directory, not to $ORIGIN"),
    "build": ("error", "a build-machine path leaks into the wheel"),
    "outside": ("warning", "an absolute path outside the wheel (libraries there would load on users' "
                "machines)"),
    "leaves": ("warning", "$ORIGIN-relative but leaves the wheel for a folder no known package installs"),
    "sibling": ("info", "install layout: a pip-installed package next to this one (ROCm SDK, torch)"),
    "site": ("info", "install layout: a pip-installed ROCm SDK/torch in one interpreter's site-packages"),
    "rocm": ("info", "install layout: the system ROCm install (/opt/rocm)"),
}


def classify_rpath(entry: str, lib_path: str, wheel_tops: set[str] | None) -> str | None:
    """What an RPATH/RUNPATH entry of ``lib_path`` is; None when it stays inside the input.

    ``wheel_tops``: the top-level folders of a wheel (None for files on disk); a
    $ORIGIN-relative entry into a folder the wheel does not ship leaves the wheel."""
    if not entry:
        return "empty"
    if entry.startswith(("$ORIGIN", "${ORIGIN}")):
        if wheel_tops is None:
            return None
        rest = entry.replace("${ORIGIN}", "$ORIGIN")[len("$ORIGIN"):].lstrip("/")
        target = posixpath.normpath(posixpath.join(posixpath.dirname(lib_path), rest))
        if not target.startswith("../") and target != ".." and target.split("/")[0] in wheel_tops | {"."}:
            return None
        outside = re.sub(r"^(\.\./)+", "", target)
        if SIBLING_LAYOUT.match(outside):
            return "sibling"
        return "site" if SITE_LAYOUT.search(outside) else "leaves"
    if not entry.startswith("/"):
        return "relative"
    if UNSAFE_RPATH.match(entry):
        return "build"
    if SITE_LAYOUT.search(entry):
        return "site"
    if SYSTEM_ROCM.match(entry):
        return "rocm"
    return "outside"


def rpath_findings(libs: Sequence[tuple[str, ElfInfo]], wheel_tops: set[str] | None) -> list[Finding]:
    """One finding per distinct RPATH/RUNPATH entry that leaves the input, with its libraries."""
    users: dict[tuple[str, str, str], list[str]] = {}
    for path, info in libs:
        for kind, entries in (("RPATH", info.rpath), ("RUNPATH", info.runpath)):
            for entry in dict.fromkeys(entries):
                what = classify_rpath(entry, path, wheel_tops)
                if what is not None:
                    users.setdefault((what, kind, entry), []).append(path)
    out = []
    for (what, kind, entry), paths in users.items():
        severity, meaning = _KINDS[what]
        shown = ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")
        msg = f"{kind} {entry!r} in {shown}: {meaning}"
        out.append(Finding("rpath", severity, paths[0] if len(paths) == 1 else None, msg,
                           cause=f"{kind} {meaning}", libraries=tuple(paths)))
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
    return [Finding("bundled-library", "error", path, msg, cause=f"bundles a {what} library")]
