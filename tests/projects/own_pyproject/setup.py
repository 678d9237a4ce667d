# No metadata here (it is in pyproject.toml): the HIP object is compiled by hipcc, one
# --offload-arch per PYTORCH_ROCM_ARCH target, then linked into a C extension by gcc.
import os
import shutil
import subprocess

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


class Build(build_ext):
    def build_extension(self, ext):
        hipcc = shutil.which("hipcc", path=os.path.join(os.environ.get("ROCM_PATH", "/opt/rocm"),
                                                        "bin")) or shutil.which("hipcc")
        archs = [a for a in os.environ.get("PYTORCH_ROCM_ARCH", "").replace(",", ";").split(";")
                 if a.strip()]
        if not hipcc or not archs:
            raise SystemExit("pyprojext: needs hipcc and PYTORCH_ROCM_ARCH")
        obj = os.path.join(self.build_temp, "gpu.o")
        os.makedirs(self.build_temp, exist_ok=True)
        subprocess.run([hipcc, "-fPIC", "-O2", "-c", "src/pyprojext/gpu.hip", "-o", obj,
                        *(f"--offload-arch={a}" for a in archs)], check=True,
                       env={**os.environ, "HIP_PLATFORM": "amd"})
        ext.extra_objects = [obj]
        ext.libraries = ["amdhip64"]
        ext.define_macros = [("PYPROJEXT_ARCH_COUNT", str(len(archs)))]
        super().build_extension(ext)


setup(ext_modules=[Extension("pyprojext._gpu", sources=["src/pyprojext/module.c"])],
      cmdclass={"build_ext": Build})
