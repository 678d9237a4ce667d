"""``check_paths`` and its per-library pass on small wheels of real gcc-built libraries (issue 19,
part 8: session 25): what each argument changes, the order findings come in, and what the
per-library pass hands on to the undefined-symbol and needed-library rules.

The truths: ``readelf -d`` / ``readelf -V`` of the libraries built here (libuse.so NEEDs
libdep.so.1 and needs version DEP_1 of it, with RPATH ``$ORIGIN/../demo.libs``; libneed.so
NEEDs libgone.so.1 and libother.so.1), ld.so(8) (a symbol bound to a version node must be
defined under that node by the library that defines the node), and the documented order of
findings (errors, warnings, notes; then by check, cause and library).
"""

from __future__ import annotations

import shutil
import struct
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.fixtures.native import compile_shared, system_lib
from tests.fixtures.wheels import make_wheel
from toolkit.core.gfx import parse_target
from toolkit.inspect.checks import check_paths
from toolkit.inspect.report import Finding

TAG = "cp312-cp312-linux_x86_64"


@dataclass
class Built:
    whl: Path  # demo/libuse.so, demo/libneed.so, demo.libs/libdep.so.1 (without foo)
    host: Path  # a folder holding libother.so.1, as this machine's system path
    order: Path  # demo/z.so and demo/a.so, in that archive order, each with an outside RPATH


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    t = tmp_path_factory.mktemp("libs")
    (t / "dep.map").write_text("DEP_1 { global: foo; bar; local: *; };\n")
    (t / "thin.map").write_text("DEP_1 { global: bar; local: *; };\n")
    full = compile_shared(t / "full", "libdep.so.1", "int foo(void){return 1;} int bar(void){return 2;}",
                          lang="c", flags=[f"-Wl,--version-script={t / 'dep.map'}"])
    # the shipped libdep.so.1 still defines DEP_1, but no longer foo
    thin = compile_shared(t / "thin", "libdep.so.1", "int bar(void){return 2;}", lang="c",
                          flags=[f"-Wl,--version-script={t / 'thin.map'}"])
    use = compile_shared(t / "use", "libuse.so", "extern int foo(void); int use(void){return foo();}",
                         lang="c", libs=[full], rpath="$ORIGIN/../demo.libs")
    gone = compile_shared(t / "gone", "libgone.so.1", "int gone(void){return 3;}", lang="c")
    other = compile_shared(t / "host", "libother.so.1", "int other(void){return 4;}", lang="c")
    need = compile_shared(t / "need", "libneed.so",
                          "extern int gone(void); extern int other(void);\n"
                          "int need(void){return gone()+other();}",
                          lang="c", libs=[gone, other])
    whl = make_wheel(t / "w", "demo", "1.0", TAG,
                     {"demo/libuse.so": use, "demo/libneed.so": need, "demo.libs/libdep.so.1": thin})
    z = compile_shared(t / "z", "z.so", "int z(void){return 0;}", lang="c", rpath="/opt/zz/lib")
    a = compile_shared(t / "a", "a.so", "int a(void){return 0;}", lang="c", rpath="/opt/aa/lib")
    order = make_wheel(t / "o", "order", "1.0", TAG, {"order/z.so": z, "order/a.so": a})
    return Built(whl, t / "host", order)


def _rows(findings: list[Finding]) -> list[tuple[str, str, str | None, str | None]]:
    return [(f.severity, f.check, f.cause, f.library) for f in findings]


