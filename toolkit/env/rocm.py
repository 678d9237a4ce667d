"""The ROCm SDK: describe a pip-installed SDK (only through ``python -m rocm_sdk``) or find a
system install (``ROCM_PATH``, ``/opt/rocm``, ``/opt/rocm-X.Y.Z``, ``hipcc`` on PATH).
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from toolkit.core.errors import CommandFailed, EnvironmentProblem
from toolkit.core.proc import run
from toolkit.core.versions import version_sort_key
from toolkit.env.host import HostFacts, SystemRocm

QUERY_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class SdkInfo:
    root: str
    bin: str
    cmake: str
    version: str
    targets: tuple[str, ...]


def _query(python: str, *args: str) -> str:
    argv = [python, "-m", "rocm_sdk", *args]
    try:
        res = run(argv, timeout=QUERY_TIMEOUT_S, check=False)
    except CommandFailed as exc:
        raise EnvironmentProblem(f"cannot run {' '.join(argv)}: {exc.reason}") from None
    if not res.ok:
        raise EnvironmentProblem(
            f"`python -m rocm_sdk {' '.join(args)}` failed in {python} (exit {res.returncode}): "
            f"{res.last_line()}")
    return res.stdout.strip()


def describe_pip_sdk(python: str) -> SdkInfo:
    """Everything the build needs about a pip SDK, learned only through its own CLI."""
    targets = _query(python, "targets")
    return SdkInfo(
        root=_query(python, "path", "--root"),
        bin=_query(python, "path", "--bin"),
        cmake=_query(python, "path", "--cmake"),
        version=_query(python, "version"),
        targets=tuple(t for t in re.split(r"[;,\s]+", targets) if t),
    )


def major_minor(version: str) -> str:
    m = re.match(r"^\s*v?([0-9]+)\.([0-9]+)", version)
    return f"{m[1]}.{m[2]}" if m else version.strip()


# ----------------------------------------------------------------------------- system ROCm
def _version_from_file(root: Path) -> str | None:
    info = root / ".info" / "version"
    try:
        text = info.read_text(encoding="utf-8").strip()
        if text:
            return text.split("-")[0]
    except OSError:
        pass
    header = root / "include" / "hip" / "hip_version.h"
    try:
        h = header.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    parts = [re.search(rf"#define\s+HIP_VERSION_{k}\s+([0-9]+)", h) for k in ("MAJOR", "MINOR")]
    if parts[0] and parts[1]:
        return f"{parts[0][1]}.{parts[1][1]}"
    return None


def _version_from_hipconfig(hipconfig: str) -> str | None:
    try:
        res = run([hipconfig, "--version"], timeout=QUERY_TIMEOUT_S, check=False)
    except CommandFailed:
        return None
    out = res.stdout.strip()
    return out.split("-")[0] if res.ok and out else None


def system_roots(environ: Mapping[str, str] | None = None, *,
                 opt: str | os.PathLike[str] = "/opt") -> list[tuple[str, Path]]:
    """(where, root) candidates in search order."""
    env = os.environ if environ is None else environ
    out: list[tuple[str, Path]] = []
    for var in ("ROCM_PATH", "ROCM_HOME", "HIP_PATH"):
        if env.get(var):
            out.append((f"${var}", Path(env[var])))
    optdir = Path(opt)
    out.append(("/opt/rocm", optdir / "rocm"))
    if optdir.is_dir():
        versioned = [p for p in optdir.glob("rocm-[0-9]*") if p.is_dir()]
        for p in sorted(versioned, key=lambda p: version_sort_key(p.name), reverse=True):
            out.append((str(p), p))
    hipcc = shutil.which("hipcc", path=env.get("PATH", ""))
    if hipcc:
        real = Path(hipcc).resolve()
        out.append(("hipcc on PATH", real.parent.parent))
    return out


def find_system(environ: Mapping[str, str] | None = None, *,
                opt: str | os.PathLike[str] = "/opt",
                want: str | None = None) -> SystemRocm:
    """The first install with a readable version; with ``want`` (major.minor) prefer a match."""
    found: list[SystemRocm] = []
    looked: list[str] = []
    for where, root in system_roots(environ, opt=opt):
        looked.append(f"{where} ({root})" if where != str(root) else where)
        if not (root / "bin").is_dir() and not (root / "include" / "hip").is_dir():
            continue
        version = _version_from_file(root)
        if version is None:
            hipconfig = root / "bin" / "hipconfig"
            if os.access(hipconfig, os.X_OK):
                version = _version_from_hipconfig(str(hipconfig))
        if version is None:
            continue
        cand = SystemRocm(str(root), version)
        if want is None or major_minor(version) == major_minor(want):
            return cand
        found.append(cand)
    if found:
        return found[0]
    raise EnvironmentProblem(
        f"no system ROCm install found (looked at: {'; '.join(looked)})",
        hint="set ROCM_PATH=/opt/rocm-X.Y.Z, or use --rocm-from pip",
    )


def check_version(*, what: str, found: str, session: str, allow: bool,
                  flag: str = "--allow-rocm-mismatch") -> str | None:
    """None when major.minor agree; a warning when allowed; else ``EnvironmentProblem``."""
    if major_minor(found) == major_minor(session):
        return None
    msg = (f"{what} is version {found} but this session builds for ROCm {session} "
           f"({major_minor(found)} != {major_minor(session)})")
    if allow:
        return f"warning: {msg}; continuing because of {flag}"
    raise EnvironmentProblem(msg, hint=f"use the matching ROCm, or pass {flag}")




def with_system_rocm(host: HostFacts, want: str | None) -> HostFacts:
    """``host`` plus the system ROCm install (preferring version ``want``), when there is one.

    Not finding one is not an error here: the plan then shows /opt/rocm and the
    install-rocm-sdk step reports what it looked at when it runs.
    """
    import dataclasses

    from toolkit.core.errors import EnvironmentProblem

    try:
        found = find_system(want=want)
    except EnvironmentProblem:
        return host
    return dataclasses.replace(host, system_rocm=SystemRocm(found.root, found.version))
