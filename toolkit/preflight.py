"""Checks before a build starts, each naming both sides of a mismatch."""

from __future__ import annotations

import re
import subprocess

from toolkit.errors import EnvironmentProblem

_HIP = re.compile(r"HIP version:\s*([0-9]+)\.([0-9]+)")


def hipcc_version(hipcc: str) -> str:
    try:
        out = subprocess.run([hipcc, "--version"], capture_output=True, text=True, timeout=120,
                             env=None).stdout
    except OSError as exc:
        raise EnvironmentProblem(f"cannot run {hipcc} --version: {exc}") from None
    m = _HIP.search(out)
    if not m:
        raise EnvironmentProblem(f"{hipcc} --version printed no 'HIP version: X.Y' line")
    return f"{m.group(1)}.{m.group(2)}"


def torch_hip_version(python: str) -> str | None:
    code = "import torch; print(torch.version.hip or '')"
    res = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=300)
    if res.returncode != 0:
        tail = (res.stderr.strip().splitlines() or ["?"])[-1]
        raise EnvironmentProblem(f"cannot import torch with {python}: {tail}")
    value = res.stdout.strip()
    if not value:
        return None
    return ".".join(value.split(".")[:2])


def hip_match(hipcc: str, python: str) -> str:
    """hipcc major.minor must equal torch.version.hip major.minor (apex's own rule)."""
    compiler = hipcc_version(hipcc)
    torch_hip = torch_hip_version(python)
    if torch_hip is None:
        raise EnvironmentProblem(
            f"torch in {python} is not a ROCm build (torch.version.hip is None); hipcc is HIP "
            f"{compiler}: install the ROCm torch of this session")
    if torch_hip != compiler:
        raise EnvironmentProblem(
            f"hipcc is HIP {compiler} but torch was built with HIP {torch_hip}; apex needs them "
            "equal (major.minor) and would otherwise fail with a misleading message")
    return compiler
