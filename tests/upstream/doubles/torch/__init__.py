"""TEST DOUBLE torch: a ROCm build's version attributes, from $UPSTREAM_TORCH_VERSION and
$UPSTREAM_TORCH_HIP; no GPU."""

import os
import types

__version__ = os.environ.get("UPSTREAM_TORCH_VERSION", "2.8.0+rocm7.0")


class version:
    hip = os.environ.get("UPSTREAM_TORCH_HIP", "7.0.51831")
    cuda = None
    git_version = "0" * 40


class _Nccl:
    @staticmethod
    def version():
        return (2, 18, 3)


class cuda:
    nccl = _Nccl

    @staticmethod
    def is_available():
        return False

    @staticmethod
    def device_count():
        return 0

    @staticmethod
    def is_bf16_supported():
        return False

    @staticmethod
    def get_device_capability(*_a):
        return (9, 4)


class _Cudnn:
    @staticmethod
    def is_available():
        return False

    @staticmethod
    def version():
        return None


backends = types.SimpleNamespace(cudnn=_Cudnn)
_C = types.SimpleNamespace(_GLIBCXX_USE_CXX11_ABI=True, _cuda_getArchFlags=lambda: "")

from torch import utils  # noqa: E402,F401
