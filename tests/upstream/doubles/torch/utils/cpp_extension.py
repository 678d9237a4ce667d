"""TEST DOUBLE torch.utils.cpp_extension: extensions are recorded setuptools Extensions;
ROCM_HOME is $UPSTREAM_ROCM_HOME (a folder whose bin/hipcc prints a HIP version)."""

import os

from setuptools import Extension
from setuptools.command.build_ext import build_ext

CUDA_HOME = None
ROCM_HOME = os.environ.get("UPSTREAM_ROCM_HOME")
IS_HIP_EXTENSION = True
TORCH_LIB_PATH = os.path.join(os.path.dirname(os.path.dirname(__file__)), "lib")


class BuildExtension(build_ext):
    @classmethod
    def with_options(cls, **_kw):
        return cls


def CppExtension(name, sources, *args, **kwargs):
    return Extension(name, list(sources))


def CUDAExtension(name, sources, *args, **kwargs):
    return Extension(name, list(sources))


class _Loaded:
    @staticmethod
    def get_nccl_version():
        return tuple(int(x) for x in os.environ.get("UPSTREAM_RCCL", "2.18").split("."))


def load(name, sources, *args, **kwargs):
    from _record import record

    record("jit-load", name=name)
    return _Loaded()


def include_paths(*_a, **_kw):
    return []


def library_paths(*_a, **_kw):
    return []
