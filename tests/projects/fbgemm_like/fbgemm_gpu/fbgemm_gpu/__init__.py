"""fbgemm_gpu-shaped fixture package (ROCm variant)."""

import ctypes
import os

__variant__ = "rocm"
_lib = ctypes.CDLL(os.path.join(os.path.dirname(__file__), "fbgemm_gpu_py.so"))


def cumsum_last(values: list) -> int:
    arr = (ctypes.c_int64 * len(values))(*values)
    _lib.fbgemm_like_cumsum_last.restype = ctypes.c_int64
    return int(_lib.fbgemm_like_cumsum_last(arr, len(values)))
