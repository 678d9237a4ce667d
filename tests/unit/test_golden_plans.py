"""Golden files pin every recipe's plan: exact argv, env and cwd per version.

Regenerate after an intended change with ``UPDATE_GOLDENS=1 pytest tests/unit/test_golden_plans.py``
and review the diff. Without UPDATE_GOLDENS a difference fails; with CI set UPDATE_GOLDENS is
refused.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from toolkit.data.matrix import load_matrix
from toolkit.env.host import HostFacts
from toolkit.plan.layout import Layout
from toolkit.plan.model import Options, Plan
from toolkit.plan.planner import plan

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "plans"
HOST = HostFacts(cores=16, mem_available_gib=64.0)
LAYOUT = Layout(Path("/work"), Path("/cache"))
CASES = {
    "apex-1.4.0-cp310-rocm6.1": ("gfx90a", "gfx942"),
    "apex-1.5.0-cp310-rocm6.2": ("gfx90a",),
    "apex-1.6.0-cp313t-rocm6.2.4": ("gfx942",),
    "apex-1.7.0-cp312-rocm6.4": ("gfx942",),
    "apex-1.8.0-cp312-rocm7.0": ("gfx942",),
    "fbgemm_gpu-1.2.0-cp312-rocm6.3": ("gfx908", "gfx90a", "gfx942"),
    "fbgemm_gpu-1.3.0-cp312-rocm6.4": ("gfx908", "gfx90a", "gfx942"),
    "fbgemm_gpu-1.5.0-cp313-rocm7.1": ("gfx942",),
}


def make(build_id: str) -> Plan:
    m = load_matrix()
    return plan(m, m.build(build_id), Options(gfx=CASES[build_id]), HOST, LAYOUT)


@pytest.mark.parametrize("build_id", sorted(CASES))
def test_plan_matches_golden(build_id: str) -> None:
    actual = json.dumps(make(build_id).as_json(), indent=2, sort_keys=True) + "\n"
    path = GOLDEN / f"{build_id}.json"
    if os.environ.get("UPDATE_GOLDENS") == "1":
        if os.environ.get("CI"):
            pytest.fail("UPDATE_GOLDENS=1 is refused when CI is set: goldens change only by "
                        "hand, with the diff reviewed")
        path.write_text(actual)
    assert path.exists(), f"missing golden {path}; run with UPDATE_GOLDENS=1"
    assert actual == path.read_text(), f"plan of {build_id} changed; review, then UPDATE_GOLDENS=1"


@pytest.mark.parametrize("build_id", [b for b in sorted(CASES) if b.startswith("apex")])
def test_apex_contract(build_id: str) -> None:
    p = make(build_id)
    step = p.step("build-wheel")
    minor = int(build_id.split("-")[1].split(".")[1])
    argv = " ".join(step.argv)
    assert step.argv[1:5] == ("-m", "build", "--wheel", "--no-isolation")
    for flag in ("--fast_layer_norm", "--fmha", "--fast_bottleneck", "--fused_conv_bias_relu",
                 "--fast_multihead_attn"):
        assert flag not in argv
    if minor <= 7:
        assert "-C--build-option=--cpp_ext" in step.argv
        assert "-C--build-option=--cuda_ext" in step.argv
        assert "APEX_BUILD_CPP_OPS" not in step.env
    else:
        assert "--cpp_ext" not in argv
        assert step.env["APEX_BUILD_CPP_OPS"] == step.env["APEX_BUILD_CUDA_OPS"] == "1"
    assert ("BUILD_VERSION" in step.env) == (minor >= 7)
    assert step.env["PYTORCH_ROCM_ARCH"] == ";".join(CASES[build_id])
    assert step.env["TORCH_EXTENSIONS_DIR"] == f"/work/build/{build_id}/torch_extensions"
    names = [s.name for s in p.steps]
    assert names.index("preflight") < names.index("build-wheel")


@pytest.mark.parametrize("build_id", [b for b in sorted(CASES) if b.startswith("fbgemm")])
def test_fbgemm_contract(build_id: str) -> None:
    p = make(build_id)
    step = p.step("build-wheel")
    opts = [a.removeprefix("--config-setting=--build-option=") for a in step.argv
            if a.startswith("--config-setting=--build-option=")]
    new_style = not build_id.startswith(("fbgemm_gpu-1.1", "fbgemm_gpu-1.2"))
    if new_style:
        assert opts[:2] == ["--build-target=default", "--build-variant=rocm"]
        assert step.env["BUILD_ROCM_VERSION"] == build_id.rsplit("rocm", 1)[1][:3]
    else:
        assert opts[0] == "--package_variant=rocm"
        assert "BUILD_ROCM_VERSION" not in step.env
    assert f"-DAMDGPU_TARGETS={';'.join(CASES[build_id])}" in opts
    assert any(o.startswith("-DHIP_ROOT_DIR=") for o in opts)
    assert f"--python-tag=py{build_id.split('-cp')[1].split('-')[0]}" in opts
    assert "--plat-name=manylinux_2_28_x86_64" in opts
    assert "BUILD_FROM_NOVA" in step.unset and "BUILD_FROM_NOVA" not in step.env
    assert step.cwd == f"/work/build/{build_id}/src/fbgemm_gpu"
    check = " ".join(p.step("check").argv)
    assert "--require-symbol fbgemm_gpu::jagged_2d_to_dense" in check
