"""The check's abi3 rule on real extension modules (gcc against this Python's headers), judged
beside pypa's abi3audit, the independent oracle: the same wheel, the same verdict, symbol for
symbol. The expectations are stated from CPython's documentation: ``PyUnicode_AsUTF8AndSize``
joined the limited API in 3.10 ("Changed in version 3.10: This function is a part of the
limited API"); ``PyCode_NewEmpty`` is not in the stable ABI (the C API reference does not mark
it "Part of the Stable ABI")."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.fixtures.native import compile_shared
from tests.fixtures.wheels import make_wheel
from toolkit.inspect.checks import check_paths

ABI3AUDIT = Path(sys.executable).with_name("abi3audit")

_METHODS = """
static PyMethodDef methods[] = {{"f", f, METH_O, NULL}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef def = {PyModuleDef_HEAD_INIT, "m", NULL, -1, methods};
PyMODINIT_FUNC PyInit_m(void) { return PyModule_Create(&def); }
"""
# a module within the 3.9 stable ABI
CLEAN = """#include <Python.h>
static PyObject *f(PyObject *self, PyObject *arg) { return PyLong_FromLong(PyObject_Length(arg)); }
""" + _METHODS
# uses PyUnicode_AsUTF8AndSize, in the limited API from 3.10 on
NEWER = """#include <Python.h>
static PyObject *f(PyObject *self, PyObject *arg) {
    Py_ssize_t n; const char *s = PyUnicode_AsUTF8AndSize(arg, &n);
    return s ? PyLong_FromSsize_t(n) : NULL;
}
""" + _METHODS
# built without Py_LIMITED_API, calling PyCode_NewEmpty (not in the stable ABI)
OUTSIDE = """#include <Python.h>
static PyObject *f(PyObject *self, PyObject *arg) {
    return (PyObject *)PyCode_NewEmpty("x.py", "g", 1);
}
""" + _METHODS


def _module(tmp: Path, source: str, name: str, limited: str | None) -> Path:
    include = sysconfig.get_paths()["include"]
    if not (Path(include) / "Python.h").is_file():
        pytest.skip(f"no Python.h in {include} (this Python's headers are not installed)")
    flags = [f"-I{include}"] + ([f"-DPy_LIMITED_API={limited}"] if limited else [])
    return compile_shared(tmp / "build", name, source, lang="c", flags=flags, soname="")


def _wheel(tmp: Path, module: Path, tag: str) -> Path:
    return make_wheel(tmp / "wheels", "m", "1.0", f"{tag}-linux_x86_64", {module.name: module})


def _ours(whl: Path) -> dict[str, list[str]]:
    """cause -> messages of the abi3 findings of ``whl``."""
    out: dict[str, list[str]] = {}
    for f in check_paths([whl]).wheels[0].findings:
        if f.check == "abi3":
            assert f.severity == "error"
            out.setdefault(f.cause or "", []).append(f.message)
    return out


def _oracle(whl: Path) -> dict[str, object]:
    """abi3audit's verdict on the wheel's one extension module."""
    if not ABI3AUDIT.is_file():
        pytest.skip("abi3audit is not installed (pip install -e '.[dev]')")
    proc = subprocess.run([str(ABI3AUDIT), "--report", str(whl)], capture_output=True,
                          text=True, timeout=120, check=False)
    report = json.loads(proc.stdout)
    (entry,) = report["specs"][str(whl)]["wheel"]
    result: dict[str, object] = entry["result"]
    return result


def test_a_module_within_its_tags_stable_abi_passes(tmp_path: Path) -> None:
    whl = _wheel(tmp_path, _module(tmp_path, CLEAN, "m.abi3.so", "0x03090000"), "cp39-abi3")
    oracle = _oracle(whl)
    assert oracle["is_abi3"] and oracle["is_abi3_baseline_compatible"]
    assert _ours(whl) == {}


def test_a_symbol_newer_than_the_tag_is_an_error_naming_the_python_that_added_it(
        tmp_path: Path) -> None:
    whl = _wheel(tmp_path, _module(tmp_path, NEWER, "m.abi3.so", "0x030A0000"), "cp39-abi3")
    oracle = _oracle(whl)
    assert oracle["future_abi3_objects"] == {"PyUnicode_AsUTF8AndSize": "3.10"}
    assert oracle["non_abi3_symbols"] == []
    ours = _ours(whl)
    assert list(ours) == ["stable ABI newer than the wheel's tag"]
    (msg,) = ours["stable ABI newer than the wheel's tag"]
    assert "PyUnicode_AsUTF8AndSize (3.10)" in msg and "cp39-abi3" in msg
    assert "tag it cp310-abi3" in msg  # the oldest tag the module's imports allow
    # tagged for 3.10, the same module is right
    right = _wheel(tmp_path / "310", whl.parent.parent / "build" / "m.abi3.so", "cp310-abi3")
    assert _oracle(right)["is_abi3_baseline_compatible"] and _ours(right) == {}


def test_imports_outside_the_stable_abi_and_a_one_python_name_are_errors(
        tmp_path: Path) -> None:
    one_python = f"m{sysconfig.get_config_var('EXT_SUFFIX')}"  # m.cpython-3XY-<arch>.so
    whl = _wheel(tmp_path, _module(tmp_path, OUTSIDE, one_python, None), "cp39-abi3")
    oracle = _oracle(whl)
    outside = sorted(oracle["non_abi3_symbols"])  # type: ignore[call-overload]
    assert "PyCode_NewEmpty" in outside
    ours = _ours(whl)
    assert set(ours) == {"imports outside the stable ABI", "module named for one Python"}
    (msg,) = ours["imports outside the stable ABI"]
    for name in outside:  # every symbol the oracle finds outside, named (up to 5 shown)
        assert name in msg or f"and {len(outside) - 5} more" in msg
    assert f"imports {len(outside)} interpreter symbol" in msg
    (named,) = ours["module named for one Python"]
    assert one_python in named and ".abi3.so" in named


def test_a_wheel_for_one_python_is_not_audited(tmp_path: Path) -> None:
    module = _module(tmp_path, OUTSIDE, "m.so", None)
    tag = f"cp3{sys.version_info.minor}"
    assert _ours(_wheel(tmp_path, module, f"{tag}-{tag}")) == {}


def test_the_cli_fails_an_abi3_wheel_with_a_newer_symbol(tmp_path: Path) -> None:
    whl = _wheel(tmp_path, _module(tmp_path, NEWER, "m.abi3.so", "0x030A0000"), "cp39-abi3")
    proc = subprocess.run([sys.executable, "-m", "toolkit", "check", str(whl), "--json"],
                          capture_output=True, text=True, timeout=300, check=False)
    doc = json.loads(proc.stdout)
    assert proc.returncode == 1 and doc["ok"] is False, proc.stderr
    checks = {f["check"] for w in doc["wheels"] for f in w["findings"]}
    assert "abi3" in checks


@pytest.fixture(scope="module", autouse=True)
def _gcc() -> None:
    if shutil.which("gcc") is None:
        pytest.skip("gcc is not installed")
