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

from toolkit.core.errors import UsageError
from toolkit.core.gfx import rocm_arch_value
from toolkit.core.text import escape, unsafe
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


# A flag word is read back the same by every tool that splits these variables: setuptools
# (CFLAGS/CXXFLAGS through distutils' ``split_quoted``), hipcc (HIPCC_COMPILE_FLAGS_APPEND
# pasted into one command line that perl's ``system`` hands to /bin/sh) and CMake (the flags
# pasted into the command lines make and ninja run through /bin/sh). Each character is
# written on its own: safe ones (and printable non-ASCII) bare, other printable ASCII after a
# backslash, the rest (controls, non-ASCII spaces, "#") in single quotes, since sh drops a
# backslash-newline and make a backslash before "#". So a plain word stays as it is, and a
# path inside a flag is written the same whatever surrounds it (the manifest's identity
# replaces it by a token).
_BARE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_@%+=:,./-")
# What no quoting carries: clang reads -ffile-prefix-map=OLD=NEW up to the first "=" (gcc
# up to the last), and the makefiles and ninja files CMake writes hold one command a line.
_FLAG_PATH_PROBLEMS = {"=": "clang reads -ffile-prefix-map=OLD=NEW up to the first '='"}


def _char(c: str) -> str:
    if c in _BARE or (c > "\x7f" and c.isprintable() and not c.isspace()):
        return c
    if c.isprintable() and c < "\x7f" and c != "#":  # make reads "\\#" as "#": a comment
        return "\\" + c
    return f"'{c}'"


def quote_flag(word: str) -> str:
    """``word`` written so that POSIX sh and distutils' ``split_quoted`` both read it back as
    the one word ``word`` (unchanged when it holds only safe characters)."""
    return "".join(_char(c) for c in word) or "''"


def flag_path_problem(path: str) -> str | None:
    """Why ``path`` cannot be carried in a ``-ffile-prefix-map`` flag, or None: it holds
    ``=`` or a control character."""
    for char, why in _FLAG_PATH_PROBLEMS.items():
        if char in path:
            return f"holds {char!r}: {why}"
    if unsafe(path):
        char = next(c for c in path if unsafe(c))
        return (f"holds the control character {escape(char)}: CMake's makefiles and ninja "
                "files hold one command a line")
    return None


def prefix_map(old: str, new: str) -> str:
    """``-ffile-prefix-map=OLD=NEW`` quoted for the tools that split compiler flags."""
    return quote_flag(f"-ffile-prefix-map={old}={new}")


def refuse_unmappable(path: str, what: str) -> None:
    """A one-line ``UsageError`` (exit 2) when ``path`` cannot be remapped in compiler flags,
    before anything is built."""
    problem = flag_path_problem(path)
    if problem:
        raise UsageError(f"{what} {escape(path)} {problem}, so its path cannot be kept out of "
                         "the compiled objects; valid: a path without '=' or control "
                         "characters")


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
        refuse_unmappable(build_dir, "the build folder")
        remap = prefix_map(build_dir, "/build")
        for var in ("CFLAGS", "CXXFLAGS", "HIPCC_COMPILE_FLAGS_APPEND"):
            env[var] = remap
    launcher = host.sccache or host.ccache
    if launcher:
        for lang in ("C", "CXX", "HIP"):
            env[f"CMAKE_{lang}_COMPILER_LAUNCHER"] = launcher
    return env

