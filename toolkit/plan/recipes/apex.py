"""ROCm/apex 1.4-1.8.

1.4-1.7: ``python -m build --wheel --no-isolation -C--build-option=--cpp_ext
-C--build-option=--cuda_ext`` (never the CUDA-only flags). 1.8: JIT design, prebuilt with
``APEX_BUILD_CPP_OPS=1 APEX_BUILD_CUDA_OPS=1``. Always ``PYTORCH_ROCM_ARCH`` and a per-build
``TORCH_EXTENSIONS_DIR``; ``BUILD_VERSION`` where the version reads it (1.7, 1.8).
"""

from __future__ import annotations

from toolkit.core.steps import Command, Step
from toolkit.core.versions import version_sort_key
from toolkit.data.matrix import Build, PackageVersion
from toolkit.plan.model import Context

EXT_FLAGS = ("--cpp_ext", "--cuda_ext")
BUILD_REQUIREMENTS = ("build", "wheel", "setuptools", "ninja", "packaging")
CUDA_ONLY_FLAGS = ("--fast_layer_norm", "--fmha", "--fast_bottleneck", "--fused_conv_bias_relu")

_MODULES_14 = (
    "apex_C", "amp_C", "syncbn", "fused_layer_norm_cuda", "mlp_cuda", "fused_dense_cuda",
    "scaled_upper_triang_masked_softmax_cuda", "scaled_masked_softmax_cuda",
    "fused_rotary_positional_embedding", "distributed_adam_cuda", "distributed_lamb_cuda",
    "bnp", "xentropy_cuda", "focal_loss_cuda", "fused_index_mul_2d", "fused_adam_cuda",
    "fused_lamb_cuda", "fast_multihead_attn", "transducer_joint_cuda", "transducer_loss_cuda",
    "peer_memory_cuda", "nccl_p2p_cuda",
)
_MODULES_15 = (
    "fused_weight_gradient_mlp_cuda", "generic_scaled_masked_softmax_cuda",
    "scaled_softmax_cuda", "fused_bias_swiglu",
)


def _minor(version: PackageVersion) -> tuple[int, ...]:
    return version_sort_key(version.version)[:2]


class ApexRecipe:
    name = "apex"
    needs_torch = True

    def carries_gpu_code(self, build: Build) -> bool:
        return True

    def build_steps(self, ctx: Context) -> list[Step]:
        v = ctx.build.pkg_version
        jit = v.build_style == "jit-prebuild"
        env = dict(ctx.base_env)
        if ctx.options.naming == "upstream":
            env["DESIRED_CUDA"] = f"rocm{ctx.build.rocm.version}"
            env["APEX_COMMIT"] = "{SHA}"
        elif _minor(v) >= (1, 7):
            env["BUILD_VERSION"] = f"{v.version}+{ctx.local_version}"
        if jit:
            env["APEX_BUILD_CPP_OPS"] = "1"
            env["APEX_BUILD_CUDA_OPS"] = "1"
        argv: list[str] = [ctx.env_python, "-m", "build", "--wheel", "--no-isolation"]
        if not jit:
            argv += [f"-C--build-option={flag}" for flag in EXT_FLAGS]
        argv += ["--outdir", ctx.wheelhouse, ctx.source_dir]
        return [
            Step("install-requirements",
                 "install the build front-end apex's setup.py needs (torch is already there)",
                 ctx.uv_pip(*BUILD_REQUIREMENTS)),
            Step(
                "preflight",
                "hipcc major.minor must equal torch.version.hip major.minor "
                "(apex refuses to build otherwise, with a misleading message)",
                Command((ctx.toolkit_python, "-m", "toolkit", "preflight", "hip-match",
                         "--hipcc", f"{ctx.rocm.bin}/hipcc", "--python", ctx.env_python)),
            ),
            ctx.build_wheel(
                f"build apex {v.version} ("
                + ("JIT ops prebuilt" if jit else "--cpp_ext --cuda_ext")
                + f") for {';'.join(ctx.targets)}",
                tuple(argv), env=env, cwd=ctx.source_dir,
            ),
        ]

    def expected_modules(self, version: PackageVersion) -> tuple[str, ...]:
        mods = _MODULES_14 + (_MODULES_15 if _minor(version) >= (1, 5) else ())
        if version.build_style == "jit-prebuild":
            return tuple(f"apex.{m}" for m in mods)
        return mods

    def required_symbols(self, version: PackageVersion) -> tuple[str, ...]:
        return ()
