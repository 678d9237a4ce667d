"""During a build the check is told what the build's environment provides (``--with``): the
installed torch's lib folder and the ROCm SDK's lib folder, so their libraries are provided
by a declared provider, not guessed from the checking host. A ROCm spread over the
distribution's /usr (Debian's hipcc) cannot be told apart from the host and is not declared."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolkit.core.steps import CheckWheel
from toolkit.data.matrix import load_matrix
from toolkit.env.host import HostFacts, SystemRocm
from toolkit.plan.layout import Layout
from toolkit.plan.model import Options
from toolkit.plan.planner import plan
from toolkit.plan.recipes.sample import DEMO_TARGETS, demo_build


def _check(build_id: str, host: HostFacts) -> tuple[str, ...]:
    m = load_matrix()
    p = plan(m, m.build(build_id), Options(), host, Layout(Path("/work"), Path("/cache")))
    [step] = [s for s in p.steps if isinstance(s.action, CheckWheel)]
    argv = step.action.command().argv
    return tuple(argv[i + 1] for i, a in enumerate(argv) if a == "--with")


def test_therock_sdk_lib_folder_is_a_declared_provider() -> None:
    # ROCm 7.13 is TheRock's pip SDK (rocm.toml); `python -m rocm_sdk path --root` is learned
    assert _check("apex-1.11.0-cp312-rocm7.13", HostFacts()) == ("{TORCH_LIB}", "{ROCM_ROOT}/lib")


@pytest.mark.parametrize(("root", "expected"), [
    ("/opt/rocm", ("{TORCH_LIB}", "/opt/rocm/lib")),
    ("/opt/rocm-7.2.0/", ("{TORCH_LIB}", "/opt/rocm-7.2.0/lib")),
    ("/usr", ("{TORCH_LIB}",)),
    ("/usr/local", ("{TORCH_LIB}",)),
])
def test_a_system_rocm_in_its_own_prefix_is_a_provider(root: str, expected: tuple[str, ...]) -> None:
    host = HostFacts(system_rocm=SystemRocm(root, "7.2.0"))
    assert _check("apex-1.13.0-cp312-rocm7.2", host) == expected


def test_a_cpu_build_declares_no_rocm() -> None:
    build = demo_build("3.11", None)
    options = Options(gfx=DEMO_TARGETS, rocm_from="system")  # as `python -m toolkit demo --cpu`
    p = plan(load_matrix(), build, options, HostFacts(), Layout(Path("/work"), Path("/cache")))
    [step] = [s for s in p.steps if isinstance(s.action, CheckWheel)]
    assert "--with" not in step.action.command().argv
