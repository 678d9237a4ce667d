"""Each recipe's build command against what upstream's own build does, written by hand from
upstream's scripts (not from the toolkit's output): the exact options, variables and wheel.

apex: ROCm/apex release/1.x setup.py (``--cpp_ext``/``--cuda_ext`` through 1.7; 1.8 reads
``APEX_BUILD_CPP_OPS``/``APEX_BUILD_CUDA_OPS`` and ignores those flags; ``BUILD_VERSION`` read
by get_apex_version from 1.7), .github/workflows/rocm-ci.yml (the JIT-only 1.8 build).
fbgemm_gpu: pytorch/FBGEMM .github/scripts/fbgemm_gpu_build.bash and fbgemm_gpu/setup.py
(``--package_variant=rocm`` through v1.2 at 625f9ce7; ``--build-target=default
--build-variant=rocm`` with ``BUILD_ROCM_VERSION`` from v1.3 at d93ec3f3; the release channel;
``-DHIP_ROOT_DIR``, ``-DAMDGPU_TARGETS``, ``--python-tag``, ``--plat-name``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from toolkit.env.host import HostFacts
from toolkit.plan.layout import Layout
from toolkit.plan.model import Options, Plan
from toolkit.plan.planner import plan
from toolkit.plan.recipes import load_matrix

HOST = HostFacts(cores=16, mem_available_gib=64.0)
LAYOUT = Layout(Path("/work"), Path("/cache"))
APEX_EXT = ["-C--build-option=--cpp_ext", "-C--build-option=--cuda_ext"]


def make(build_id: str, *gfx: str, **options: object) -> Plan:
    m = load_matrix()
    return plan(m, m.build(build_id), Options(gfx=gfx, **options), HOST, LAYOUT)  # type: ignore[arg-type]


# (build id, targets, the flags after `python -m build --wheel --no-isolation`, the variables
# the recipe sets, the wheel setup.py makes): hand-written from upstream, see the docstring
APEX = [
    ("apex-1.4.0-cp310-rocm6.1", ("gfx90a", "gfx942"), APEX_EXT, {}, "1.4.0"),
    ("apex-1.5.0-cp310-rocm6.2", ("gfx90a",), APEX_EXT, {}, "1.5.0"),
    ("apex-1.6.0-cp313t-rocm6.2.4", ("gfx942",), APEX_EXT, {}, "1.6.0"),
    ("apex-1.7.0-cp312-rocm6.4", ("gfx942",), APEX_EXT,
     {"BUILD_VERSION": "1.7.0+rocm6.4git{SHA8}"}, "1.7.0+rocm6.4git{SHA8}"),
    ("apex-1.8.0-cp312-rocm7.0", ("gfx942",), [],
     {"BUILD_VERSION": "1.8.0+rocm7.0git{SHA8}", "APEX_BUILD_CPP_OPS": "1",
      "APEX_BUILD_CUDA_OPS": "1", "ROCR_VISIBLE_DEVICES": ""}, "1.8.0+rocm7.0git{SHA8}"),
]


@pytest.mark.parametrize(("build_id", "gfx", "flags", "env", "version"), APEX,
                         ids=[c[0] for c in APEX])
def test_apex_build_command(build_id: str, gfx: tuple[str, ...], flags: list[str],
                            env: dict[str, str], version: str) -> None:
    p = make(build_id, *gfx)
    step = p.step("build-wheel")
    wheelhouse, src = f"/work/build/{build_id}/wheelhouse", f"/work/build/{build_id}/src"
    assert list(step.argv[1:]) == ["-m", "build", "--wheel", "--no-isolation", *flags,
                                   "--outdir", wheelhouse, src]
    assert step.argv[0].startswith("/cache/envs/") and step.argv[0].endswith("/bin/python")
    mine = {k: v for k, v in step.env.items()  # BUILD_ROCM_VERSION: every build's base env
            if k.startswith(("APEX_", "BUILD_", "ROCR_")) and k != "BUILD_ROCM_VERSION"}
    assert mine == env
    assert step.env["PYTORCH_ROCM_ARCH"] == ";".join(gfx)
    assert step.env["TORCH_EXTENSIONS_DIR"] == f"/work/build/{build_id}/torch_extensions"
    expect = p.step("expect-wheel").action
    assert (expect.dist, expect.version) == ("apex", version)  # type: ignore[union-attr]
    names = [s.name for s in p.steps]
    assert names.index("preflight") < names.index("build-wheel")


def test_apex_18_jit_only_is_upstream_ci_command() -> None:
    """rocm-ci.yml builds 1.8 with --cpp_ext --cuda_ext (ignored) and no APEX_BUILD_*."""
    step = make("apex-1.8.0-cp312-rocm7.0", "gfx942",
                recipe_options=("apex-ops=jit",)).step("build-wheel")
    assert list(step.argv[5:7]) == APEX_EXT
    assert not [k for k in step.env if k.startswith(("APEX_", "ROCR_"))]


FBGEMM = [
    ("fbgemm_gpu-1.2.0-cp312-rocm6.3", ("gfx908", "gfx90a", "gfx942"),
     ["--package_variant=rocm"], None),
    ("fbgemm_gpu-1.3.0-cp312-rocm6.4", ("gfx908", "gfx90a", "gfx942"),
     ["--build-target=default", "--build-variant=rocm"], "6.4"),
    ("fbgemm_gpu-1.5.0-cp313-rocm7.1", ("gfx942",),
     ["--build-target=default", "--build-variant=rocm"], "7.1"),
]


@pytest.mark.parametrize(("build_id", "gfx", "variant", "rocm"), FBGEMM,
                         ids=[c[0] for c in FBGEMM])
def test_fbgemm_build_command(build_id: str, gfx: tuple[str, ...], variant: list[str],
                              rocm: str | None) -> None:
    p = make(build_id, *gfx)
    step = p.step("build-wheel")
    py = build_id.split("-cp")[1].split("-")[0]
    root = "/opt/rocm" if p.build.rocm.sdk.provider == "system" else "{ROCM_ROOT}"
    options = [*variant, "--package_channel=release", f"-DHIP_ROOT_DIR={root}",
               f"-DAMDGPU_TARGETS={';'.join(gfx)}", f"--python-tag=py{py}",
               "--plat-name=manylinux_2_28_x86_64"]
    src = f"/work/build/{build_id}/src/fbgemm_gpu"
    assert list(step.argv[1:]) == ["-m", "build", "--wheel", "--no-isolation",
                                   *(f"--config-setting=--build-option={o}" for o in options),
                                   "--outdir", f"/work/build/{build_id}/wheelhouse", src]
    assert step.env.get("BUILD_ROCM_VERSION") == rocm
    assert "BUILD_FROM_NOVA" in step.unset and "BUILD_FROM_NOVA" not in step.env
    assert step.cwd == src
    expect = p.step("expect-wheel").action
    assert (expect.dist, expect.version) == (  # type: ignore[union-attr]
        "fbgemm_gpu-rocm", build_id.split("-")[1])
    check = " ".join(p.step("check").argv)
    for symbol in ("fbgemm_gpu::asynchronous_inclusive_cumsum_cpu", "fbgemm_gpu::jagged_2d_to_dense",
                   "fbgemm_gpu::asynchronous_inclusive_cumsum_gpu",
                   "fbgemm_gpu::merge_pooled_embeddings"):  # upstream's post-build nm checks
        assert f"--require-symbol {symbol}" in check
