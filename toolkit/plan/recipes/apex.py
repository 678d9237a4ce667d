"""ROCm/apex 1.4-1.13 (facts read in ROCm/apex's release branches, see apex.toml's evidence).

1.4-1.7: ``python -m build --wheel --no-isolation -C--build-option=--cpp_ext
-C--build-option=--cuda_ext`` (never the CUDA-only flags). 1.8: JIT design; ``--cpp_ext`` and
``--cuda_ext`` are ignored (setup.py only removes them from sys.argv), so upstream CI
(.github/workflows/rocm-ci.yml) and TheRock (build_prod_wheels.py) make JIT-only wheels. The
toolkit prebuilds every op by default (``APEX_BUILD_CPP_OPS=1 APEX_BUILD_CUDA_OPS=1``, read by
setup.py); the recipe option ``apex-ops=jit`` (``--apex-ops jit``) builds upstream's JIT-only
wheel instead.

1.9-1.13 keep 1.8's design (setup.py and op_builder unchanged in kind); 1.11 adds the op
``fused_conv_bias_relu`` (op_builder/fused_conv_bias_relu.py: ``APEX_BUILD_FUSED_CONV_BIAS_RELU``,
in the ``APEX_BUILD_CUDA_OPS`` group, links MIOpen on ROCm). ``invoke upstream`` compares these
module lists with each branch's op_builder ``NAME``s.

The op builder of 1.8 on (op_builder/builder.py, ``get_rocm_gpu_arch``, still there in 1.13)
replaces PYTORCH_ROCM_ARCH with
the first gfx that ``rocminfo`` reports whenever a GPU is visible: prebuilt builds run with
``ROCR_VISIBLE_DEVICES`` set and empty, which hides every GPU from the ROCm runtime rocminfo
uses (ROCR-Runtime's flag.h filters devices whenever the variable is set), so the wheel carries
exactly the requested targets, as on a build host without a GPU.

Always ``PYTORCH_ROCM_ARCH`` and a per-build ``TORCH_EXTENSIONS_DIR``; ``BUILD_VERSION`` where
get_apex_version reads it (1.7 on). ``--naming upstream`` sets ``DESIRED_CUDA`` and
``APEX_COMMIT`` instead, which apex turns into ``+rocm7.0.git<sha8>``.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from toolkit.core.step_names import INSTALL_REQUIREMENTS, PREFLIGHT
from toolkit.core.steps import Command, Step
from toolkit.core.versions import rocm_label, version_sort_key
from toolkit.data.matrix import Build, PackageVersion
from toolkit.data.schema import Flag, Table
from toolkit.plan.model import Context, Options
from toolkit.plan.recipes.base import RecipeDefaults, RecipeOption, option

EXT_FLAGS = ("--cpp_ext", "--cuda_ext")
BUILD_REQUIREMENTS = ("build", "wheel", "setuptools", "ninja", "packaging")
APEX_OPS = RecipeOption(("prebuilt", "jit"),
                        "apex 1.8 on: prebuilt (every op compiled into the wheel, the default) "
                        "or jit (upstream's JIT-only wheel: ops compile at first use)")

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
# ROCm/apex@c0f56f7ec (release/1.11.0) op_builder/fused_conv_bias_relu.py
_MODULES_111 = ("fused_conv_bias_relu",)


def _minor(version: PackageVersion) -> tuple[int, ...]:
    return version_sort_key(version.version)[:2]


def jit_only(version: PackageVersion, options: Options) -> bool:
    """Whether this build makes upstream's JIT-only wheel (1.8 on, ``apex-ops=jit``)."""
    ops = option(ApexRecipe(), options, "apex-ops")
    return version.build_style == "jit-prebuild" and ops == "jit"


def _preflight_why(version: PackageVersion) -> str:
    if _minor(version) <= (1, 6):
        return ("apex refuses to build otherwise, blaming 'Cuda None' (setup.py "
                "check_rocm_torch_binary_vs_bare_metal)")
    if _minor(version) == (1, 7):
        return "apex refuses to build otherwise (setup.py check_rocm_torch_binary_vs_bare_metal)"
    major, minor = _minor(version)
    return f"apex {major}.{minor} no longer checks: a mismatch would build against the wrong HIP"


# the keys this recipe adds to a version of apex.toml: ``seed_table = true``: the version's
# torch and ROCm pairs are those of the Apex wheel CI's seed table (upstream rules keep them)
VERSION_DATA = Table({"seed_table": Flag()}, optional=("seed_table",))


def seed_table(version: PackageVersion) -> bool:
    """Whether the Apex wheel CI's seed table fixes ``version``'s pairs (its data says so)."""
    return version.recipe_data.get("seed_table") is True


