"""The abi3 rule's findings for one extension module, whole lines against what CPython's
documentation says of each symbol ("Part of the Stable ABI since version 3.N"):
PyUnicode_AsUTF8AndSize 3.10, PyBuffer_Release/PyObject_GetBuffer/PyMemoryView_FromBuffer
3.11, PyType_FromMetaclass/PyErr_GetRaisedException 3.12, Py_GetConstant 3.13;
``_Py_NoneStruct`` (``Py_None``) is stable_abi.toml's data since 3.2; ``_PyUnicode_Ready`` is
private, in no stable ABI. ``Py``/``_Py`` names are the interpreter's, ``PyInit_*`` the
module's own; the Py_LIMITED_API value is ``0x03XX0000`` with the minor in hex (PEP 384)."""

from __future__ import annotations

from toolkit.inspect.readers.elf import ElfInfo
from toolkit.inspect.report import Finding
from toolkit.inspect.rules.abi3 import baseline, module_findings


def _module(*names: str) -> ElfInfo:
    return ElfInfo(machine=62, elf_class=64, type=3,
                   undefined=[(n.encode(), "GLIBC_2.2.5" if n == "malloc" else None) for n in names])


def test_imports_outside_the_stable_abi_and_newer_than_the_tag() -> None:
    info = _module("PyInit_m", "malloc", "_Py_NoneStruct", "_PyUnicode_Ready", "Py_NotAThing",
                   "PyUnicode_AsUTF8AndSize", "Py_DecRef")
    assert module_findings("m/m.abi3.so", info, (3, 9)) == [
        Finding("abi3", "error", "m/m.abi3.so",
                "m/m.abi3.so imports 2 interpreter symbols outside the stable ABI (Py_NotAThing, "
                "_PyUnicode_Ready), yet the wheel is tagged cp39-abi3: another Python may not define "
                "them; build with Py_LIMITED_API=0x03090000 or tag the wheel for one Python",
                cause="imports outside the stable ABI"),
        Finding("abi3", "error", "m/m.abi3.so",
                "m/m.abi3.so imports 1 interpreter symbol the stable ABI added after Python 3.9 "
                "(PyUnicode_AsUTF8AndSize (3.10)), yet the wheel is tagged cp39-abi3: on Python 3.9 "
                "the import fails with 'undefined symbol'; tag it cp310-abi3 or leave it out",
                cause="stable ABI newer than the wheel's tag")]
    # from 3.10 on the same module only imports one private symbol outside
    mixed = _module("_PyUnicode_Ready", "PyUnicode_AsUTF8AndSize")
    assert module_findings("m.abi3.so", mixed, (3, 10)) == [
        Finding("abi3", "error", "m.abi3.so",
                "m.abi3.so imports 1 interpreter symbol outside the stable ABI (_PyUnicode_Ready), "
                "yet the wheel is tagged cp310-abi3: another Python may not define it; build with "
                "Py_LIMITED_API=0x030A0000 or tag the wheel for one Python",
                cause="imports outside the stable ABI")]
    stable = _module("PyInit_m", "Py_DecRef", "_Py_NoneStruct", "free")
    assert module_findings("m.abi3.so", stable, (3, 9)) == []


def test_more_than_five_are_shown_as_five_and_a_count() -> None:
    newer = ("Py_GetConstant", "PyBuffer_Release", "PyObject_GetBuffer", "PyMemoryView_FromBuffer",
             "PyType_FromMetaclass", "PyErr_GetRaisedException")
    (f,) = module_findings("m.so", _module(*newer), (3, 10))
    assert f.message == (
        "m.so imports 6 interpreter symbols the stable ABI added after Python 3.10 "
        "(PyBuffer_Release (3.11), PyErr_GetRaisedException (3.12), PyMemoryView_FromBuffer (3.11), "
        "PyObject_GetBuffer (3.11), PyType_FromMetaclass (3.12) and 1 more), yet the wheel is tagged "
        "cp310-abi3: on Python 3.10 the import fails with 'undefined symbol'; tag it cp313-abi3 or "
        "leave them out")
    outside = [f"Py_Fake{i}" for i in range(7)]
    (g,) = module_findings("m.so", _module(*outside), (3, 9))
    assert "imports 7 interpreter symbols outside the stable ABI (Py_Fake0, Py_Fake1, Py_Fake2, " \
           "Py_Fake3, Py_Fake4 and 2 more)" in g.message


def test_a_module_named_for_one_python() -> None:
    for name in ("m.cpython-312-x86_64-linux-gnu.so", "m.cpython-39d.so",
                 "m.pypy39-pp73-x86_64-linux-gnu.so"):
        assert module_findings(f"pkg/{name}", _module(), (3, 9)) == [Finding(
            "abi3", "error", f"pkg/{name}",
            f"pkg/{name}: an extension module named for one Python ({name}) in a cp39-abi3 wheel: "
            "other Pythons do not import it; name it <module>.abi3.so (setuptools: "
            "Extension(..., py_limited_api=True))", cause="module named for one Python")]
    for name in ("m.abi3.so", "m.so", "cpython-312.so.txt"):
        assert module_findings(name, _module(), (3, 9)) == []


def test_the_oldest_abi3_tag_is_the_baseline() -> None:
    assert baseline(["cp310-abi3-manylinux_2_28_x86_64", "cp39-abi3-manylinux_2_28_x86_64"]) == (3, 9)
    assert baseline(["cp312-abi3-linux_x86_64"]) == (3, 12)
    for tags in (["cp311-cp311-linux_x86_64"], ["py3-none-any"], ["cp3-abi3-linux_x86_64"],
                 ["cp39-abi3"], []):
        assert baseline(tags) is None
