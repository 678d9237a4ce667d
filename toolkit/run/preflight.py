"""Checks before a build starts, each naming both sides of a mismatch."""

from __future__ import annotations

import re

from toolkit.core.errors import CommandFailed, EnvironmentProblem
from toolkit.core.proc import run

_HIP = re.compile(r"HIP version:\s*([0-9]+)\.([0-9]+)")


def hipcc_version(hipcc: str) -> str:
    try:
        out = run([hipcc, "--version"], timeout=120, check=False).stdout
    except CommandFailed as exc:
        raise EnvironmentProblem(f"cannot run {hipcc} --version: {exc.reason}") from None
    m = _HIP.search(out)
    if not m:
        raise EnvironmentProblem(f"{hipcc} --version printed no 'HIP version: X.Y' line")
    return f"{m.group(1)}.{m.group(2)}"


def hip_match(hipcc: str, python: str) -> str:
    """hipcc major.minor must equal torch.version.hip major.minor (apex's own rule)."""
    from toolkit.env.rocm import major_minor
    from toolkit.env.torchprobe import torch_info

    compiler = hipcc_version(hipcc)
    hip = torch_info(python).get("hip")
    torch_hip = major_minor(str(hip)) if hip else None
    if torch_hip is None:
        raise EnvironmentProblem(
            f"torch in {python} is not a ROCm build (torch.version.hip is None); hipcc is HIP "
            f"{compiler}: install the ROCm torch of this session")
    if torch_hip != compiler:
        raise EnvironmentProblem(
            f"hipcc is HIP {compiler} but torch was built with HIP {torch_hip}; apex needs them "
            "equal (major.minor) and would otherwise fail with a misleading message")
    return compiler