def test_a_wheel_check_accounts_for_every_needed_library_and_symbol(built: Built) -> None:
    report = check_paths([built.whl], excludes=["libgone.so*"], system_path=[str(built.host)])
    assert report.schema_version == 3 and not report.ok
    (w,) = report.wheels
    # errors first, then notes; within a severity by check
    assert _rows(w.findings) == [
        ("error", "missing-library", "needs libother.so.1, not provided", "demo/libneed.so"),
        ("error", "undefined-symbol", "undefined symbols (likely from libdep.so.1)", "demo/libuse.so"),
        ("info", "missing-library", "needs libgone.so.1, excluded", "demo/libneed.so"),
    ]
    other, undefined, gone = w.findings
    # the host's copy is named, never used
    assert f"this machine has it at {built.host / 'libother.so.1'}, which is not an input" in other.message
    # readelf -V libuse.so: foo is bound to DEP_1, which libdep.so.1 (its verneed file) defines
    # libuse.so is no extension module (no PyInit_) and none loads it: loading it fails
    assert undefined.message == ("loading demo/libuse.so would fail: 1 undefined symbol (likely from "
                                 "libdep.so.1): foo@DEP_1")
    assert gone.message == "demo/libneed.so needs libgone.so.1: excluded by --exclude, not checked"
    libs = {lr.path: lr for lr in w.libraries}
    assert libs["demo/libuse.so"].unresolved == [{"symbol": "foo", "demangled": "foo", "version": "DEP_1"}]
    assert libs["demo/libneed.so"].needed == ["libgone.so.1", "libother.so.1"]  # readelf -d
    assert sorted(libs["demo/libneed.so"].missing) == ["libgone.so.1", "libother.so.1"]
    # RPATH $ORIGIN/../demo.libs stays inside the wheel (demo.libs is one of its folders)
    assert not [f for f in w.findings if f.check == "rpath"]


def test_without_excludes_or_a_system_path_each_missing_library_is_an_error(built: Built) -> None:
    (w,) = check_paths([built.whl], system_path=[]).wheels
    missing = [f for f in w.findings if f.check == "missing-library"]
    assert [(f.severity, f.cause) for f in missing] == [
        ("error", "needs libgone.so.1, not provided"), ("error", "needs libother.so.1, not provided")]
    assert not any("this machine has it" in f.message for f in missing)


def test_a_required_policy_is_the_one_the_needed_libraries_are_judged_by(built: Built) -> None:
    (w,) = check_paths([built.whl], policy="manylinux_2_28", system_path=[]).wheels
    gone = next(f for f in w.findings if f.cause == "needs libgone.so.1, not provided")
    assert ", manylinux_2_28 does not allow (not in auditwheel's list" in gone.message
    (plain,) = check_paths([built.whl], system_path=[]).wheels
    gone = next(f for f in plain.findings if f.cause == "needs libgone.so.1, not provided")
    assert "manylinux_2_28 does not allow" not in gone.message


def test_required_symbols_and_targets_are_checked_against_the_wheel(built: Built) -> None:
    (w,) = check_paths([built.whl], required_symbols=["use", "nothere"], targets=[parse_target("gfx90a")],
                       excludes=["*"], system_path=[]).wheels
    req = [f.message for f in w.findings if f.check == "required-symbol"]
    assert req == [f"required symbol nothere is defined by no library of {built.whl.name} "
                   "(like `nm -gDC lib | grep ' nothere('` finding nothing)"]
    (gpu,) = [f for f in w.findings if f.check == "gpu-targets"]
    assert gpu.message == ("no GPU code for gfx90a in this wheel: none of its 3 native libraries carries "
                           "device code or links HIP (a CPU-only build?); it would fail with "
                           "hipErrorNoBinaryForGpu")


def test_findings_of_one_check_and_cause_are_ordered_by_library(built: Built) -> None:
    # the archive lists order/z.so first; the report lists order/a.so's finding first
    (w,) = check_paths([built.order], system_path=[]).wheels
    rpath = [f for f in w.findings if f.check == "rpath"]
    assert [(f.library, f.message.split(" in ")[0]) for f in rpath] == [
        ("order/a.so", "RPATH '/opt/aa/lib'"), ("order/z.so", "RPATH '/opt/zz/lib'")]
    assert {f.severity for f in rpath} == {"warning"}


