"""pytorch/FBGEMM fbgemm_gpu, ROCm variant (facts read in FBGEMM's tags, see fbgemm_gpu.toml).

Built from ``fbgemm_gpu/`` with torch and ``requirements.txt`` installed, the sources with
their submodules; each option passed as ``--config-setting=--build-option=<opt>``, as
.github/scripts/fbgemm_gpu_build.bash does. Up to v1.2 ``--package_variant=rocm``; from v1.3
``--build-target=default --build-variant=rocm`` with ``BUILD_ROCM_VERSION`` set (setup.py
raises without it). Always ``--package_channel=release``: setup.py defaults to ``nightly``,
which names the package ``fbgemm_gpu_nightly-rocm`` and versions it by the date.

``BUILD_FROM_NOVA`` is removed from the environment: in setup.py ``=1`` exits without
building and ``=0`` drops the channel and variant from the package name; FbgemmGpu.cmake
skips tbb for Nova builds. Without Nova, v1.3 links ``-ltbb`` and v1.4 on fail in CMake
("tbb not found"): the provide-tbb step installs and checks libtbb before the build, and
LIBRARY_PATH / CMAKE_LIBRARY_PATH point at it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from toolkit.core.step_names import INSTALL_REQUIREMENTS, PROVIDE_TBB
from toolkit.core.steps import ProvideLibrary, Step
from toolkit.data.matrix import Build, PackageVersion
from toolkit.data.schema import Table, Tagged, Text
from toolkit.plan.model import Context, Options
from toolkit.plan.recipes.base import RecipeDefaults

VARIANT_OPTIONS = {
    "package-variant": ("--package_variant=rocm",),
    "build-variant": ("--build-target=default", "--build-variant=rocm"),
}
CHANNEL = "--package_channel=release"
SYSTEM_LIB_DIRS = ("/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib")
TBB_HEADERS = ("tbb/tbb.h", "oneapi/tbb.h")
TBB_WHY = "fbgemm_gpu links -ltbb outside Nova"
SYMBOLS = (
    "fbgemm_gpu::asynchronous_inclusive_cumsum_cpu",
    "fbgemm_gpu::jagged_2d_to_dense",
    "fbgemm_gpu::asynchronous_inclusive_cumsum_gpu",
    "fbgemm_gpu::merge_pooled_embeddings",
)


@dataclass(frozen=True)
class TbbSource:
    provider: str  # "pypi" (a wheel with the library and headers) | "system"
    spec: str | None = None  # pypi: the requirement, e.g. tbb-devel==2022.2.0


# the keys this recipe adds to a version of fbgemm_gpu.toml: where libtbb (library and
# headers) comes from, when the build links it
VERSION_DATA = Table({"tbb": Tagged("provider", {"pypi": Table({"spec": Text()}),
                                                 "system": Table({})})},
                     optional=("tbb",))


def tbb_source(version: PackageVersion) -> TbbSource | None:
    """Where ``version``'s build takes libtbb from (its data's ``tbb``), else None."""
    tbb = version.recipe_data.get("tbb")
    return TbbSource(tbb["provider"], tbb.get("spec")) if tbb else None


def tbb_step(ctx: Context) -> Step | None:
    """provide-tbb for a version whose data names a tbb source; None otherwise."""
    tbb = tbb_source(ctx.build.pkg_version)
    if tbb is None:
        return None
    env_dir = str(ctx.layout.env_dir(ctx.build))
    if tbb.provider == "pypi":
        assert tbb.spec
        action = ProvideLibrary(ctx.uv_pip(tbb.spec), f"pypi {tbb.spec}", "tbb", TBB_HEADERS,
                                (f"{env_dir}/lib",), (f"{env_dir}/include",), TBB_WHY)
        what = f"install {tbb.spec} (libtbb and its headers) into the build environment"
    else:
        action = ProvideLibrary(None, "system", "tbb", TBB_HEADERS, SYSTEM_LIB_DIRS,
                                ("/usr/include",), TBB_WHY)
        what = "use the system's libtbb"
    return Step(PROVIDE_TBB, f"{what}; fbgemm_gpu links -ltbb outside Nova (checked here, "
                "before the build)", action)


class FbgemmGpuRecipe(RecipeDefaults):
    name = "fbgemm_gpu"
    needs_torch = True
    # package-variant (up to v1.2), build-variant (v1.3 on)
    build_styles: tuple[str, ...] = tuple(VARIANT_OPTIONS)
    shown_env: tuple[str, ...] = ("BUILD_", "LIBRARY_PATH", "CMAKE_LIBRARY_PATH")
    version_data = VERSION_DATA

    def data_rows(self, version: PackageVersion) -> tuple[tuple[str, str], ...]:
        tbb = tbb_source(version)
        return (("tbb", f"{tbb.provider} {tbb.spec or ''}".strip()),) if tbb else ()

    def smoke_expectations(self, version: str, modules: tuple[str, ...]) -> dict[str, Any]:
        """fbgemm_gpu records the torch of each release in its compatibility table."""
        release = ".".join(version.split(".")[:2])
        return {"recorded_torch": [{"module": "fbgemm_gpu",
                                    "attribute": "_fbgemm_torch_compat_table", "key": release}]}

    def carries_gpu_code(self, build: Build, options: Options) -> bool:
        return True

    def build_steps(self, ctx: Context) -> list[Step]:
        v = ctx.build.pkg_version
        pkg_dir = f"{ctx.source_dir}/{ctx.build.package.subdir}".rstrip("/")
        env = dict(ctx.base_env)
        if v.build_style != "build-variant":
            env.pop("BUILD_ROCM_VERSION", None)
        tbb = tbb_step(ctx)
        if tbb is not None:
            env["LIBRARY_PATH"] = "{TBB_LIB_DIR}"  # v1.3: -ltbb in CMAKE_CXX_FLAGS
            env["CMAKE_LIBRARY_PATH"] = "{TBB_LIB_DIR}"  # v1.4 on: find_library(... tbb)
        options = (
            *VARIANT_OPTIONS[v.build_style],
            CHANNEL,
            f"-DHIP_ROOT_DIR={ctx.rocm.root}",
            f"-DAMDGPU_TARGETS={';'.join(ctx.targets)}",
            f"--python-tag=py{ctx.build.cp_tag.removeprefix('cp').rstrip('t')}",
            "--plat-name=manylinux_2_28_x86_64",
        )
        argv = (ctx.env_python, "-m", "build", "--wheel", "--no-isolation",
                *(f"--config-setting=--build-option={o}" for o in options),
                "--outdir", ctx.wheelhouse, pkg_dir)
        return [
            Step(INSTALL_REQUIREMENTS, "install fbgemm_gpu's build requirements",
                 ctx.uv_pip("-r", f"{pkg_dir}/requirements.txt", "build", "wheel", "setuptools",
                            cwd=pkg_dir)),
            *([tbb] if tbb is not None else []),
            ctx.build_wheel(f"build fbgemm_gpu {v.version} (ROCm variant, release channel) for "
                            f"{';'.join(ctx.targets)}",
                            argv, env=env, unset=("BUILD_FROM_NOVA",), cwd=pkg_dir),
        ]

    def expected_wheel(self, ctx: Context) -> tuple[str, str]:
        """setup.py outside Nova, release channel: ``fbgemm_gpu-rocm``, the tag's version, no
        local label."""
        return ctx.build.package.dist, ctx.build.pkg_version.version

    def expected_modules(self, version: PackageVersion,
                         options: Options | None = None) -> tuple[str, ...]:
        return ("fbgemm_gpu",)

    def required_symbols(self, version: PackageVersion) -> tuple[str, ...]:
        return SYMBOLS
