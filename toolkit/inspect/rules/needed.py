"""Every DT_NEEDED accounted for: the rule for the libraries the resolver did not find.

A needed library is shipped (the resolver found it in the input), provided by a declared
provider (``--with``; during a build the build's torch and ROCm), allowed by the judged
manylinux policy (auditwheel's ``lib_whitelist``; the resolver never reports those as
missing), or excluded (``--exclude PATTERN``, as ``auditwheel repair --exclude``). Of the
rest, known torch and ROCm sonames are attributed to torch or the ROCm SDK (a warning:
verify with ``--with``), and anything else is an error naming the fixes. A library the input
ships, but where the needing library's RUNPATH/RPATH does not look (no ``$ORIGIN`` entry
reaching its folder), is named as such: the loader finds it only on a system path. This
machine's copy of a library (the resolver's system path) is named as information only.
"""

from __future__ import annotations

import fnmatch
import os
import posixpath
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from toolkit.inspect.readers.resolver import Lib, compatible
from toolkit.inspect.report import Finding
from toolkit.inspect.rules.hygiene import ROCM_LIBS, TORCH_LIBS

TORCH_PACKAGES = ("torch", "pytorch-triton-rocm")
ROCM_PACKAGES = ("rocm", "rocm-sdk-core", "rocm-sdk-libraries", "rocm-sdk-devel")


def stem(name: str) -> str:
    """``libamdhip64.so.7`` -> ``libamdhip64``."""
    return name.split(".so")[0]


def provider_of(name: str) -> str | None:
    """The package a known torch or ROCm soname comes from (None when it is not one)."""
    base = stem(name)
    if base in TORCH_LIBS:
        return "torch"
    if base in ROCM_LIBS:
        return "rocm-sdk"
    return None


def _required_package(name: str, requires: Sequence[str]) -> str | None:
    """A Requires-Dist package named after the library (``libtbb.so.12`` -> ``tbb``)."""
    want = stem(name).removeprefix("lib").lower().replace("_", "-").replace(".", "-")
    return next((r for r in requires if r == want or r.startswith(want + "-")), None) if want else None


def excluded(name: str, patterns: Sequence[str]) -> bool:
    return any(fnmatch.fnmatch(name, p) for p in patterns)


@dataclass(frozen=True)
class Missing:
    """One needed library nothing provided, as the resolver saw it."""

    name: str
    needer: str  # the library whose DT_NEEDED names it (maybe a dependency of ``library``)
    library: str  # the input library whose closure it is in
    on_host: str | None = None  # this machine's copy (information only)
    shipped: str | None = None  # the input's own copy, which the needer's search path misses
    search: str = ""  # how the needer searches: "RUNPATH ($ORIGIN/lib)", "" (no RUNPATH/RPATH)
    fix: str = ""  # the $ORIGIN entry that would reach the shipped copy ("$ORIGIN/../demo.libs")


def _origin_dir(origin: str) -> str:
    return origin[6:] or "." if origin.startswith("wheel:") else origin


def unreached(name: str, needer: Lib, index: Mapping[str, Lib]) -> dict[str, str]:
    """When the input ships ``name`` (a copy ``needer`` could load) that ``needer``'s
    RUNPATH/RPATH does not reach: ``shipped``, ``search`` and ``fix`` for :class:`Missing`;
    else nothing."""
    want = needer.info
    copy = next((lib for key, lib in sorted(index.items()) if posixpath.basename(key) == name
                 and lib.info is not None and want is not None and compatible(lib.info, want)), None)
    if copy is None or want is None:
        return {}
    kind, entries = ("RUNPATH", want.runpath) if want.runpath else ("RPATH", want.rpath)
    search = f"{kind} ({':'.join(entries)})" if entries else ""
    here, there = _origin_dir(needer.origin), _origin_dir(copy.origin)
    rel = (posixpath if needer.origin.startswith("wheel:") else os.path).relpath(there, here)
    fix = "$ORIGIN" if rel == "." else f"$ORIGIN/{rel}"
    return {"shipped": copy.path, "search": search, "fix": fix}


def missing_findings(
    missing: Missing, *, policy: str, requires: Sequence[str], excludes: Sequence[str]
) -> list[Finding]:
    """The finding for one unprovided library: none (excluded), a warning (torch/ROCm) or an
    error with the fixes. ``policy`` names the judged policy; ``requires`` the wheel's
    Requires-Dist (canonical names)."""
    name, lib = missing.name, missing.library
    via = "" if missing.needer == lib else f" (needed by {missing.needer})"
    host = f"; this machine has it at {missing.on_host}, which is not an input" if missing.on_host else ""
    if excluded(name, excludes):
        return [Finding("missing-library", "info", lib, f"{lib} needs {name}{via}: excluded by --exclude, "
                        "not checked", cause=f"needs {name}, excluded")]
    owner = provider_of(name)
    package = _required_package(name, requires) if owner is None else None
    if package is not None:
        msg = (f"{lib} needs {name}{via}: provided by {package} (Requires-Dist: {package}; verify "
               f"with --with {package}'s lib folder); its symbols were not checked{host}")
        return [Finding("missing-library", "warning", lib, msg, cause=f"needs {name}, provided by {package}")]
    if owner is not None:
        pkgs = TORCH_PACKAGES if owner == "torch" else ROCM_PACKAGES
        declared = [r for r in requires if r in pkgs or r.startswith("rocm-sdk")]
        why = f"Requires-Dist: {', '.join(declared)}" if declared else "a known soname"
        msg = (f"{lib} needs {name}{via}: provided by {owner} ({why}; verify with --with "
               f"{owner}'s lib folder); its symbols were not checked{host}")
        return [Finding("missing-library", "warning", lib, msg, cause=f"needs {name}, provided by {owner}")]
    if missing.shipped is not None:
        return [_unreached(missing, via, host)]
    msg = (
        f"{lib} needs {name}{via}, which the wheel does not ship, {policy} does not allow "
        f"(not in auditwheel's list of libraries every system has) and no --with provides"
        f"{host}; fix: ship it (auditwheel repair), declare a provider (--with DIR|WHEEL) "
        f"or --exclude {name}"
    )
    return [Finding("missing-library", "error", lib, msg, cause=f"needs {name}, not provided")]


def _unreached(m: Missing, via: str, host: str) -> Finding:
    """The input ships the library, but the needer's RUNPATH/RPATH does not look there."""
    whose = "its" if m.needer == m.library else f"{m.needer}'s"
    how = (f"{whose} {m.search} has no $ORIGIN entry reaching it" if m.search
           else f"{'it' if m.needer == m.library else m.needer} has no RUNPATH or RPATH")
    ships = "the input holds" if os.path.isabs(m.shipped or "") else "the wheel ships"
    msg = (f"{m.library} needs {m.name}{via}, which {ships} at {m.shipped}, but {how}: the loader "
           f"finds it only on a system path{host}; fix: add {m.fix} to the RUNPATH of {m.needer} "
           f"(-Wl,-rpath,'{m.fix}' or patchelf --add-rpath '{m.fix}')")
    return Finding("missing-library", "error", m.library, msg,
                   cause=f"needs {m.name}, shipped but not on its RUNPATH")