def test_a_policy_library_the_claimed_policy_does_not_list_is_missing(tmp_path: Path) -> None:
    # auditwheel's policy.json: manylinux_2_28 lists libexpat.so.1, manylinux1 (manylinux_2_5)
    # does not; a manylinux1 wheel that needs it must ship it
    expat = system_lib("libexpat.so.1")
    src = "extern void *XML_ParserCreate(const char *);\nvoid *mk(void){return XML_ParserCreate(0);}"
    lib = compile_shared(tmp_path / "x", "libx.so", src, lang="c", libs=[expat])
    one = compile_shared(tmp_path / "y", "liby.so", src, lang="c", libs=[expat])
    for tag, policy in (("cp312-cp312-manylinux1_x86_64", "manylinux_2_5"),
                        ("cp312-cp312-manylinux_2_28_x86_64", None)):
        whl = make_wheel(tmp_path / tag, "demo", "1.0", tag, {"demo/libx.so": lib, "demo/liby.so": one})
        (w,) = check_paths([whl], system_path=[]).wheels
        missing = [(f.severity, f.library, f.cause) for f in w.findings if f.check == "missing-library"]
        if policy is None:
            assert missing == []
            continue
        # one error per library that needs it (readelf -d: NEEDED libexpat.so.1 in each)
        assert missing == [("error", "demo/libx.so", "needs libexpat.so.1, not provided"),
                           ("error", "demo/liby.so", "needs libexpat.so.1, not provided")]
        msg = next(f.message for f in w.findings if f.cause and f.library == "demo/libx.so")
        assert msg.startswith("demo/libx.so needs libexpat.so.1, which the wheel does not ship, "
                              f"{policy} does not allow")


def test_a_library_missing_twice_in_one_closure_is_one_finding(tmp_path: Path) -> None:
    # libtop.so NEEDs libgone.so.1 and libmid.so, which NEEDs libgone.so.1 too (readelf -d)
    gone = compile_shared(tmp_path / "g", "libgone.so.1", "int gone(void){return 1;}", lang="c")
    mid = compile_shared(tmp_path / "m", "libmid.so", "extern int gone(void); int mid(void){return gone();}",
                         lang="c", libs=[gone])
    top = compile_shared(tmp_path / "t", "libtop.so",
                         "extern int gone(void); extern int mid(void); int top(void){return gone()+mid();}",
                         lang="c", libs=[gone, mid], rpath="$ORIGIN")
    whl = make_wheel(tmp_path, "demo", "1.0", TAG, {"demo/libtop.so": top, "demo/libmid.so": mid})
    (w,) = check_paths([whl], system_path=[]).wheels
    assert [(f.library, f.message) for f in w.findings if f.check == "missing-library"] == [
        ("demo/libmid.so", "demo/libmid.so needs libgone.so.1, which the wheel does not ship, "
         "manylinux_2_5 does not allow (not in auditwheel's list of libraries every system has) and no "
         "--with provides; fix: ship it (auditwheel repair), declare a provider (--with DIR|WHEEL) or "
         "--exclude libgone.so.1"),
        ("demo/libtop.so", "demo/libtop.so needs libgone.so.1, which the wheel does not ship, "
         "manylinux_2_5 does not allow (not in auditwheel's list of libraries every system has) and no "
         "--with provides; fix: ship it (auditwheel repair), declare a provider (--with DIR|WHEEL) or "
         "--exclude libgone.so.1"),
    ]


def test_within_one_check_a_finding_without_a_cause_comes_first(tmp_path: Path) -> None:
    # a file named like a library that is not ELF (no cause), and a real libz.so.1 whose section
    # header table is gone (e_shoff and e_shnum zeroed, as sstrip leaves a file): ld.so loads it
    # by its program headers, but its symbols cannot be read ("ELF cannot be judged")
    (tmp_path / "libfake.so").write_text("not ELF\n")
    data = bytearray(system_lib("libz.so.1").read_bytes())
    struct.pack_into("<Q", data, 0x28, 0)  # e_shoff (ELF64 header, gABI)
    struct.pack_into("<HH", data, 0x3C, 0, 0)  # e_shnum, e_shstrndx
    (tmp_path / "libnosh.so").write_bytes(bytes(data))
    (w,) = check_paths([tmp_path], system_path=[]).wheels
    assert [(f.check, f.cause, f.library) for f in w.findings if f.check == "elf"] == [
        ("elf", None, str(tmp_path / "libfake.so")),
        ("elf", "ELF cannot be judged", str(tmp_path / "libnosh.so")),
    ]


