"""Unversioned references to glibc names resolve through the glibc libraries of the load tree
(a wheel library's NEEDED closure), as ld.so resolves them, on every glibc the wheel's tag
admits: ``shm_open`` is librt.so.1's before glibc 2.34 (glibc 2.33's librt.abilist:
``GLIBC_2.2.5 shm_open F``) and libc.so.6's since (readelf --dyn-syms: ``shm_open@@GLIBC_2.34``).
The loader's truth on this machine's glibc: ``ldd -r`` and loading the library (ctypes)."""

from __future__ import annotations

import ctypes
import os
from pathlib import Path

import pytest

from tests.fixtures.native import compile_shared, system_lib
from tests.fixtures.wheels import make_wheel
from toolkit.core.proc import run
from toolkit.inspect.checks import check_paths

pytestmark = pytest.mark.integration

SHM = ('int shm_open(const char *, int, int);\nint shm_unlink(const char *);\n'
       'int use_shm(void) { return shm_open("/x", 0, 0) + shm_unlink("/x"); }\n')
ML28, ML34 = "cp311-cp311-manylinux_2_28_x86_64", "cp311-cp311-manylinux_2_34_x86_64"
GLIBC = tuple(int(p) for p in (os.confstr("CS_GNU_LIBC_VERSION") or "glibc 0.0").split()[1].split("."))


def _libs(tmp: Path, librt: bool) -> tuple[Path, Path]:
    """libshm.so references shm_open/shm_unlink without a version (-nodefaultlibs: linked
    against no library defining them) and NEEDs libhelper.so, which NEEDs librt.so.1 or not."""
    helper = compile_shared(tmp, "libhelper.so", "int helper(void) { return 1; }", lang="c",
                            flags=["-Wl,--no-as-needed"], libs=[system_lib("librt.so.1")] if librt else [])
    shm = compile_shared(tmp, "libshm.so", SHM, lang="c", flags=["-nodefaultlibs", "-Wl,--no-as-needed"],
                         libs=[helper], runpath="$ORIGIN")
    syms = run(["readelf", "-W", "--dyn-syms", str(shm)]).stdout
    assert " UND shm_open\n" in syms and " UND shm_unlink\n" in syms  # unversioned references
    assert ("[librt.so.1]" in run(["readelf", "-d", str(helper)]).stdout) is librt
    return shm, helper


def _undefined(tmp: Path, tag: str, shm: Path, helper: Path) -> list[tuple[str, ...]]:
    whl = make_wheel(tmp / tag, "demo", "1.0", tag, {"demo/libshm.so": shm, "demo/libhelper.so": helper})
    (w,) = check_paths([whl], system_path=()).wheels
    return [tuple(sorted(f.symbols)) for f in w.findings if f.check == "undefined-symbol"]


@pytest.mark.skipif(GLIBC < (2, 34), reason="the loader truth below is that of glibc 2.34 or later")
def test_shm_open_resolves_through_a_library_of_the_tree_that_loads_librt(tmp_path: Path) -> None:
    shm, helper = _libs(tmp_path / "rt", librt=True)
    assert "undefined symbol" not in run(["ldd", "-r", str(shm)]).stdout  # the loader, here
    assert _undefined(tmp_path, ML28, shm, helper) == []


@pytest.mark.skipif(GLIBC < (2, 34), reason="the loader truth below is that of glibc 2.34 or later")
def test_shm_open_without_librt_in_the_tree_fails_before_glibc_2_34_only(tmp_path: Path) -> None:
    shm, helper = _libs(tmp_path / "nort", librt=False)
    # glibc 2.28 to 2.33: librt.so.1 holds them, and nothing loads it
    assert _undefined(tmp_path, ML28, shm, helper) == [("shm_open", "shm_unlink")]
    # glibc 2.34 and later: libc, which every process loads, holds them; this glibc agrees
    ctypes.CDLL(str(shm), mode=os.RTLD_NOW)
    assert _undefined(tmp_path, ML34, shm, helper) == []


@pytest.mark.skipif(GLIBC < (2, 34), reason="the loader truth below is that of glibc 2.34 or later")
def test_with_no_policy_claimed_the_librarys_own_oldest_glibc_judges(tmp_path: Path) -> None:
    """A ``linux_x86_64`` wheel claims no glibc; libshm.so needs no glibc version at all, so it
    would load on the oldest glibc a policy names, where librt (not in the tree) holds
    shm_open: undefined there, though this glibc's libc resolves it."""
    shm, helper = _libs(tmp_path / "nort", librt=False)
    assert "GLIBC_" not in run(["readelf", "-W", "-V", str(shm)]).stdout
    ctypes.CDLL(str(shm), mode=os.RTLD_NOW)
    assert _undefined(tmp_path, "cp311-cp311-linux_x86_64", shm, helper) == [("shm_open", "shm_unlink")]
