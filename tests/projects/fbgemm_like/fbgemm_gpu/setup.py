"""An fbgemm_gpu-shaped project (ROCm variant): same options and environment contract.

style.txt: "package-variant" (up to v1.2: --package_variant=rocm) or "build-variant"
(v1.3 on: --build-target=default --build-variant=rocm, BUILD_ROCM_VERSION required, and libtbb
found through LIBRARY_PATH / CMAKE_LIBRARY_PATH unless BUILD_FROM_NOVA is set).
--package_channel defaults to "nightly": the package is then fbgemm_gpu_nightly-rocm and its
version the date; "release" gives fbgemm_gpu-rocm at version.txt's version.
Builds libfbgemm_like.so (the C++ ops) and fbgemm_gpu_py.so (a HIP kernel plus code that
needs symbols from the first, found through RUNPATH $ORIGIN), like fbgemm_gpu does.
"""

import argparse
import os
import subprocess
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).parent
STYLE = (HERE / "style.txt").read_text().strip()
VERSION = (HERE / "version.txt").read_text().strip()
EXTRA_CXX = (HERE / "extra_cxx.txt").read_text().split() if (HERE / "extra_cxx.txt").exists() else []

parser = argparse.ArgumentParser(add_help=False)
parser.add_argument("--package_variant")
parser.add_argument("--build-target")
parser.add_argument("--build-variant")
parser.add_argument("--package_channel", default="nightly", choices=["nightly", "test", "release"])
ours, rest = parser.parse_known_args(sys.argv[1:])
cmake_defs = {a[2:].split("=", 1)[0]: a.split("=", 1)[1] for a in rest if a.startswith("-D")}
rest = [a for a in rest if not a.startswith("-D")]
if "bdist_wheel" not in rest:  # the front-end also runs egg_info with the same options
    rest = [a for a in rest if not a.startswith(("--python-tag", "--plat-name"))]
sys.argv = [sys.argv[0], *rest]

BUILDING = "bdist_wheel" in sys.argv  # the front-end's metadata pass gets no build options
if "BUILD_FROM_NOVA" in os.environ:
    sys.exit("fbgemm_like: BUILD_FROM_NOVA is set: targets would shrink to gfx942")
if not BUILDING:
    pass
elif STYLE == "package-variant":
    if ours.package_variant != "rocm":
        sys.exit("fbgemm_like: expected --package_variant=rocm")
else:
    if (ours.build_target, ours.build_variant) != ("default", "rocm"):
        sys.exit("fbgemm_like: expected --build-target=default --build-variant=rocm")
    if not os.environ.get("BUILD_ROCM_VERSION"):
        sys.exit("fbgemm_like: BUILD_ROCM_VERSION must be set for ROCm builds")
targets = [t for t in cmake_defs.get("AMDGPU_TARGETS", "").split(";") if t]
if BUILDING and not targets:
    sys.exit("fbgemm_like: no AMDGPU_TARGETS: CMake would run rocm_agent_enumerator (no GPU here)")
hip_root = cmake_defs.get("HIP_ROOT_DIR", "")
if BUILDING and not hip_root:
    sys.exit("fbgemm_like: -DHIP_ROOT_DIR is required")
if BUILDING and STYLE == "build-variant":
    dirs = [d for var in ("CMAKE_LIBRARY_PATH", "LIBRARY_PATH")
            for d in os.environ.get(var, "").split(":") if d]
    if not any((Path(d) / "libtbb.so").exists() for d in dirs):
        sys.exit(f"fbgemm_like: tbb not found (looked in {dirs})")
NAME = "fbgemm_gpu" + ("" if ours.package_channel == "release" else f"_{ours.package_channel}") + "-rocm"
if ours.package_channel == "nightly":
    import datetime

    today = datetime.date.today()
    VERSION = f"{today.year}.{today.month}.{today.day}"

import torch  # noqa: E402,F401  (fbgemm_gpu builds against an installed torch)


class BuildPy(build_py):
    def run(self):
        super().run()
        out = Path(self.build_lib) / "fbgemm_gpu"
        tmp = Path(self.build_lib).parent / "fbgemm_like_tmp"
        tmp.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "HIP_PLATFORM": "amd"}
        hipcc = os.path.join(hip_root, "bin", "hipcc")
        ops = out / "libfbgemm_like.so"
        subprocess.run(["g++", "-shared", "-fPIC", "-O2", *EXTRA_CXX, str(HERE / "src" / "ops.cpp"),
                        "-o", str(ops)], check=True)
        kernel = tmp / "kernel.o"
        subprocess.run([hipcc, "-fPIC", "-O2", "-c", str(HERE / "src" / "kernel.hip"), "-o",
                        str(kernel), *(f"--offload-arch={t}" for t in targets)], check=True, env=env)
        subprocess.run(["g++", "-shared", "-fPIC", "-O2", str(HERE / "src" / "py.cpp"), str(kernel),
                        "-o", str(out / "fbgemm_gpu_py.so"), f"-L{out}", "-lfbgemm_like",
                        f"-L{hip_root}/lib", "-lamdhip64", "-Wl,-rpath,$ORIGIN"], check=True)


from setuptools.dist import Distribution  # noqa: E402


class Dist(Distribution):
    """Native code inside: the wheel gets a platform tag."""

    def has_ext_modules(self):
        return True

setup(
    name=NAME,
    version=VERSION,
    packages=["fbgemm_gpu"],
    cmdclass={"build_py": BuildPy},
    distclass=Dist,
)