def test_an_unreadable_fatbin_is_a_gpu_code_error_of_its_library(tmp_path: Path) -> None:
    # a .hip_fatbin section must hold clang offload bundles; these 64 bytes are all zero
    # (readelf -S: .hip_fatbin PROGBITS, size 0x40)
    src = '__attribute__((section(".hip_fatbin"), used)) const char fatbin[64] = {0};\nint f(void){return 1;}'
    lib = compile_shared(tmp_path / "b", "libzero.so", src, lang="c")
    whl = make_wheel(tmp_path, "demo", "1.0", TAG, {"demo/libzero.so": lib})
    (w,) = check_paths([whl], system_path=[]).wheels
    assert [(f.severity, f.library, f.cause, f.message) for f in w.findings if f.check == "gpu-code"] == [
        ("error", "demo/libzero.so", "GPU code present but unreadable",
         "demo/libzero.so: .hip_fatbin holds no offload bundle (64 bytes, all zero)")]
    assert not w.ok and w.failed_checks == {"gpu-code": 1}


def test_glibc_names_an_extension_module_uses_are_the_interpreters(tmp_path: Path) -> None:
    # an extension module (it exports PyInit__ext) calls erfc without linking libm (readelf -d:
    # no NEEDED at all, gcc links with --as-needed; nm -D: U erfc, U missing_fn, and weak w ones
    # that ld.so lets stay undefined); the same code as a plain library
    src = ("double erfc(double);\nint missing_fn(void);\n"
           "double PyInit__ext(double x){return erfc(x) + missing_fn();}\n")
    ext = compile_shared(tmp_path / "e", "_ext.so", src, lang="c", flags=["-fno-builtin"])
    # the plain library links libm (readelf -d: NEEDED libm.so.6; erfc@GLIBC_2.2.5 bound there)
    plain = compile_shared(tmp_path / "p", "libplain.so", src.replace("PyInit__ext", "plain"), lang="c",
                           flags=["-fno-builtin"], libs=[system_lib("libm.so.6")])
    whl = make_wheel(tmp_path, "demo", "1.0", TAG, {"demo/_ext.so": ext, "demo/libplain.so": plain})
    (w,) = check_paths([whl], system_path=[]).wheels
    rows = [(f.check, f.severity, f.library, tuple(sorted(f.symbols))) for f in w.findings
            if f.check in ("undefined-symbol", "interpreter-symbols")]
    assert rows == [
        # by cause: "(defined by none of ..." before "(it loads no library ..."
        ("undefined-symbol", "error", "demo/libplain.so", ("missing_fn",)),
        ("undefined-symbol", "error", "demo/_ext.so", ("missing_fn",)),
        ("interpreter-symbols", "info", "demo/_ext.so", ()),
    ]
    note = next(f for f in w.findings if f.check == "interpreter-symbols")
    assert note.message == ("demo/_ext.so uses 1 libm.so.6 symbol (erfc) without linking libm.so.6: the "
                            "interpreter provides them, so the import works; link m explicitly (-lm)")
    plain_u, ext_u = (f for f in w.findings if f.check == "undefined-symbol")
    assert ext_u.message.endswith("in demo/_ext.so (it loads no library that could define it): missing_fn")
    # libplain.so exports no PyInit_ (nm -D) and no extension module loads it: no import fails
    assert plain_u.message == ("loading demo/libplain.so would fail: 1 undefined symbol (defined by none "
                               "of libm.so.6): missing_fn")
    assert ext_u.message.startswith("import would fail: 1 undefined symbol in demo/_ext.so")


