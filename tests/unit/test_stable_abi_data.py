"""The stable ABI the abi3 rule judges by (``toolkit.inspect.rules.abi3.stable_abi``, read from
pypa's abi3info) against CPython's own list: every CPython ships
``Lib/test/test_stable_abi_ctypes.py`` (generated from its ``Misc/stable_abi.toml``), whose
``SYMBOL_NAMES`` are the symbols that Python exports, with the feature-macro groups a Linux
build adds. For each CPython found here, the rule's symbols added up to that version are those."""

from __future__ import annotations

import ast
import ctypes
import glob
import re
from pathlib import Path

import pytest

from toolkit.inspect.rules.abi3 import LINUX_FEATURES, stable_abi

# CPythons whose test suite is installed (pyenv, python-build-standalone, /usr/lib)
TRACE_REFS_RENAMED = {"PyModule_Create2", "PyModule_FromDefAndSpec2"}
FILES = sorted({*glob.glob("/root/.pyenv/versions/3.*/lib/python3.*/test/test_stable_abi_ctypes.py"),
                *glob.glob("/usr/lib/python3.*/test/test_stable_abi_ctypes.py"),
                *glob.glob(str(Path.home() / ".pyenv/versions/3.*/lib/python3.*/test/"
                               "test_stable_abi_ctypes.py"))})


def _cpython_names(path: Path) -> set[str]:
    """SYMBOL_NAMES, with the groups under the feature macros a Linux CPython defines."""
    names: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "SYMBOL_NAMES" for t in node.targets):
            names |= set(ast.literal_eval(node.value))
        elif isinstance(node, ast.If):
            test = node.test
            macro = (test.slice.value if isinstance(test, ast.Subscript)
                     and isinstance(test.slice, ast.Constant) else None)
            if macro in LINUX_FEATURES:
                for stmt in node.body:
                    if isinstance(stmt, ast.AugAssign):
                        names |= set(ast.literal_eval(stmt.value))
    return names


@pytest.mark.skipif(not FILES, reason="no CPython test suite installed here "
                    "(Lib/test/test_stable_abi_ctypes.py)")
@pytest.mark.parametrize("path", FILES)
def test_the_rules_stable_abi_is_cpythons_own(path: str) -> None:
    minor = int(re.search(r"python3\.([0-9]+)/test/", path).group(1))  # type: ignore[union-attr]
    cpython = _cpython_names(Path(path))
    assert len(cpython) > 700  # the file was read (3.11 exports about 900)
    ours = {name for name, added in stable_abi().items() if added <= (3, minor)}
    # CPython 3.11's and 3.12's generator left out of this list the two functions a
    # Py_TRACE_REFS build renamed (3.13's lists them); every CPython exports them
    left_out = TRACE_REFS_RENAMED if minor < 13 else set()
    assert ours - cpython == left_out, f"not exported by CPython 3.{minor}"
    assert all(hasattr(ctypes.pythonapi, name) for name in left_out)
    assert cpython - ours == set(), f"exported by CPython 3.{minor}, missing from the rule"


def test_the_stable_abi_dates_symbols_as_cpythons_docs_do() -> None:
    # CPython's C API reference: PyType_FromSpec (3.2), PyUnicode_AsUTF8AndSize limited from
    # 3.10, PyType_GetModuleByDef from 3.13 in the limited API
    abi = stable_abi()
    assert abi["PyType_FromSpec"] == (3, 2)
    assert abi["PyUnicode_AsUTF8AndSize"] == (3, 10)
    assert abi["PyType_GetModuleByDef"] == (3, 13)
    assert "PyErr_SetFromWindowsErr" not in abi  # Windows only (MS_WINDOWS)
    assert "PyCode_NewEmpty" not in abi
