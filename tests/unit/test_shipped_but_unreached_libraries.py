"""A needed library the input ships where the needer's search path does not look: which copy
(the first by path that ld.so could load for it: same machine, class and encoding), how the
needer searches (RUNPATH before RPATH, as ld.so reads them), the ``$ORIGIN`` entry that
would reach it (a relative path between the two folders: posix in a wheel, the disk's on a
folder), and the finding as a user reads it, for each of its wordings."""

from __future__ import annotations

from toolkit.inspect.readers.elf import ElfInfo
from toolkit.inspect.readers.resolver import Lib
from toolkit.inspect.report import Finding
from toolkit.inspect.rules.needed import Missing, missing_findings, unreached


def _info(machine: int = 62, runpath: tuple[str, ...] = (), rpath: tuple[str, ...] = ()) -> ElfInfo:
    return ElfInfo(machine=machine, elf_class=64, type=3, runpath=runpath, rpath=rpath)


def test_where_the_shipped_copy_is_and_the_entry_that_reaches_it() -> None:
    ext = Lib("demo/_ext.so", "wheel:demo", _info(rpath=("/opt/x",), runpath=("/build/lib", "$ORIGIN")))
    index = {"demo.libs/libdep.so.1": Lib("demo.libs/libdep.so.1", "wheel:demo.libs", _info()),
             "a/libdep.so.1": Lib("a/libdep.so.1", "wheel:a", _info(machine=183)),  # AArch64: not for it
             "z/libdep.so.1": Lib("z/libdep.so.1", "wheel:z", _info())}
    assert unreached("libdep.so.1", ext, index) == {
        "shipped": "demo.libs/libdep.so.1", "search": "RUNPATH (/build/lib:$ORIGIN)",
        "fix": "$ORIGIN/../demo.libs"}
    rpath_only = Lib("demo/_ext.so", "wheel:demo", _info(rpath=("/opt/x", "/opt/y")))
    assert unreached("libdep.so.1", rpath_only, index)["search"] == "RPATH (/opt/x:/opt/y)"
    top = Lib("_ext.so", "wheel:", _info())
    assert unreached("libdep.so.1", top, index) == {
        "shipped": "demo.libs/libdep.so.1", "search": "", "fix": "$ORIGIN/demo.libs"}
    here = {"demo/libdep.so.1": Lib("demo/libdep.so.1", "wheel:demo", _info())}
    assert unreached("libdep.so.1", ext, here)["fix"] == "$ORIGIN"
    disk = Lib("/w/pkg/_ext.so", "/w/pkg", _info())
    lib = Lib("/w/libs/libdep.so.1", "/w/libs", _info())
    assert unreached("libdep.so.1", disk, {"/w/libs/libdep.so.1": lib}) == {
        "shipped": "/w/libs/libdep.so.1", "search": "", "fix": "$ORIGIN/../libs"}
    assert unreached("libother.so", ext, index) == {}
    assert unreached("libdep.so.1", Lib("x.so", "wheel:", None, "bad"), index) == {}


def _found(m: Missing) -> Finding:
    (f,) = missing_findings(m, policy="manylinux_2_28", requires=(), excludes=())
    return f


def test_the_finding_in_each_wording() -> None:
    cause = "needs libdep.so.1, shipped but not on its RUNPATH"
    fix = "fix: add $ORIGIN/../demo.libs to the RUNPATH of {} (-Wl,-rpath,'$ORIGIN/../demo.libs' or " \
          "patchelf --add-rpath '$ORIGIN/../demo.libs')"
    own = Missing("libdep.so.1", "demo/_ext.so", "demo/_ext.so", shipped="demo.libs/libdep.so.1",
                  fix="$ORIGIN/../demo.libs")
    assert _found(own) == Finding("missing-library", "error", "demo/_ext.so",
        "demo/_ext.so needs libdep.so.1, which the wheel ships at demo.libs/libdep.so.1, but it has no "
        "RUNPATH or RPATH: the loader finds it only on a system path; " + fix.format("demo/_ext.so"),
        cause=cause)
    dep = Missing("libdep.so.1", "demo/libmid.so", "demo/_ext.so", on_host="/usr/lib/libdep.so.1",
                  shipped="/w/demo.libs/libdep.so.1", fix="$ORIGIN/../demo.libs")
    assert _found(dep).message == (
        "demo/_ext.so needs libdep.so.1 (needed by demo/libmid.so), which the input holds at "
        "/w/demo.libs/libdep.so.1, but demo/libmid.so has no RUNPATH or RPATH: the loader finds it "
        "only on a system path; this machine has it at /usr/lib/libdep.so.1, which is not an input; "
        + fix.format("demo/libmid.so"))
