"""The check's words true to the wheel (issue 29, "What to build" 10): a shipped library its
needer's RUNPATH cannot reach is named as such, hiprtc-linked libraries without code objects
compile their kernels at run time, "import would fail" is said only of Python extension
modules and what they load, and a bundle entry whose id names another processor than its
code object's ELF header is an error and counts for neither.

Truth comes from binutils' readelf, LLVM's llvm-readobj and the fixtures' construction."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from tests.fixtures.bundles import compress_bundle, make_bundle
from tests.fixtures.handmade_elf import EM_AMDGPU
from tests.fixtures.native import compile_shared, embed_in_rodata, llvm_tool, section
from tests.fixtures.wheels import make_wheel
from toolkit.core.gfx import parse_target
from toolkit.core.proc import run
from toolkit.inspect.checks import check_paths
from toolkit.inspect.report import Finding, WheelResult

TAG = "cp311-cp311-manylinux_2_28_x86_64"


def _of(w: WheelResult, check: str) -> list[Finding]:
    return [f for f in w.findings if f.check == check]


# --- RUNPATH without $ORIGIN -------------------------------------------------------------


def test_a_shipped_library_the_runpath_cannot_reach_is_named_as_such(tmp_path: Path) -> None:
    dep = compile_shared(tmp_path / "dep", "libdep.so.1", 'extern "C" int dep() { return 1; }\n')
    src = 'extern "C" int dep();\nextern "C" int f() { return dep(); }\n'
    # an absolute RUNPATH, as a build tree leaves it: no $ORIGIN entry
    ext = compile_shared(tmp_path / "ext", "_ext.so", src, libs=[dep], runpath="/opt/build/lib")
    shown = run(["readelf", "-d", str(ext)]).stdout
    assert "Library runpath: [/opt/build/lib]" in shown and "Shared library: [libdep.so.1]" in shown
    whl = make_wheel(tmp_path / "w", "demo", "1.0", TAG, {"demo/_ext.so": ext, "demo.libs/libdep.so.1": dep})
    (w,) = check_paths([whl], system_path=[]).wheels
    (f,) = _of(w, "missing-library")
    assert (f.severity, f.library, f.cause) == ("error", "demo/_ext.so",
                                               "needs libdep.so.1, shipped but not on its RUNPATH")
    assert f.message == (
        "demo/_ext.so needs libdep.so.1, which the wheel ships at demo.libs/libdep.so.1, but its RUNPATH "
        "(/opt/build/lib) has no $ORIGIN entry reaching it: the loader finds it only on a system path; "
        "fix: add $ORIGIN/../demo.libs to the RUNPATH of demo/_ext.so "
        "(-Wl,-rpath,'$ORIGIN/../demo.libs' or patchelf --add-rpath '$ORIGIN/../demo.libs')")
    assert "does not ship" not in f.message
    # the fix it names works: with that RUNPATH the wheel's copy is found
    fixed = compile_shared(tmp_path / "fix", "_ext.so", src, libs=[dep], runpath="$ORIGIN/../demo.libs")
    files = {"demo/_ext.so": fixed, "demo.libs/libdep.so.1": dep}
    whl = make_wheel(tmp_path / "w2", "demo", "1.0", TAG, files)
    (w,) = check_paths([whl], system_path=[]).wheels
    assert _of(w, "missing-library") == []


def test_an_rpath_into_another_folder_of_a_dependency_is_named_with_its_needer(tmp_path: Path) -> None:
    # _ext.so -> libmid.so (found: RUNPATH $ORIGIN) -> libleaf.so, which the wheel ships in
    # demo/lib/, but libmid.so's DT_RPATH says $ORIGIN/other
    leaf = compile_shared(tmp_path / "leaf", "libleaf.so", 'extern "C" int leaf() { return 1; }\n')
    mid = compile_shared(tmp_path / "mid", "libmid.so", 'extern "C" int leaf();\nextern "C" int mid() '
                         "{ return leaf(); }\n", libs=[leaf], rpath="$ORIGIN/other")
    assert "Library rpath: [$ORIGIN/other]" in run(["readelf", "-d", str(mid)]).stdout
    ext = compile_shared(tmp_path / "ext", "_ext.so", 'extern "C" int mid();\nextern "C" int f() '
                         "{ return mid(); }\n", libs=[mid], runpath="$ORIGIN")
    files = {"demo/_ext.so": ext, "demo/libmid.so": mid, "demo/lib/libleaf.so": leaf}
    (w,) = check_paths([make_wheel(tmp_path / "w", "demo", "1.0", TAG, files)], system_path=[]).wheels
    messages = sorted(f.message for f in _of(w, "missing-library"))
    assert messages == [
        "demo/_ext.so needs libleaf.so (needed by demo/libmid.so), which the wheel ships at "
        "demo/lib/libleaf.so, but demo/libmid.so's RPATH ($ORIGIN/other) has no $ORIGIN entry reaching "
        "it: the loader finds it only on a system path; fix: add $ORIGIN/lib to the RUNPATH of "
        "demo/libmid.so (-Wl,-rpath,'$ORIGIN/lib' or patchelf --add-rpath '$ORIGIN/lib')",
        "demo/libmid.so needs libleaf.so, which the wheel ships at demo/lib/libleaf.so, but its RPATH "
        "($ORIGIN/other) has no $ORIGIN entry reaching it: the loader finds it only on a system path; "
        "fix: add $ORIGIN/lib to the RUNPATH of demo/libmid.so "
        "(-Wl,-rpath,'$ORIGIN/lib' or patchelf --add-rpath '$ORIGIN/lib')",
    ]


# --- runtime compilation (libhiprtc) -----------------------------------------------------


def test_a_hiprtc_library_without_code_objects_compiles_at_run_time(tmp_path: Path) -> None:
    rtc = compile_shared(tmp_path / "rtc", "libhiprtc.so.6", 'extern "C" int hiprtcCreateProgram() '
                         "{ return 0; }\n")
    src = 'extern "C" int hiprtcCreateProgram();\nextern "C" int f() { return hiprtcCreateProgram(); }\n'
    lib = compile_shared(tmp_path / "lib", "libjit.so", src, libs=[rtc])
    assert "Shared library: [libhiprtc.so.6]" in run(["readelf", "-d", str(lib)]).stdout
    assert ".hip_fatbin" not in run(["readelf", "-S", "-W", str(lib)]).stdout  # no device code
    whl = make_wheel(tmp_path / "w", "demo", "1.0", TAG, {"demo/libjit.so": lib})
    (w,) = check_paths([whl], targets=[parse_target("gfx90a")], with_paths=[rtc], system_path=[]).wheels
    assert [(f.severity, f.library, f.message) for f in _of(w, "gpu-targets")] == [
        ("info", "demo/libjit.so", "demo/libjit.so compiles its kernels at run time (libhiprtc): it carries "
         "no code object, so no target can be checked")]
    assert not any("hipErrorNoBinaryForGpu" in f.message for f in w.findings)
    # the same library without libhiprtc has no GPU code for gfx90a: an error, as before
    plain = compile_shared(tmp_path / "plain", "libjit.so", 'extern "C" int f() { return 0; }\n')
    whl = make_wheel(tmp_path / "w2", "demo", "1.0", TAG, {"demo/libjit.so": plain})
    (w,) = check_paths([whl], targets=[parse_target("gfx90a")], system_path=[]).wheels
    assert [(f.severity, "hipErrorNoBinaryForGpu" in f.message) for f in _of(w, "gpu-targets")] == [
        ("error", True)]


# --- "import would fail" only for imports ------------------------------------------------


def test_import_would_fail_is_said_only_of_extension_modules_and_what_they_load(tmp_path: Path) -> None:
    src_mid = 'extern "C" int gone_a();\nextern "C" int mid() { return gone_a(); }\n'
    mid = compile_shared(tmp_path / "mid", "libmid.so", src_mid)
    ext = compile_shared(tmp_path / "ext", "_ext.so", 'extern "C" int mid();\nextern "C" void* '
                         "PyInit__ext() { return (void*)(long)mid(); }\n", libs=[mid], runpath="$ORIGIN")
    # a SQLite extension the wheel ships, which no extension module loads
    sql = compile_shared(tmp_path / "sql", "libsqlext.so", 'extern "C" int gone_b();\nextern "C" int '
                         "sqlite3_extension_init() { return gone_b(); }\n")
    dyn = {p.name: run(["nm", "-D", "--defined-only", str(p)]).stdout for p in (ext, mid, sql)}
    assert "PyInit__ext" in dyn["_ext.so"] and "PyInit" not in dyn["libmid.so"] + dyn["libsqlext.so"]
    files = {"demo/_ext.so": ext, "demo/libmid.so": mid, "demo/libsqlext.so": sql}
    (w,) = check_paths([make_wheel(tmp_path / "w", "demo", "1.0", TAG, files)], system_path=[]).wheels
    # neither libmid.so nor libsqlext.so has a DT_NEEDED (readelf -d; g++ links --as-needed)
    assert not any("(NEEDED)" in run(["readelf", "-d", str(p)]).stdout for p in (mid, sql))
    got = {f.library: f.message for f in _of(w, "undefined-symbol")}
    assert got == {
        "demo/libmid.so": "import would fail: 1 undefined symbol in demo/libmid.so (it loads no library "
                          "that could define it): gone_a",
        "demo/libsqlext.so": "loading demo/libsqlext.so would fail: 1 undefined symbol (it loads no "
                             "library that could define it): gone_b",
    }


def test_a_missing_version_outside_an_import_says_loading_fails(tmp_path: Path) -> None:
    v2 = tmp_path / "v2.map"
    v2.write_text("V_1 { global: old; local: *; };\nV_2 { global: new; } V_1;\n")
    v1 = tmp_path / "v1.map"
    v1.write_text("V_1 { global: old; local: *; };\n")
    new = compile_shared(tmp_path / "new", "libv.so", "int old(void){return 1;}\nint new(void){return 2;}\n",
                         lang="c", flags=[f"-Wl,--version-script={v2}"])
    old = compile_shared(tmp_path / "old", "libv.so", "int old(void){return 1;}\n", lang="c",
                         flags=[f"-Wl,--version-script={v1}"])
    plugin = compile_shared(tmp_path / "p", "libplugin.so", "int new(void);\nint p(void){return new();}\n",
                            lang="c", libs=[new], runpath="$ORIGIN")
    assert "V_2" in run(["readelf", "-V", "-W", str(plugin)]).stdout  # it needs V_2 of libv.so
    files = {"demo/libplugin.so": plugin, "demo/libv.so": old}
    (w,) = check_paths([make_wheel(tmp_path / "w", "demo", "1.0", TAG, files)], system_path=[]).wheels
    assert [f.message for f in _of(w, "symbol-version")] == [
        "loading demo/libplugin.so would fail: version `V_2' not found in libv.so (demo/libv.so provides "
        "up to V_1)"]


# --- mislabelled bundle entries ------------------------------------------------------------

# EF_AMDGPU_MACH values (LLVM BinaryFormat/ELF.h), not the toolkit's table
MACH = {"gfx90a": 0x3F, "gfx1030": 0x36, "gfx1031": 0x37}
EF_AMDGPU_FEATURE_XNACK_ANY_V4, EF_AMDGPU_FEATURE_SRAMECC_ANY_V4 = 0x100, 0x400


def code_object(processor: str) -> bytes:
    """A code object v4 ELF header (no sections) for ``processor``, padded to 4 KiB."""
    ident = b"\x7fELF" + bytes([2, 1, 1, 64, 2]) + b"\0" * 7  # ELF64 LSB, OS ABI AMDGPU_HSA, v4
    flags = MACH[processor] | EF_AMDGPU_FEATURE_XNACK_ANY_V4 | EF_AMDGPU_FEATURE_SRAMECC_ANY_V4
    header = ident + struct.pack("<HHIQQQIHHHHHH", 3, EM_AMDGPU, 1, 0, 0, 0, flags, 64, 0, 0, 64, 0, 0)
    return header + bytes(4096 - len(header))


def fatbin_library(dest: Path, blob: bytes) -> Path:
    """A g++-built host library with ``blob`` as its .hip_fatbin section."""
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "b.bin").write_bytes(blob)
    src = (f'asm(".section .hip_fatbin,\\"a\\"\\n.balign 4096\\n.incbin \\"{dest / "b.bin"}\\"\\n'
           '.previous\\n");\nextern "C" int f() { return 1; }\n')
    return compile_shared(dest, "libfat.so", src)


def _readobj_mach(blob: bytes, tmp: Path) -> str:
    path = tmp / "co.o"
    path.write_bytes(blob)
    out = run([llvm_tool("llvm-readobj"), "-h", str(path)]).stdout
    return next(w for w in out.split() if w.startswith("EF_AMDGPU_MACH_AMDGCN_")).removeprefix(
        "EF_AMDGPU_MACH_AMDGCN_").lower()


MISLABEL = ("demo/libfat.so: an offload bundle entry labelled gfx1030 holds a code object whose ELF header "
            "(e_flags) says gfx1031: the HIP runtime picks it for gfx1030, where the loader refuses gfx1031 "
            "code, and never for gfx1031; it counts for neither")


@pytest.mark.parametrize("stored", ["plain", "zstd v3", "zlib v2", "zlib v1", "rodata"])
def test_a_bundle_entry_whose_code_object_names_another_processor_is_an_error(
    tmp_path: Path, stored: str
) -> None:
    assert _readobj_mach(code_object("gfx1031"), tmp_path) == "gfx1031"
    assert _readobj_mach(code_object("gfx90a"), tmp_path) == "gfx90a"
    bundle = make_bundle([("host-x86_64-unknown-linux-gnu", b""),
                          ("hipv4-amdgcn-amd-amdhsa--gfx90a", code_object("gfx90a")),
                          ("hipv4-amdgcn-amd-amdhsa--gfx1030", code_object("gfx1031"))])
    if stored == "rodata":  # found by its magic in another section
        lib = embed_in_rodata(tmp_path / "lib", "libfat.so", [bundle])
    else:
        method, _, version = stored.partition(" v")
        blob = bundle if stored == "plain" else compress_bundle(bundle, method, int(version))
        lib = fatbin_library(tmp_path / "lib", blob)
        assert section(lib, ".hip_fatbin")[1] >= len(blob)
    whl = make_wheel(tmp_path / "w", "demo", "1.0", TAG, {"demo/libfat.so": lib})
    targets = [parse_target(t) for t in ("gfx90a", "gfx1030", "gfx1031")]
    (w,) = check_paths([whl], targets=targets, system_path=[]).wheels
    (mislabel,) = [f for f in _of(w, "gpu-targets") if "labelled" in f.message]
    assert (mislabel.severity, mislabel.library, mislabel.cause) == (
        "error", "demo/libfat.so", "bundle entry labelled gfx1030 holds gfx1031 code")
    assert mislabel.message == MISLABEL
    (lib_result,) = w.libraries
    # counted for neither its label nor its real processor; the well-labelled entry counts
    assert lib_result.gpu_targets == ["gfx90a"] and list(w.gpu) == ["gfx90a"]
    missing = sorted(f.cause or "" for f in _of(w, "gpu-targets") if f is not mislabel)
    assert missing == ["no code object for gfx1030", "no code object for gfx1031"]


def test_a_well_labelled_bundle_has_no_mislabel_finding(tmp_path: Path) -> None:
    bundle = make_bundle([("hipv4-amdgcn-amd-amdhsa--gfx1031", code_object("gfx1031")),
                          ("hipv4-amdgcn-amd-amdhsa--gfx1030", code_object("gfx1030"))])
    lib = fatbin_library(tmp_path / "lib", compress_bundle(bundle, "zstd", 3))
    whl = make_wheel(tmp_path / "w", "demo", "1.0", TAG, {"demo/libfat.so": lib})
    targets = [parse_target("gfx1030"), parse_target("gfx1031")]
    (w,) = check_paths([whl], targets=targets, system_path=[]).wheels
    assert _of(w, "gpu-targets") == [] and w.libraries[0].gpu_targets == ["gfx1030", "gfx1031"]
