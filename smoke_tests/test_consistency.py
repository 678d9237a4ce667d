"""Does it match my torch and ROCm?"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from importlib import metadata

import pytest


def minor(version: str) -> str:
    m = re.match(r"\s*([0-9]+)\.([0-9]+)", version)
    return f"{m.group(1)}.{m.group(2)}" if m else version


@pytest.mark.needs_torch
def test_torch_is_the_builds(build):
    import torch

    if not build.torch:
        pytest.skip(f"{build.id} names no torch version")
    assert minor(torch.__version__) == minor(build.torch), (
        f"torch {torch.__version__} is installed; {build.id} was built for torch {build.torch}")


@pytest.mark.needs_torch
def test_torch_hip_matches_rocm(build):
    import torch

    hip = torch.version.hip
    assert hip, (f"torch {torch.__version__} is not a ROCm build (torch.version.hip is None); "
                 f"{build.id} needs one for HIP {build.hip or build.rocm}")
    if not build.hip:
        pytest.skip(f"the environment's ROCm version is unknown ({build.rocm!r})")
    assert minor(hip) == minor(build.hip), (
        f"torch.version.hip is {hip}, but the environment's ROCm {build.rocm} has HIP {build.hip}")


def recorded_torch(build, load):
    """(torch version the package recorded at build time, where it says so) or None."""
    for where in build.recorded_torch:  # the recipe's word on where its package records it
        table = getattr(load(where["module"]), where["attribute"], None)
        version = table.get(where["key"]) if isinstance(table, dict) else None
        if version and version not in where.get("ignore", ()):
            return version, f"{where['module']}.{where['attribute']}[{where['key']!r}]"
    for req in metadata.requires(build.dist) or ():
        m = re.match(r"^torch\s*(?:\(\s*)?(==|~=)\s*([0-9][^,;\s)]*)", req)
        if m:
            return m.group(2), f"its Requires-Dist ({req})"
    return None


@pytest.mark.needs_torch
def test_recorded_torch_matches_installed(build, load):
    import torch

    found = recorded_torch(build, load)
    if found is None:
        pytest.skip(f"{build.dist} {build.version} does not record the torch it was built for")
    version, where = found
    assert minor(version) == minor(torch.__version__), (
        f"{build.dist} was built for torch {version} ({where}); torch {torch.__version__} "
        "is installed (expect undefined symbol errors)")


def test_rocm_sdk_selftest(build):
    if importlib.util.find_spec("rocm_sdk") is None:
        pytest.skip("ROCm did not come from pip here (no rocm_sdk package in the environment): "
                    "`rocm-sdk test` checks pip installs only")
    proc = subprocess.run([sys.executable, "-m", "rocm_sdk", "test"], capture_output=True,
                          text=True, errors="replace", timeout=900, check=False)
    tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
    assert proc.returncode == 0, f"`rocm-sdk test` failed (exit {proc.returncode}):\n{tail}"
