"""Build hip_sample: the kernel with hipcc for PYTORCH_ROCM_ARCH, or its CPU variant.

Environment: ROCM_PATH (hipcc at $ROCM_PATH/bin/hipcc, else hipcc on PATH),
PYTORCH_ROCM_ARCH (``;``/``,``-separated gfx ids; required for the HIP variant),
HIP_SAMPLE_VARIANT=cpu forces the CPU variant, CMAKE_HIP_COMPILER_LAUNCHER /
CMAKE_CXX_COMPILER_LAUNCHER (e.g. ccache) wrap the compilers.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).parent
PKG = HERE / "src" / "hip_sample"


def find_hipcc() -> str | None:
    if os.environ.get("HIP_SAMPLE_VARIANT") == "cpu":
        return None
    root = os.environ.get("ROCM_PATH")
    if root and (Path(root) / "bin" / "hipcc").exists():
        return str(Path(root) / "bin" / "hipcc")
    return shutil.which("hipcc")


def archs() -> list[str]:
    raw = os.environ.get("PYTORCH_ROCM_ARCH", "")
    out = [a for a in raw.replace(",", ";").split(";") if a.strip()]
    if not out:
        sys.exit("hip_sample: PYTORCH_ROCM_ARCH is empty; set it to the gfx targets to build")
    return out


class BuildExt(build_ext):
    def build_extension(self, ext: Extension) -> None:
        hipcc = find_hipcc()
        launcher = os.environ.get("CMAKE_CXX_COMPILER_LAUNCHER")
        if launcher:  # setuptools >= 72 compiles C++ sources with compiler_so_cxx
            for attr in ("compiler_so", "compiler_so_cxx"):
                if getattr(self.compiler, attr, None):
                    setattr(self.compiler, attr, [launcher, *getattr(self.compiler, attr)])
        if hipcc:
            targets = archs()
            obj = Path(self.build_temp) / "kernel.o"
            obj.parent.mkdir(parents=True, exist_ok=True)
            cmd = [hipcc, "-fPIC", "-O2", "-c", str(PKG / "kernel.hip"), "-o", str(obj),
                   *(f"--offload-arch={a}" for a in targets)]
            hip_launcher = os.environ.get("CMAKE_HIP_COMPILER_LAUNCHER")
            if hip_launcher:
                cmd.insert(0, hip_launcher)
            env = {**os.environ, "HIP_PLATFORM": "amd"}
            print("hip_sample: " + " ".join(cmd), flush=True)
            subprocess.run(cmd, check=True, env=env)
            ext.extra_objects = [str(obj)]
            ext.libraries = ["amdhip64"]
            root = Path(hipcc).resolve().parent.parent
            ext.library_dirs = [str(root / "lib")]
            ext.define_macros = [("HIP_SAMPLE_VARIANT", '"hip"'),
                                 ("HIP_SAMPLE_ARCHS", f'"{";".join(targets)}"')]
        else:
            print("hip_sample: no HIP compiler found: building the CPU variant", flush=True)
            ext.sources = [*ext.sources, str(PKG / "kernel_cpu.cpp")]
            ext.define_macros = [("HIP_SAMPLE_VARIANT", '"cpu"')]
        super().build_extension(ext)


setup(
    ext_modules=[Extension("hip_sample._native", sources=["src/hip_sample/module.cpp"],
                           include_dirs=[str(PKG)], extra_compile_args=["-O2"], language="c++")],
    cmdclass={"build_ext": BuildExt},
)
