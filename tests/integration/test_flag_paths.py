"""Paths with spaces, quotes and non-ASCII build like plain ones (issue 29, class 9).

The compiler flags that carry a path (``-ffile-prefix-map``) reach real hipcc (through
HIPCC_COMPILE_FLAGS_APPEND, which its perl hands to /bin/sh) and real gcc (through setuptools,
which splits CFLAGS with ``split_quoted``); the bundled sample is built by ``demo`` in a work
folder and a cache whose names hold a space, a quote and non-ASCII. A path no flag can carry
('=': clang and gcc split OLD=NEW differently) is refused before anything runs.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from toolkit.env.buildenv import RocmPaths, build_env
from toolkit.env.host import HostFacts

# the hostile folders reach the compilers (no ccache hit made relative to CCACHE_BASEDIR)
pytestmark = [pytest.mark.integration, pytest.mark.own_compile_paths]
ROOT = Path(__file__).resolve().parents[2]
NAME = "work a'b \"c\" é"


def _flags(folder: Path) -> dict[str, str]:
    return build_env(rocm=RocmPaths.system("/usr"), targets=["gfx90a"], rocm_version="5.2.3",
                     env_bin="/unused/bin", torch_extensions_dir="/unused", host=HostFacts(),
                     build_dir=str(folder))


@pytest.mark.hipcc
@pytest.mark.skipif(not shutil.which("hipcc"), reason="no hipcc (apt-get install hipcc)")
def test_hipcc_maps_a_hostile_folder_away(tmp_path: Path) -> None:
    folder = tmp_path / NAME
    folder.mkdir()
    (folder / "k.hip").write_text("#include <hip/hip_runtime.h>\n"
                                  "__global__ void k(int* p) { *p = 1; }\n"
                                  "const char* where() { return __FILE__; }\n")
    env = {**os.environ, "HIP_PLATFORM": "amd",
           "HIPCC_COMPILE_FLAGS_APPEND": _flags(folder)["HIPCC_COMPILE_FLAGS_APPEND"]}
    # -o relative: hipcc 5.2 pastes the -o argument in double quotes unescaped (its own TODO)
    res = subprocess.run(["hipcc", "-g", "-c", "--offload-arch=gfx90a", str(folder / "k.hip"),
                          "-o", "k.o"], cwd=folder, env=env, capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    data = (folder / "k.o").read_bytes()
    assert b"/build/k.hip" in data  # __FILE__ and debug info, mapped
    assert str(tmp_path).encode() not in data


def test_gcc_through_setuptools_maps_a_hostile_folder_away(tmp_path: Path) -> None:
    folder = tmp_path / NAME
    folder.mkdir()
    (folder / "m.c").write_text(
        '#include <Python.h>\nconst char* where(void) { return __FILE__; }\n'
        'static struct PyModuleDef d = {PyModuleDef_HEAD_INIT, "m", 0, -1, 0};\n'
        "PyMODINIT_FUNC PyInit_m(void) { return PyModule_Create(&d); }\n")
    (folder / "setup.py").write_text(
        "from setuptools import Extension, setup\n"
        "setup(name='m', ext_modules=[Extension('m', ['m.c'])])\n")
    env = {**os.environ, "CFLAGS": "-g " + _flags(folder)["CFLAGS"]}
    res = subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--inplace"],
                         cwd=folder, env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    (lib,) = folder.glob("m*.so")
    data = lib.read_bytes()
    assert b"/build" in data
    assert str(tmp_path).encode() not in data


def test_a_build_folder_with_an_equals_sign_is_refused_in_one_line(tmp_path: Path) -> None:
    env = {**os.environ, "TOOLKIT_CACHE_DIR": str(tmp_path / "cache"), "CI": "true"}
    res = subprocess.run([sys.executable, "-m", "toolkit", "demo", "--workdir",
                          str(tmp_path / "a=b"), "--no-smoke"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 2, res.stdout + res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "'='" in lines[0] and "Traceback" not in res.stderr
    assert not (tmp_path / "a=b" / "dist").exists()


@pytest.mark.hipcc
@pytest.mark.skipif(not shutil.which("hipcc"), reason="no hipcc (apt-get install hipcc)")
def test_the_sample_builds_in_a_hostile_work_folder_and_cache(tmp_path: Path) -> None:
    work, cache = tmp_path / NAME, tmp_path / f"cache {NAME}"
    env = {**os.environ, "TOOLKIT_CACHE_DIR": str(cache), "CI": "true"}
    res = subprocess.run([sys.executable, "-m", "toolkit", "demo", "--workdir", str(work),
                          "--no-smoke"], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=1200)
    assert res.returncode == 0, (res.stdout + res.stderr)[-6000:]
    (manifest,) = work.glob("artifacts/*/manifest.json")
    m = json.loads(manifest.read_text())
    assert m["outcome"] == "ok"
    (wheel,) = work.glob("dist/*/*.whl")
    with zipfile.ZipFile(wheel) as zf:
        (lib,) = [n for n in zf.namelist() if n.endswith(".so")]
        data = zf.read(lib)
    assert str(tmp_path).encode() not in data
