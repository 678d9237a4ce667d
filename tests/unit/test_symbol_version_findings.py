"""Symbol versions a library needs that its provider lacks, worded as glibc's ld.so words the
failure (``version `X' not found (required by Y)``) with the highest version of that prefix
the provider defines (the host's libstdc++ and libc, as readelf -V lists their
definitions), and unversioned glibc names an extension module takes from the interpreter
(the shipped table of glibc's exports)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.fixtures.native import system_lib
from tests.fixtures.wheels import make_wheel
from toolkit.inspect.checks import check_paths
from toolkit.inspect.readers.elf import ElfInfo
from toolkit.inspect.readers.members import load_file
from toolkit.inspect.readers.resolver import Lib
from toolkit.inspect.report import LibraryResult, WheelResult
from toolkit.inspect.rules.symbols import (
    Unresolved,
    _candidates,
    glibc_provided,
    report_unresolved,
    unversioned_library,
    version_need_findings,
)

STDCXX = Path("/usr/lib/x86_64-linux-gnu/libstdc++.so.6")


def _highest_defined(path: Path, prefix: str) -> str:
    text = subprocess.run(["readelf", "-VW", str(path)], capture_output=True, text=True, check=True).stdout
    section = text.split("Version definition section")[1].split("Version needs section")[0]
    nums = [n.split("_", 1)[1] for n in re.findall(r"Name: (\S+)", section)
            if n.startswith(prefix + "_") and re.fullmatch(r"[0-9.]+", n.split("_", 1)[1])]
    return f"{prefix}_{max(nums, key=lambda v: tuple(int(p) for p in v.split('.')))}"


@pytest.mark.skipif(shutil.which("readelf") is None or not STDCXX.exists(),
                    reason="needs readelf and libstdc++")
def test_a_version_the_provider_lacks_fails_the_import() -> None:
    dep = Lib(str(STDCXX), str(STDCXX.parent), load_file(STDCXX))
    top = _highest_defined(STDCXX, "GLIBCXX")
    needs = {"libstdc++.so.6": ("GLIBCXX_3.4", "GLIBCXX_3.4.99", "CXXABI_9.9", "NOPE_1.0"),
             "libother.so": ("OTHER_1.0",)}  # not resolved: judged elsewhere
    info = ElfInfo(machine=62, elf_class=64, type=3, version_needs=needs)
    lib = Lib("demo/_ext.so", "wheel:demo", info)
    bad, found = version_need_findings(lib, info, {"libstdc++.so.6": dep})
    assert bad == {"GLIBCXX_3.4.99", "CXXABI_9.9", "NOPE_1.0"}
    by_version = {f.cause: f for f in found}
    f = by_version[f"version GLIBCXX_3.4.99 not found in libstdc++.so.6 ({STDCXX})"]
    assert (f.check, f.severity, f.library) == ("symbol-version", "error", "demo/_ext.so")
    assert f.message == (f"import would fail: version `GLIBCXX_3.4.99' not found in libstdc++.so.6 "
                         f"(required by demo/_ext.so; {STDCXX} provides up to {top})")
    nope = by_version[f"version NOPE_1.0 not found in libstdc++.so.6 ({STDCXX})"]
    assert nope.message.endswith(f"{STDCXX} provides up to none of that prefix)")
    # a provider that defines no versions cannot be judged by version
    bare = Lib("x/libstdc++.so.6", "x", ElfInfo(machine=62, elf_class=64, type=3))
    assert version_need_findings(lib, info, {"libstdc++.so.6": bare}) == (set(), [])
    assert version_need_findings(lib, info, {}) == (set(), [])


def _module(defined: frozenset[bytes]) -> ElfInfo:
    return ElfInfo(machine=62, elf_class=64, type=3, defined=defined)


def test_an_extension_module_takes_unversioned_glibc_names_from_the_interpreter() -> None:
    undefined: list[tuple[bytes, str | None]] = [(b"cos", None), (b"malloc", None), (b"cos", "GLIBC_2.2.5"),
                                                 (b"my_func", None), (b"dlopen", None)]
    # judged for glibc 2.28 and later: before 2.34 dlopen is libdl.so.2's (glibc 2.33's
    # libdl.abilist: GLIBC_2.2.5 dlopen F), which the interpreter links there
    rest, provided = glibc_provided(_module(frozenset({b"PyInit_demo"})), undefined, (), (2, 28))
    assert rest == [(b"cos", "GLIBC_2.2.5"), (b"my_func", None)]  # versioned or not glibc's
    assert provided == {"libm.so.6": ["cos"], "libc.so.6": ["malloc"], "libdl.so.2": ["dlopen"]}
    # for glibc 2.34 and later dlopen is libc's (readelf --dyn-syms libc.so.6: dlopen@@GLIBC_2.34)
    assert glibc_provided(_module(frozenset({b"PyInit_demo"})), undefined, (), (2, 34))[1] == {
        "libm.so.6": ["cos"], "libc.so.6": ["malloc", "dlopen"]}
    # a plain library is loaded by whatever loads it: only libc is in every process
    plain = _module(frozenset({b"demo_init"}))
    assert glibc_provided(plain, undefined, (), (2, 28)) == (
        [(b"cos", None), (b"cos", "GLIBC_2.2.5"), (b"my_func", None), (b"dlopen", None)], {})
    # what the library's load tree links provides, with no note
    assert glibc_provided(plain, undefined, ("libm.so.6", "libdl.so.2"), (2, 28)) == (
        [(b"cos", "GLIBC_2.2.5"), (b"my_func", None)], {})


def test_a_symbol_name_that_is_not_utf8_is_left_for_the_other_checks() -> None:
    """ELF symbol names are bytes (the gABI asks for no encoding): a name that is not UTF-8
    names no glibc export (every one is ASCII), so it stays with the rest, unread as text."""
    undefined: list[tuple[bytes, str | None]] = [(b"\xffmy_func", None), (b"malloc", None)]
    rest, provided = glibc_provided(_module(frozenset({b"PyInit_demo"})), undefined, (), (2, 28))
    assert rest == [(b"\xffmy_func", None)]
    assert provided == {"libc.so.6": ["malloc"]}


@pytest.mark.parametrize(("name", "unversioned"), [
    ("libGL.so.1", True), ("libX11.so.6", True), ("libc.so.6", False), ("libstdc++.so.6", False),
    ("libz.so.1", True),  # readelf --dyn-syms libz.so.1 (zlib1g 1.2.13): zlibVersion has no version
    ("libgcc_s.so.1", False), ("ld-linux-x86-64.so.2", False),
])
def test_which_policy_libraries_export_unversioned_names(name: str, unversioned: bool) -> None:
    assert unversioned_library(name) is unversioned


def test_a_required_symbol_no_library_defines_names_the_wheel(tmp_path: Path) -> None:
    whl = make_wheel(tmp_path, "demo", "1.0", "cp311-cp311-manylinux_2_28_x86_64",
                     {"demo/libz.so.1": system_lib("libz.so.1")})
    report = check_paths([whl], required_symbols=["deflate", "demo::missing_op"], system_path=[])
    found = [f for f in report.wheels[0].findings if f.check == "required-symbol"]
    assert [(f.severity, f.library, f.message) for f in found] == [(
        "error", None, f"required symbol demo::missing_op is defined by no library of {whl.name} "
        "(like `nm -gDC lib | grep ' demo::missing_op('` finding nothing)")]  # libz defines deflate


def test_candidate_names_that_are_not_utf8_are_kept_with_the_replacement_character() -> None:
    names = [b"_ZN4demo7op_name\xffEv", b"_ZN4demo5otherEv", b"plain"]
    assert _candidates(names, ["demo::op_name"]) == {"_ZN4demo7op_name\ufffdEv"}
    assert _candidates(names, ["plain"]) == {"plain"}
    assert _candidates(names, []) == set()


def test_a_symbol_version_no_loaded_library_names_falls_back_to_the_providers() -> None:
    # the symbol's version node (FOO_1) is not one any loaded library defines
    wheel = WheelResult("pkg-1.0-cp312-cp312-linux_x86_64.whl")
    p = Unresolved(wheel, Lib("pkg/libx.so", "wheel:pkg", None),
                   LibraryResult("pkg/libx.so", "shared-library"), [(b"foo", "FOO_1")],
                   providers=["/l/liba.so"], version_files={"BAR_2": "libbar.so.2"})
    report_unresolved([p], {})
    (f,) = wheel.findings
    assert "(defined by none of liba.so)" in f.message


def _pending(providers: list[str]) -> tuple[WheelResult, Unresolved]:
    wheel = WheelResult("pkg-1.0-cp312-cp312-linux_x86_64.whl")
    lib = Lib("pkg/libx.so", "wheel:pkg", None)
    return wheel, Unresolved(wheel, lib, LibraryResult("pkg/libx.so", "shared-library"),
                             [(b"foo", None)], providers=providers)


def test_an_undefined_symbol_names_the_libraries_that_do_not_define_it() -> None:
    wheel, p = _pending(["/usr/lib/x86_64-linux-gnu/libc.so.6", "pkg/liba.so"])
    report_unresolved([p], {})
    (f,) = wheel.findings
    assert f.message == ("import would fail: 1 undefined symbol in pkg/libx.so "
                         "(defined by none of libc.so.6, liba.so): foo")
    wheel, p = _pending(["/l/liba.so", "/l/libb.so", "/l/libc.so", "/l/libd.so", "/l/libe.so"])
    report_unresolved([p], {})
    assert wheel.findings[0].message == ("import would fail: 1 undefined symbol in pkg/libx.so "
                                         "(defined by none of liba.so, libb.so, libc.so and 2 more): foo")
