"""A real ``py_limited_api`` project built by the toolkit (``demo --source --cpu``): one
``cp39-abi3`` wheel that every CPython from 3.9 imports, checked by the abi3 rule, and the
failing path: a module using a symbol the stable ABI gained in 3.10 while tagged cp39 fails
the check (exit 1), and nothing is published."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

SETUP = '''from setuptools import Extension, setup

setup(
    name="abi3demo",
    version="0.1.0",
    packages=["abi3demo"],
    package_dir={"": "src"},
    ext_modules=[Extension("abi3demo._C", ["src/abi3demo/_C.c"], py_limited_api=True,
                           define_macros=[("Py_LIMITED_API", "%s")])],
    options={"bdist_wheel": {"py_limited_api": "cp39"}},
)
'''
PYPROJECT = '''[build-system]
requires = ["setuptools>=68", "wheel"]
build-backend = "setuptools.build_meta"
'''
MODULE = '''#include <Python.h>
static PyObject *length(PyObject *self, PyObject *arg) { %s }
static PyMethodDef methods[] = {{"length", length, METH_O, NULL}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef def = {PyModuleDef_HEAD_INIT, "_C", NULL, -1, methods};
PyMODINIT_FUNC PyInit__C(void) { return PyModule_Create(&def); }
'''
WITHIN = "return PyLong_FromSsize_t(PyObject_Length(arg));"
# PyUnicode_AsUTF8AndSize: in the limited API from 3.10 (CPython's C API reference)
NEWER = ("Py_ssize_t n; const char *s = PyUnicode_AsUTF8AndSize(arg, &n); "
         "return s ? PyLong_FromSsize_t(n) : NULL;")


def _project(root: Path, body: str, limited: str) -> Path:
    (root / "src" / "abi3demo").mkdir(parents=True)
    (root / "setup.py").write_text(SETUP % limited)
    (root / "pyproject.toml").write_text(PYPROJECT)
    (root / "src" / "abi3demo" / "__init__.py").write_text("")
    (root / "src" / "abi3demo" / "_C.c").write_text(MODULE % body)
    git = ["git", "-c", "user.email=t@example.invalid", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], cwd=root, check=True)
    subprocess.run([*git, "add", "-A"], cwd=root, check=True)
    subprocess.run([*git, "commit", "-qm", "abi3demo"], cwd=root, check=True)
    return root


def _demo(tmp: Path, source: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TOOLKIT_CACHE_DIR": str(tmp / "cache"), "CI": "true"}
    return subprocess.run([sys.executable, "-m", "toolkit", "demo", "--source", str(source),
                           "--cpu", "--no-smoke", "--workdir", str(tmp / "work")],
                          env=env, capture_output=True, text=True, timeout=600, check=False)


def _pythons() -> list[str]:
    """CPython interpreters here, one per minor from 3.9 on (as sessions find them: PATH,
    pyenv, /opt/python, uv)."""
    from toolkit.core.errors import ToolkitError
    from toolkit.env.interpreters import find

    found = []
    for minor in range(9, 15):
        try:
            found.append(str(find(f"3.{minor}").path))
        except ToolkitError:
            continue
    return found


def test_one_abi3_wheel_is_built_checked_and_imported_by_every_python(tmp_path: Path) -> None:
    res = _demo(tmp_path, _project(tmp_path / "good", WITHIN, "0x03090000"))
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-2000:]
    (whl,) = (tmp_path / "work" / "dist").glob("*/*.whl")
    assert whl.name.endswith("-cp39-abi3-linux_x86_64.whl"), whl.name
    audit = subprocess.run([str(Path(sys.executable).with_name("abi3audit")), "--report",
                            str(whl)], capture_output=True, text=True, timeout=120, check=False)
    (entry,) = json.loads(audit.stdout)["specs"][str(whl)]["wheel"]
    assert entry["result"]["is_abi3"] and entry["result"]["is_abi3_baseline_compatible"]
    pythons = _pythons()
    if len(pythons) < 2:
        pytest.skip(f"one wheel for many Pythons needs two CPythons >= 3.9 here; found {pythons}")
    unpacked = tmp_path / "unpacked"
    with zipfile.ZipFile(whl) as zf:
        zf.extractall(unpacked)
    for exe in pythons:  # the same file, imported by each
        out = subprocess.run([exe, "-c", "import sys; sys.path.insert(0, sys.argv[1]); "
                              "import abi3demo._C as m; print(m.length('abcd'))", str(unpacked)],
                             capture_output=True, text=True, timeout=60, check=False)
        assert (out.returncode, out.stdout.strip()) == (0, "4"), (exe, out.stderr)


def test_a_symbol_newer_than_the_tag_fails_the_check_and_publishes_nothing(
        tmp_path: Path) -> None:
    res = _demo(tmp_path, _project(tmp_path / "bad", NEWER, "0x030A0000"))
    assert res.returncode == 1, res.stdout[-3000:] + res.stderr[-2000:]  # README: a check failed
    log = "".join(p.read_text() for p in (tmp_path / "work" / "artifacts").glob("*/build.log"))
    assert "PyUnicode_AsUTF8AndSize (3.10)" in res.stdout + log
    assert "tag it cp310-abi3" in res.stdout + log
    assert not list((tmp_path / "work" / "dist").glob("*/*.whl"))  # checked before publishing
