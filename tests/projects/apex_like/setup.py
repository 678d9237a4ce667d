"""An apex-shaped project: same build flags and environment contract, tiny real extension.

style.txt: "ext-flags" (apex 1.4-1.7: --cpp_ext/--cuda_ext build options, top-level modules)
or "jit-prebuild" (apex 1.8: APEX_BUILD_CPP_OPS/APEX_BUILD_CUDA_OPS, modules under apex.).
modules.txt: the extension module names to produce.
"""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).parent
STYLE = (HERE / "style.txt").read_text().strip()
MODULES = (HERE / "modules.txt").read_text().split()
VERSION = (HERE / "version.txt").read_text().strip()

for flag in ("--fast_layer_norm", "--fmha", "--fast_bottleneck", "--fused_conv_bias_relu"):
    if flag in sys.argv:
        sys.exit(f"apex_like: {flag} builds CUDA-only code and fails on ROCm")
cpp_ext, cuda_ext = "--cpp_ext" in sys.argv, "--cuda_ext" in sys.argv
sys.argv = [a for a in sys.argv if a not in ("--cpp_ext", "--cuda_ext")]

import torch  # noqa: E402  (apex evaluates torch.version.hip at import)

hip = getattr(torch.version, "hip", None)
if not hip:
    sys.exit("apex_like: torch.version.hip is None: a ROCm torch is required")

if STYLE == "jit-prebuild":
    build_ops = bool(os.environ.get("APEX_BUILD_CPP_OPS")) and bool(os.environ.get("APEX_BUILD_CUDA_OPS"))
else:
    build_ops = cpp_ext and cuda_ext
# Like apex: without the flags (e.g. the front-end's metadata pass) nothing native is built.

hipcc = os.path.join(os.environ.get("ROCM_PATH", "/opt/rocm"), "bin", "hipcc")
out = "" if not build_ops else subprocess.run([hipcc, "--version"], capture_output=True, text=True,
                     env={**os.environ, "HIP_PLATFORM": "amd"}).stdout
m = re.search(r"HIP version: ([0-9]+)\.([0-9]+)", out)
found = f"{m.group(1)}.{m.group(2)}" if m else "?"
if build_ops and found != ".".join(hip.split(".")[:2]):
    sys.exit(f"apex_like: Cuda extensions are being compiled with a version of Cuda that does not "
             f"match the version used to compile Pytorch binaries. Pytorch binaries were compiled "
             f"with Cuda None (hipcc {found}, torch HIP {hip})")

ARCHS = [a for a in os.environ.get("PYTORCH_ROCM_ARCH", "gfx906").replace(",", ";").split(";") if a]
version = VERSION
if os.environ.get("BUILD_VERSION") and (STYLE == "jit-prebuild" or VERSION >= "1.7"):
    version = os.environ["BUILD_VERSION"]
elif os.environ.get("DESIRED_CUDA") and os.environ.get("APEX_COMMIT"):
    version = f"{VERSION}+{os.environ['DESIRED_CUDA']}.git{os.environ['APEX_COMMIT'][:8]}"

PREFIX = "apex." if STYLE == "jit-prebuild" else ""


class BuildExt(build_ext):
    """Compile one host object with every PyInit_<name> and the HIP kernel, then copy it
    under each module name (one compile, many importable modules)."""

    def build_extension(self, ext):
        tmp = Path(self.build_temp)
        tmp.mkdir(parents=True, exist_ok=True)
        src = tmp / "ops.cpp"
        src.write_text((HERE / "ops.cpp.in").read_text() + "".join(
            f"PyMODINIT_FUNC PyInit_{n}(void) {{ return make_module(\"{n}\"); }}\n"
            for n in MODULES) + "}\n")
        kernel = tmp / "kernel.o"
        subprocess.run([hipcc, "-fPIC", "-O2", "-c", str(HERE / "kernel.hip"), "-o", str(kernel),
                        *(f"--offload-arch={a}" for a in ARCHS)], check=True,
                       env={**os.environ, "HIP_PLATFORM": "amd"})
        ext.sources = [str(src)]
        ext.extra_objects = [str(kernel)]
        ext.libraries = ["amdhip64"]
        ext.library_dirs = [os.path.join(os.environ.get("ROCM_PATH", "/opt/rocm"), "lib")]
        super().build_extension(ext)
        built = Path(self.get_ext_fullpath(ext.name))
        for name in MODULES:
            target = Path(self.get_ext_fullpath(PREFIX + name))
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(built, target)
        built.unlink()


info = HERE / "apex" / "git_version_info.py"
info.write_text("installed_ops = %r\n" % {n: True for n in MODULES})
setup(
    name="apex",
    version=version,
    packages=["apex"],
    ext_modules=[Extension(PREFIX + "_apex_like_all", sources=[])] if build_ops else [],
    cmdclass={"build_ext": BuildExt},
)
