"""pytorch/FBGEMM fbgemm_gpu, ROCm variant.

Built from ``fbgemm_gpu/`` with torch and ``requirements.txt`` installed; each option passed
as ``--config-setting=--build-option=<opt>``. Up to v1.2 ``--package_variant=rocm``; from
v1.3 ``--build-target=default --build-variant=rocm`` with ``BUILD_ROCM_VERSION`` set.
``BUILD_FROM_NOVA`` is removed from the environment (set at all, it shrinks the targets).
"""

from __future__ import annotations

from toolkit.core.steps import Step
from toolkit.data.matrix import Build, PackageVersion
from toolkit.plan.model import Context

VARIANT_OPTIONS = {
    "package-variant": ("--package_variant=rocm",),
    "build-variant": ("--build-target=default", "--build-variant=rocm"),
}
SYMBOLS = (
    "fbgemm_gpu::asynchronous_inclusive_cumsum_cpu",
    "fbgemm_gpu::jagged_2d_to_dense",
    "fbgemm_gpu::asynchronous_inclusive_cumsum_gpu",
    "fbgemm_gpu::merge_pooled_embeddings",
)


class FbgemmGpuRecipe:
    name = "fbgemm_gpu"
    needs_torch = True

    def carries_gpu_code(self, build: Build) -> bool:
        return True

    def build_steps(self, ctx: Context) -> list[Step]:
        v = ctx.build.pkg_version
        pkg_dir = f"{ctx.source_dir}/{ctx.build.package.subdir}".rstrip("/")
        env = dict(ctx.base_env)
        if v.build_style != "build-variant":
            env.pop("BUILD_ROCM_VERSION", None)
        options = (
            *VARIANT_OPTIONS[v.build_style],
            f"-DHIP_ROOT_DIR={ctx.rocm.root}",
            f"-DAMDGPU_TARGETS={';'.join(ctx.targets)}",
            f"--python-tag=py{ctx.build.cp_tag.removeprefix('cp').rstrip('t')}",
            "--plat-name=manylinux_2_28_x86_64",
        )
        argv = (ctx.env_python, "-m", "build", "--wheel", "--no-isolation",
                *(f"--config-setting=--build-option={o}" for o in options),
                "--outdir", ctx.wheelhouse, pkg_dir)
        return [
            Step("install-requirements", "install fbgemm_gpu's build requirements",
                 ctx.uv_pip("-r", f"{pkg_dir}/requirements.txt", "build", "wheel", "setuptools",
                            cwd=pkg_dir)),
            ctx.build_wheel(f"build fbgemm_gpu {v.version} (ROCm variant) for "
                            f"{';'.join(ctx.targets)}",
                            argv, env=env, unset=("BUILD_FROM_NOVA",), cwd=pkg_dir),
        ]

    def expected_modules(self, version: PackageVersion) -> tuple[str, ...]:
        return ("fbgemm_gpu",)

    def required_symbols(self, version: PackageVersion) -> tuple[str, ...]:
        return SYMBOLS
