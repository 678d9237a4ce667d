"""The variables a recipe's build runs with (toolkit/env/buildenv.py's module text: what TheRock
sets for extension builds, plus MAX_JOBS, compiler caches, TORCH_EXTENSIONS_DIR,
BUILD_ROCM_VERSION and SOURCE_DATE_EPOCH). Expectations are hand-written; a flag is read back
by POSIX sh itself (a real ``/bin/sh``)."""

from __future__ import annotations

import subprocess

import pytest

from toolkit.core.errors import UsageError
from toolkit.env.buildenv import GIB_PER_JOB, RocmPaths, build_env, max_jobs, prefix_map, refuse_unmappable
from toolkit.env.host import HostFacts


def test_a_system_install_s_paths() -> None:
    assert RocmPaths.system("/opt/rocm-6.4.1") == RocmPaths(
        "/opt/rocm-6.4.1", "/opt/rocm-6.4.1/bin", "/opt/rocm-6.4.1/lib/cmake",
        "/opt/rocm-6.4.1/amdgcn/bitcode")


def test_a_pip_sdk_s_paths_are_placeholders_filled_after_install() -> None:
    assert RocmPaths.learned() == RocmPaths("{ROCM_ROOT}", "{ROCM_BIN}", "{ROCM_CMAKE}",
                                            "{ROCM_ROOT}/lib/llvm/amdgcn/bitcode")


def test_every_variable_of_a_system_build_without_caches() -> None:
    env = build_env(rocm=RocmPaths.system("/opt/rocm"), targets=["gfx942", "gfx90a:xnack+"],
                    rocm_version="6.4.1", env_bin="/envs/py312/bin", torch_extensions_dir="/w/ext",
                    host=HostFacts(cores=8, mem_available_gib=13.0))
    assert env == {
        "ROCM_PATH": "/opt/rocm", "ROCM_HOME": "/opt/rocm", "HIP_PATH": "/opt/rocm",
        "CMAKE_PREFIX_PATH": "/opt/rocm/lib/cmake",
        "PATH": "/opt/rocm/bin:/envs/py312/bin:{PATH}",
        "HIP_DEVICE_LIB_PATH": "/opt/rocm/amdgcn/bitcode",
        "PYTORCH_ROCM_ARCH": "gfx942;gfx90a:xnack+",
        "MAX_JOBS": "4",  # 13 GiB / 3 GiB a job, fewer than 8 cores
        "TORCH_EXTENSIONS_DIR": "/w/ext",
        "BUILD_ROCM_VERSION": "6.4",
        "SOURCE_DATE_EPOCH": "{SOURCE_DATE_EPOCH}",
    }


@pytest.mark.parametrize(("ccache", "sccache", "launcher"), [
    ("/usr/bin/ccache", None, "/usr/bin/ccache"), (None, "/bin/sccache", "/bin/sccache"),
    ("/usr/bin/ccache", "/bin/sccache", "/bin/sccache")])
def test_a_compiler_cache_launches_c_cxx_and_hip(ccache: str | None, sccache: str | None,
                                                 launcher: str) -> None:
    env = build_env(rocm=RocmPaths.learned(), targets=["gfx942"], rocm_version="7.0",
                    env_bin="/e/bin", torch_extensions_dir="/t",
                    host=HostFacts(ccache=ccache, sccache=sccache), build_dir="/w/build/x")
    assert {k: v for k, v in env.items() if k.endswith("_LAUNCHER")} == {
        "CMAKE_C_COMPILER_LAUNCHER": launcher, "CMAKE_CXX_COMPILER_LAUNCHER": launcher,
        "CMAKE_HIP_COMPILER_LAUNCHER": launcher}
    assert env["BUILD_ROCM_VERSION"] == "7.0"
    for var in ("CFLAGS", "CXXFLAGS", "HIPCC_COMPILE_FLAGS_APPEND"):
        assert env[var] == "-ffile-prefix-map=/w/build/x=/build"


def test_no_build_folder_sets_no_compiler_flags() -> None:
    env = build_env(rocm=RocmPaths.learned(), targets=["gfx942"], rocm_version="7.0.2",
                    env_bin="/e/bin", torch_extensions_dir="/t", host=HostFacts(), build_dir="")
    assert not {"CFLAGS", "CXXFLAGS", "HIPCC_COMPILE_FLAGS_APPEND"} & set(env)


def test_an_empty_target_list_is_refused() -> None:
    with pytest.raises(UsageError) as caught:
        build_env(rocm=RocmPaths.learned(), targets=[], rocm_version="7.0", env_bin="/e",
                  torch_extensions_dir="/t", host=HostFacts())
    assert str(caught.value) == "PYTORCH_ROCM_ARCH would be empty; give at least one gfx target"


@pytest.mark.parametrize(("cores", "gib", "jobs"), [(8, 13.0, 4), (2, 64.0, 2), (16, 2.9, 1), (4, 12.0, 4),
                                                    (4, 11.99, 3), (1, 0.0, 1)])
def test_max_jobs_is_bounded_by_cores_and_3_gib_a_job(cores: int, gib: float, jobs: int) -> None:
    assert GIB_PER_JOB == 3.0
    assert max_jobs(HostFacts(cores=cores, mem_available_gib=gib)) == jobs


def test_a_prefix_map_flag_is_one_word_for_sh() -> None:
    flag = prefix_map("/w/my build/#1", "/build")
    said = subprocess.run(["/bin/sh", "-c", f'for a in {flag}; do printf "[%s]" "$a"; done'],
                          capture_output=True, text=True, check=True).stdout
    assert said == "[-ffile-prefix-map=/w/my build/#1=/build]"


def test_an_unmappable_build_folder_is_named_with_why() -> None:
    with pytest.raises(UsageError) as caught:
        refuse_unmappable("/w/a=b", "the build folder")
    assert str(caught.value) == (
        "the build folder /w/a=b holds '=': clang reads -ffile-prefix-map=OLD=NEW up to the first '=', "
        "so its path cannot be kept out of the compiled objects; valid: a path without '=' or control "
        "characters")
    with pytest.raises(UsageError) as caught:
        refuse_unmappable("/w/a\nb", "--workdir")
    assert str(caught.value) == (
        "--workdir /w/a\\nb holds the control character \\n: CMake's makefiles and ninja files hold one "
        "command a line, so its path cannot be kept out of the compiled objects; valid: a path without "
        "'=' or control characters")