class ApexRecipe(RecipeDefaults):
    name = "apex"
    needs_torch = True
    build_styles: tuple[str, ...] = ("ext-flags", "jit-prebuild")
    options: Mapping[str, RecipeOption] = MappingProxyType({"apex-ops": APEX_OPS})
    shown_env: tuple[str, ...] = ("APEX_", "BUILD_", "ROCR_", "DESIRED_CUDA")
    version_data = VERSION_DATA

    def data_rows(self, version: PackageVersion) -> tuple[tuple[str, str], ...]:
        if not seed_table(version):
            return ()
        return (("seed table", "torch and ROCm pairs fixed by the Apex wheel CI's seed table"),)

    def smoke_expectations(self, version: str, modules: tuple[str, ...]) -> dict[str, Any]:
        """Prebuilt JIT ops (apex.<op> modules): installed_ops says which were built and
        git_version_info.torch_info the torch they were built against ("0.0": none)."""
        if not any(m.startswith("apex.") for m in modules):
            return {}
        return {"markers": ["apex_jit"],
                "recorded_torch": [{"module": "apex.git_version_info", "attribute": "torch_info",
                                    "key": "version", "ignore": ["0.0"]}]}

    def carries_gpu_code(self, build: Build, options: Options) -> bool:
        return not jit_only(build.pkg_version, options)

    def build_steps(self, ctx: Context) -> list[Step]:
        v = ctx.build.pkg_version
        jit_style = v.build_style == "jit-prebuild"
        jit = jit_only(v, ctx.options)
        env = dict(ctx.base_env)
        if ctx.options.naming == "upstream":
            env["DESIRED_CUDA"] = rocm_label(ctx.build.rocm.version)
            env["APEX_COMMIT"] = "{SHA}"
        elif _minor(v) >= (1, 7):
            env["BUILD_VERSION"] = f"{v.version}+{ctx.local_version}"
        if jit_style and not jit:
            env["APEX_BUILD_CPP_OPS"] = "1"
            env["APEX_BUILD_CUDA_OPS"] = "1"
            env["ROCR_VISIBLE_DEVICES"] = ""  # no GPU for rocminfo: PYTORCH_ROCM_ARCH stays
        argv: list[str] = [ctx.env_python, "-m", "build", "--wheel", "--no-isolation"]
        if not jit_style or jit:  # 1.8 ignores them; upstream's JIT-only build passes them
            argv += [f"-C--build-option={flag}" for flag in EXT_FLAGS]
        argv += ["--outdir", ctx.wheelhouse, ctx.source_dir]
        if jit:
            what = "JIT-only, as upstream CI and TheRock build it: ops compile at first use"
        elif jit_style:
            what = ("JIT ops prebuilt; ROCR_VISIBLE_DEVICES='' hides any GPU from rocminfo, "
                    "which would replace PYTORCH_ROCM_ARCH")
        else:
            what = "--cpp_ext --cuda_ext"
        return [
            Step(INSTALL_REQUIREMENTS,
                 "install the build front-end apex's setup.py needs (torch is already there)",
                 ctx.uv_pip(*BUILD_REQUIREMENTS)),
            Step(
                PREFLIGHT,
                f"hipcc major.minor must equal torch.version.hip major.minor ({_preflight_why(v)})",
                Command((ctx.toolkit_python, "-m", "toolkit", "preflight", "hip-match",
                         "--hipcc", f"{ctx.rocm.bin}/hipcc", "--python", ctx.env_python)),
            ),
            ctx.build_wheel(f"build apex {v.version} ({what}) for {';'.join(ctx.targets)}",
                            tuple(argv), env=env, cwd=ctx.source_dir),
        ]

    def expected_wheel(self, ctx: Context) -> tuple[str, str]:
        """setup.py get_apex_version: version.txt, or BUILD_VERSION (1.7 on), then
        ``+$DESIRED_CUDA`` and ``.git<APEX_COMMIT[:8]>``."""
        v = ctx.build.pkg_version
        if ctx.options.naming == "upstream":
            return ctx.build.package.dist, f"{v.version}+{rocm_label(ctx.build.rocm.version)}.git{{SHA8}}"
        if _minor(v) >= (1, 7):
            return ctx.build.package.dist, f"{v.version}+{ctx.local_version}"
        return ctx.build.package.dist, v.version

    def expected_modules(self, version: PackageVersion,
                         options: Options | None = None) -> tuple[str, ...]:
        if options is not None and jit_only(version, options):
            # upstream's JIT-only 1.8 wheel compiles no op: its apex.<op> names are lazy
            # stand-ins built on first use (installed_ops says what was prebuilt: nothing)
            return ("apex",)
        mods = _MODULES_14 + (_MODULES_15 if _minor(version) >= (1, 5) else ()) \
            + (_MODULES_111 if _minor(version) >= (1, 11) else ())
        if version.build_style == "jit-prebuild":
            return tuple(f"apex.{m}" for m in mods)
        return mods

    def notes(self, env: Mapping[str, str]) -> tuple[str, ...]:
        if "ROCR_VISIBLE_DEVICES" not in env:
            return ()
        return ("evidence: op_builder/builder.py get_rocm_gpu_arch (rocminfo's first gfx "
                "replaces PYTORCH_ROCM_ARCH); ROCm/ROCR-Runtime src/core/util/flag.h "
                "(ROCR_VISIBLE_DEVICES set, even empty, filters every GPU)",)
