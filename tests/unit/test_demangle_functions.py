"""``demangle_many`` as a whole: the names it sends to the demangler, what it keeps of the
tool's answer, and when it falls back. The truth is binutils' c++filt run on each name by
itself, and small stand-in tools (scripts in tmp_path) for a failing, short or silent one."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from toolkit.core.proc import run
from toolkit.inspect.readers import demangle
from toolkit.inspect.readers.demangle import demangle_many

NAMES = ["_ZN3foo3barEv", "_ZNSt6vectorIiSaIiEED1Ev", "_Z3bazi", "_ZN2at6TensorD2Ev"]


def _cxxfilt(name: str) -> str:
    exe = shutil.which("c++filt")
    if exe is None:
        pytest.skip("c++filt is not installed")
    return run([exe, name]).stdout.rstrip("\n")


def _tool(tmp_path: Path, body: str) -> str:
    path = tmp_path / "tool.sh"
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)
    return str(path)


def test_each_mangled_name_is_what_cxxfilt_prints_for_it_alone() -> None:
    got = demangle_many([*NAMES, *NAMES, "plain", "Z3foov", "_Z3f\nv"])
    assert got == {n: _cxxfilt(n) for n in NAMES}
    assert got["_ZNSt6vectorIiSaIiEED1Ev"] == "std::vector<int, std::allocator<int> >::~vector()"


def test_names_with_a_newline_are_never_sent_nor_named() -> None:
    # a newline would shift every later line of c++filt's answer onto the wrong name
    for tool in (None, "c++filt"):
        got = demangle_many(["_Z3f\nv", "_Z3gv\n", "_Z1hv"], tool=tool)
        assert list(got) == ["_Z1hv"]
        assert got["_Z1hv"] == ("h()" if tool else "h(...)")


def test_nothing_to_demangle_runs_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    tool = _tool(tmp_path, f"touch {marker}; cat")
    assert demangle_many(["plain", "also_plain"], tool=tool) == {}
    assert demangle_many([], tool=tool) == {}
    assert not marker.exists()
    assert demangle_many(["_Z1hv"], tool=tool) == {"_Z1hv": "_Z1hv"}  # cat answers each as itself
    assert marker.exists()


def test_the_tool_gets_the_names_sorted_one_per_line(tmp_path: Path) -> None:
    seen = tmp_path / "input"
    tool = _tool(tmp_path, f"tee {seen}")
    got = demangle_many(["_Z1bv", "_Z1av", "_Z1bv", "x"], tool=tool)
    assert seen.read_text() == "_Z1av\n_Z1bv\n"
    assert got == {"_Z1av": "_Z1av", "_Z1bv": "_Z1bv"}


def test_an_answer_without_a_final_newline_is_used(tmp_path: Path) -> None:
    tool = _tool(tmp_path, "printf 'one\\ntwo'")
    assert demangle_many(["_Z1av", "_Z1bv"], tool=tool) == {"_Z1av": "one", "_Z1bv": "two"}


@pytest.mark.parametrize("body", ["printf 'one\\n'", "exit 1", "cat; exit 3", "kill -9 $$"])
def test_a_short_or_failing_answer_falls_back_for_every_name(tmp_path: Path, body: str) -> None:
    got = demangle_many(["_ZN3foo3barEv", "_Z1bv", "_ZNSt6vectorIiSaIiEED1Ev"], tool=_tool(tmp_path, body))
    assert got == {"_ZN3foo3barEv": "foo::bar(...)", "_Z1bv": "b(...)",
                   "_ZNSt6vectorIiSaIiEED1Ev": "_ZNSt6vectorIiSaIiEED1Ev"}


def test_a_hanging_tool_falls_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(demangle, "DEMANGLE_TIMEOUT_S", 0.5)
    got = demangle_many(["_ZN3foo3barEv"], tool=_tool(tmp_path, "exec sleep 30"))
    assert got == {"_ZN3foo3barEv": "foo::bar(...)"}


def test_a_missing_or_no_tool_falls_back() -> None:
    for tool in (None, "", "no-such-demangler-here"):
        assert demangle_many(["_ZN3foo3barEv", "_Z3"], tool=tool) == {
            "_ZN3foo3barEv": "foo::bar(...)", "_Z3": "_Z3"}


# c++filt (binutils 2.40) on each name, cut before its parameter list
MORE = ["_ZN3foo3barB5cxx11B3xyzEv", "_ZN3fooE", "_ZNSt3foo3barEv", "_ZN3fooC3Ev", "_ZN3foo3barD0Ev",
        "_ZNKSt6thread6get_idEv", "_ZN1a1b1c1dEv", "_ZN2ab3cdeB5cxx11C2Ev", "_Z1fv", "_Z10abcdefghijv",
        "_ZNO3foo3barEv", "_ZNVR3foo3barEv", "_ZN3fooB2v1E", "_ZNSt7__cxx1112basic_stringEv",
        "_ZN3foo3bar3bazEi"]


@pytest.mark.parametrize("mangled", MORE)
def test_the_fallback_agrees_with_cxxfilt(mangled: str) -> None:
    from toolkit.inspect.readers.demangle import qualified_name

    want = _cxxfilt(mangled)
    assert qualified_name(mangled) == (want.split("(")[0] if "(" in want else want)


@pytest.mark.parametrize("mangled", [
    "_ZN3foo",  # nested without its closing E
    "_ZN3fooBxE",  # an ABI tag without its length
    "_ZN3fooB9cxxE",  # an ABI tag longer than the rest: cut, then no E
    "_ZN0E",  # a zero-length name
    "_ZN3fo",  # a name running past the end
    "_ZN9fooE",
    "_ZC1Ev",  # a constructor of nothing
    "_ZL3foov",  # internal linkage: a shape the fallback does not claim
    "_Z",
    "_ZN",
    "foo",
    "Z3foov",
])
def test_shapes_beyond_the_fallback_have_no_name(mangled: str) -> None:
    from toolkit.inspect.readers.demangle import qualified_name

    assert qualified_name(mangled) is None