def test_unversioned_names_of_an_assumed_library_without_versions_are_not_judged(tmp_path: Path) -> None:
    # libX11.so.6 is on auditwheel's list and exports unversioned names: nothing here lists
    # them, so an unversioned reference may be its; a versioned one (GLIBC_) is still judged
    x11 = compile_shared(tmp_path / "x", "libX11.so.6", "int XOpenDisplay(void){return 0;}", lang="c")
    src = "int XOpenDisplay(void);\nint gone_fn(void);\nint g(void){return XOpenDisplay() + gone_fn();}"
    lib = compile_shared(tmp_path / "l", "libgui.so", src, lang="c", libs=[x11])
    whl = make_wheel(tmp_path, "demo", "1.0", TAG, {"demo/libgui.so": lib})
    (w,) = check_paths([whl], system_path=[]).wheels
    assert [f for f in w.findings if f.check in ("undefined-symbol", "missing-library")] == []
    assert w.libraries[0].needed[0] == "libX11.so.6"
    # zlib too: its zlib.map versions only names added since 1.2.0 (readelf --dyn-syms on
    # Debian's libz.so.1: zlibVersion has no version), so zlibVersion is no undefined symbol
    zsrc = ("const char *zlibVersion(void);\nint gone_fn(void);\n"
            "int z(void){return *zlibVersion() + gone_fn();}")
    zlib = compile_shared(tmp_path / "z", "libzuser.so", zsrc, lang="c", libs=[system_lib("libz.so.1")])
    whl = make_wheel(tmp_path / "zw", "demo", "1.0", TAG, {"demo/libzuser.so": zlib})
    (w,) = check_paths([whl], system_path=[]).wheels
    assert w.libraries[0].needed == ["libz.so.1"] and w.findings == []


def test_bundled_torch_libraries_are_judged_in_wheels_only(tmp_path: Path) -> None:
    # any ELF file called libtorch_cpu.so: in a wheel of another project it must come from torch;
    # a folder of libraries is a torch install as much as anything else
    folder = tmp_path / "lib"
    folder.mkdir()
    shutil.copy(system_lib("libz.so.1"), folder / "libtorch_cpu.so")
    (w,) = check_paths([folder], system_path=[]).wheels
    assert [f for f in w.findings if f.check == "bundled-library"] == []
    for project, bundled in (("Demo_Pkg", ["demo/libtorch_cpu.so"]), ("torch", [])):
        files = {"demo/libtorch_cpu.so": folder / "libtorch_cpu.so"}
        whl = make_wheel(tmp_path / project, project, "1.0", TAG, files)
        (w,) = check_paths([whl], system_path=[]).wheels
        assert [f.library for f in w.findings if f.check == "bundled-library"] == bundled


def test_a_required_policy_sets_the_oldest_glibc_an_unlinked_glibc_name_must_resolve_on(
        tmp_path: Path) -> None:
    """shm_open lived in librt.so.1 until glibc 2.33 and is libc's since 2.34 (glibc 2.34's
    NEWS: libpthread, libdl, libutil and librt merged into libc). A library linked without any
    library (``-nostdlib``: its shm_open reference carries no version, ``readelf --dyn-syms``)
    resolves it from libc, which every process loads, only on glibc 2.34 and later: a wheel
    tagged manylinux_2_17 fails on an older glibc, but judged by ``--policy manylinux_2_34``
    (glibc 2.34 on) it resolves."""
    src = "int shm_open(const char *, int, unsigned);\nint f(void){return shm_open(\"/x\", 0, 0);}"
    lib = compile_shared(tmp_path / "l", "libshm.so", src, lang="c", flags=["-nostdlib"])
    whl = make_wheel(tmp_path / "w", "demo", "1.0", "cp312-cp312-manylinux_2_17_x86_64",
                     {"demo/libshm.so": lib})
    (claimed,) = check_paths([whl], system_path=[]).wheels
    (undefined,) = [f for f in claimed.findings if f.check == "undefined-symbol"]
    assert "shm_open" in undefined.message and undefined.library == "demo/libshm.so"
    (required,) = check_paths([whl], policy="manylinux_2_34", system_path=[]).wheels
    assert [f for f in required.findings if f.check == "undefined-symbol"] == []
