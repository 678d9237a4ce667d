"""TEST DOUBLE helper: append one JSON event to $UPSTREAM_RECORD; stop setup() there."""

import json
import os
import sys


class Recorded(BaseException):
    """Raised by a recording setup(): the run stops before anything is built."""


def record(kind, **data):
    with open(os.environ["UPSTREAM_RECORD"], "a", encoding="utf-8") as fh:
        fh.write(json.dumps({"kind": kind, **data}, default=str) + "\n")


def record_setup(kwargs):
    exts = [getattr(e, "name", str(e)) for e in kwargs.get("ext_modules") or []]
    record("setup", name=kwargs.get("name"), version=str(kwargs.get("version")),
           ext_modules=exts, cmake_args=list(kwargs.get("cmake_args") or []),
           argv=list(sys.argv), env={k: os.environ.get(k) for k in (
               "PYTORCH_ROCM_ARCH", "BUILD_VERSION", "DESIRED_CUDA", "APEX_COMMIT",
               "BUILD_ROCM_VERSION", "APEX_BUILD_CPP_OPS", "APEX_BUILD_CUDA_OPS")})
    raise Recorded()
