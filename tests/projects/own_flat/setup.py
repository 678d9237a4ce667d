# Metadata in setup() only (no pyproject.toml, no setup.cfg); flat layout; the whole
# extension is compiled and linked by hipcc, once per PYTORCH_ROCM_ARCH target.
import os
import shlex
import shutil

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


class HipccBuild(build_ext):
    def build_extensions(self):
        rocm_bin = os.path.join(os.environ.get("ROCM_PATH", "/opt/rocm"), "bin")
        hipcc = shutil.which("hipcc", path=rocm_bin) or shutil.which("hipcc")
        archs = [a.strip() for a in os.environ.get("PYTORCH_ROCM_ARCH", "").replace(",", ";")
                 .split(";") if a.strip()]
        if not hipcc or not archs:
            raise SystemExit("flatext: needs hipcc and PYTORCH_ROCM_ARCH")
        offload = [f"--offload-arch={a}" for a in archs]
        flags = shlex.split(os.environ.get("CFLAGS", ""))  # the toolkit's prefix maps
        compile_cmd = [hipcc, "-x", "hip", "-fPIC", "-O2", "-DNDEBUG", *flags, *offload]
        link_cmd = [hipcc, "-shared", *offload]
        for key in ("compiler_so", "compiler_so_cxx"):
            self.compiler.set_executable(key, compile_cmd)
        for key in ("linker_so", "linker_so_cxx"):
            self.compiler.set_executable(key, link_cmd)
        self.compiler.set_executable("compiler_cxx", [hipcc])  # C++ links swap in this one
        for ext in self.extensions:
            ext.define_macros.append(("FLATEXT_ARCHS", f'"{";".join(archs)}"'))
        os.environ["HIP_PLATFORM"] = "amd"
        super().build_extensions()


setup(
    name="flat-ext",
    version="0.2.0",
    description="flat layout, metadata in setup() only",
    packages=["flatext"],
    py_modules=["flatext_util"],
    ext_modules=[Extension("flatext._kern", sources=["kern.cpp"], language="c++")],
    cmdclass={"build_ext": HipccBuild},
)
