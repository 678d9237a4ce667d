"""The build environment a recipe runs in (pure: values from the plan's inputs).

Mirrors what TheRock sets for extension builds: ROCM_HOME/ROCM_PATH = SDK root,
CMAKE_PREFIX_PATH, PATH with the SDK's bin first, HIP_DEVICE_LIB_PATH, PYTORCH_ROCM_ARCH
(``;``-joined, never empty), plus MAX_JOBS sized for HIP compiles, compiler caches, a
per-build TORCH_EXTENSIONS_DIR and BUILD_ROCM_VERSION.

Values may hold placeholders filled at execution time, after the SDK is installed:
``{ROCM_ROOT}``, ``{ROCM_BIN}``, ``{ROCM_CMAKE}`` (from ``python -m rocm_sdk path``) and
``{PATH}`` (the inherited PATH).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from toolkit.core.gfx import rocm_arch_value
from toolkit.env.host import HostFacts

# HIP device compiles of torch extensions peak at several GiB per job.
GIB_PER_JOB = 3.0


@dataclass(frozen=True)
class RocmPaths:
    root: str
    bin: str
    cmake: str
    device_lib: str

    @classmethod
    def learned(cls) -> RocmPaths:
        """Paths learned from ``python -m rocm_sdk path`` once the pip SDK is installed."""
        return cls("{ROCM_ROOT}", "{ROCM_BIN}", "{ROCM_CMAKE}",
                   "{ROCM_ROOT}/lib/llvm/amdgcn/bitcode")

    @classmethod
    def system(cls, root: str) -> RocmPaths:
        return cls(root, f"{root}/bin", f"{root}/lib/cmake", f"{root}/amdgcn/bitcode")


def max_jobs(host: HostFacts) -> int:
    by_memory = int(host.mem_available_gib // GIB_PER_JOB)
    return max(1, min(host.cores, by_memory))


def build_env(
    *,
    rocm: RocmPaths,
    targets: Sequence[str],
    rocm_version: str,
    env_bin: str,
    torch_extensions_dir: str,
    host: HostFacts,
    build_dir: str | None = None,
) -> dict[str, str]:
    env = {
        "ROCM_PATH": rocm.root,
        "ROCM_HOME": rocm.root,
        "HIP_PATH": rocm.root,
        "CMAKE_PREFIX_PATH": rocm.cmake,
        "PATH": f"{rocm.bin}:{env_bin}:{{PATH}}",
        "HIP_DEVICE_LIB_PATH": rocm.device_lib,
        "PYTORCH_ROCM_ARCH": rocm_arch_value(targets),
        "MAX_JOBS": str(max_jobs(host)),
        "TORCH_EXTENSIONS_DIR": torch_extensions_dir,
        "BUILD_ROCM_VERSION": ".".join(rocm_version.split(".")[:2]),
        # reproducible builds: timestamps (setuptools/wheel, compilers) from the commit
        "SOURCE_DATE_EPOCH": "{SOURCE_DATE_EPOCH}",
    }
    if build_dir:
        # reproducible builds: the build folder's path never reaches the objects
        # (debug info, __FILE__), so another work folder gives the same bytes
        remap = f"-ffile-prefix-map={build_dir}=/build"
        for var in ("CFLAGS", "CXXFLAGS", "HIPCC_COMPILE_FLAGS_APPEND"):
            env[var] = remap
    launcher = host.sccache or host.ccache
    if launcher:
        for lang in ("C", "CXX", "HIP"):
            env[f"CMAKE_{lang}_COMPILER_LAUNCHER"] = launcher
    return env

