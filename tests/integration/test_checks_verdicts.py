"""Verdicts that do not depend on the checking machine (issue 19): every DT_NEEDED accounted
for, symbols the interpreter provides, foreign ELF refused, the report's last line."""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures.handmade_elf import EM_PPC, EM_X86_64, shared_object
from tests.fixtures.native import compile_shared, compiler
from tests.fixtures.wheels import make_wheel
from toolkit.cli.commands.check import lines
from toolkit.core.proc import run
from toolkit.inspect.checks import check_paths
from toolkit.inspect.report import Report

pytestmark = pytest.mark.integration
LINUX = "cp311-cp311-linux_x86_64"
ML28 = "cp311-cp311-manylinux_2_28_x86_64"

NUMA = 'extern "C" int numa_available() { return 1; }\n'
HIP = 'extern "C" int hipGetDeviceCount(int* n) { *n = 0; return 0; }\n'
EXT = (
    'extern "C" int numa_available();\nextern "C" int hipGetDeviceCount(int*);\n'
    'extern "C" int use_both() { int n; hipGetDeviceCount(&n); return numa_available() + n; }\n'
)


def verdict(r: Report) -> list[tuple[str, str, str, str]]:
    return sorted((f.check, f.severity, f.cause or "", f.library or "") for f in r.findings)


@pytest.fixture(scope="module")
def developer(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """An extension needing libnuma.so.1 (no policy allows it) and libamdhip64.so.7 (ROCm),
    neither shipped; a "host" folder holding both, as a machine with them installed has."""
    d = tmp_path_factory.mktemp("dev")
    host = d / "host"
    numa = compile_shared(host, "libnuma.so.1", NUMA)
    hip = compile_shared(host, "libamdhip64.so.7", HIP)
    ext = compile_shared(d / "ext", "_ext.so", EXT, libs=[numa, hip])
    whl = make_wheel(d / "w", "demo", "1.0", LINUX, {"demo/_ext.so": ext})
    req = make_wheel(d / "r", "demo", "1.0", LINUX, {"demo/_ext.so": ext}, requires=["torch>=2.4"])
    return {"host": host, "wheel": whl, "requires": req, "numa": numa}


def test_same_verdict_with_an_empty_system_path_and_with_one_holding_the_libraries(
    developer: dict[str, Path],
) -> None:
    empty = check_paths([developer["wheel"]], system_path=())
    hosted = check_paths([developer["wheel"]], system_path=[str(developer["host"])])
    this_machine = check_paths([developer["wheel"]])  # the real ld.so path of this machine
    assert verdict(empty) == verdict(hosted) == verdict(this_machine)
    assert not empty.ok and not hosted.ok
    (err,) = [f for f in hosted.findings if f.severity == "error"]
    assert err.check == "missing-library" and "libnuma.so.1" in err.message
    where = developer["host"] / "libnuma.so.1"
    assert f"this machine has it at {where}, which is not an input" in err.message
    assert "auditwheel repair" in err.message and "--with DIR|WHEEL" in err.message
    assert "--exclude libnuma.so.1" in err.message
    (warn,) = [f for f in empty.findings if f.check == "missing-library" and f.severity == "warning"]
    assert "libamdhip64.so.7" in warn.message and "provided by rocm-sdk" in warn.message
    assert "verify with --with" in warn.message and "this machine" not in warn.message


def test_declared_providers_and_exclude_account_for_the_library(developer: dict[str, Path]) -> None:
    whl = developer["wheel"]
    assert check_paths([whl], with_paths=[developer["host"]]).ok
    assert check_paths([whl], with_paths=[developer["numa"]]).ok  # only hip left: a warning
    excluded = check_paths([whl], excludes=["libnuma*"], system_path=())
    assert excluded.ok
    assert any(f.severity == "info" and "excluded" in f.message for f in excluded.findings)
    assert not check_paths([whl], excludes=["libnum"], system_path=()).ok  # a glob, not a prefix


def test_the_cli_exclude_option(developer: dict[str, Path]) -> None:
    def code(*extra: str) -> int:
        cmd = [sys.executable, "-m", "toolkit", "check", str(developer["wheel"]), *extra]
        return subprocess.run(cmd, capture_output=True, check=False).returncode

    assert code() == 1
    assert code("--exclude", "libnuma.so.*") == 0
    assert code("--exclude", "libfoo*", "--exclude", "libnuma.so.1") == 0


def test_requires_dist_names_the_provider(developer: dict[str, Path]) -> None:
    r = check_paths([developer["requires"]], system_path=())
    assert r.wheels[0].requires == ["torch"]
    (warn,) = [f for f in r.findings if f.severity == "warning" and f.check == "missing-library"]
    assert "libamdhip64.so.7" in warn.message


def test_a_requires_dist_package_named_after_the_library_provides_it(developer: dict[str, Path],
                                                                      tmp_path: Path) -> None:
    ext = developer["wheel"]
    import zipfile

    with zipfile.ZipFile(ext) as zf:
        data = zf.read("demo/_ext.so")
    whl = make_wheel(tmp_path, "demo", "1.0", LINUX, {"demo/_ext.so": data}, requires=["numa>=2"])
    r = check_paths([whl], system_path=())
    assert r.ok
    (numa,) = [f for f in r.findings if "libnuma.so.1" in f.message]
    assert numa.severity == "warning" and "Requires-Dist: numa" in numa.message
    other = make_wheel(tmp_path / "o", "demo", "1.0", LINUX, {"demo/_ext.so": data}, requires=["numactl"])
    assert not check_paths([other], system_path=()).ok  # only the library's own name counts


def test_policy_libraries_need_no_file_but_an_older_policy_list_is_judged(tmp_path: Path) -> None:
    # libexpat.so.1 is in auditwheel's manylinux2014 list but not in manylinux1's (manylinux_2_5)
    expat = compile_shared(tmp_path / "h", "libexpat.so.1", 'extern "C" int XML_f() { return 0; }\n')
    ext = compile_shared(tmp_path / "e", "_x.so", 'extern "C" int XML_f();\nint g() { return XML_f(); }\n',
                         libs=[expat])
    whl = make_wheel(tmp_path / "w", "demo", "1.0", ML28, {"demo/_x.so": ext})
    assert check_paths([whl], system_path=()).ok
    old = check_paths([whl], policy="manylinux_2_5", system_path=())
    (msg,) = [f.message for f in old.findings if f.check == "missing-library" and f.severity == "error"]
    assert "libexpat.so.1" in msg and "manylinux_2_5 does not allow" in msg


LIBM_EXT = (
    "#include <Python.h>\n"  # not needed: the module only has to export PyInit_<name>
    if False else
    "double erfc(double);\ndouble exp(double);\n"
    "double f(double x) { return erfc(x) + exp(x); }\n"
    "void* PyInit__m(void) { return 0; }\n"
)


def test_libm_symbols_of_an_extension_module_are_the_interpreters(tmp_path: Path) -> None:
    src_dir = tmp_path / "m"
    ext = compile_shared(src_dir, "_m.so", LIBM_EXT, lang="c", flags=["-fno-builtin"])
    assert "libm" not in run(["readelf", "-d", str(ext)]).stdout  # links libc only
    ctypes.CDLL(str(ext), mode=os.RTLD_NOW)  # the truth: this process (python) loads it
    whl = make_wheel(tmp_path / "w", "demo", "1.0", ML28, {"demo/_m.so": ext})
    r = check_paths([whl], system_path=())
    assert r.ok, [f.message for f in r.findings]
    (note,) = [f for f in r.findings if f.check == "interpreter-symbols"]
    assert note.severity == "info" and "erfc" in note.message and "-lm" in note.message
    # the same library without PyInit_ is not an extension module: nothing provides them
    plain = compile_shared(tmp_path / "p", "libp.so", LIBM_EXT.replace("PyInit__m", "init_m"),
                           lang="c", flags=["-fno-builtin"])
    r2 = check_paths([make_wheel(tmp_path / "w2", "demo", "1.0", ML28, {"demo/libp.so": plain})],
                     system_path=())
    (err,) = [f for f in r2.findings if f.check == "undefined-symbol"]
    assert err.severity == "error" and set(err.symbols) == {"erfc", "exp"}


def _i386(tmp_path: Path, name: str) -> Path:
    """A real 32-bit i386 shared object (gcc -m32 -c, then ld -m elf_i386)."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    src = tmp_path / "f.c"
    src.write_text("int f(void) { return 1; }\n")
    obj, out = tmp_path / "f.o", tmp_path / name
    try:
        run([compiler("gcc"), "-m32", "-fPIC", "-c", str(src), "-o", str(obj)])
        ld = shutil.which("ld") or "ld"
        run([ld, "-m", "elf_i386", "-shared", "-soname", name, "-o", str(out), str(obj)])
    except Exception as err:
        pytest.skip(f"cannot build i386 objects here: {err}")
    return out


def test_i386_and_big_endian_powerpc_in_an_x86_64_wheel_are_errors(tmp_path: Path) -> None:
    i386 = _i386(tmp_path, "_i.so")
    ppc = tmp_path / "_p.so"
    ppc.write_bytes(shared_object(32, False, EM_PPC, needed=["libc.so.6"], soname="_p.so"))
    header = run(["readelf", "-h", str(i386), str(ppc)]).stdout
    assert "ELF32" in header and "Intel 80386" in header and "big endian" in header and "PowerPC" in header
    whl = make_wheel(tmp_path / "w", "demo", "1.0", LINUX, {"demo/_i.so": i386, "demo/_p.so": ppc})
    r = check_paths([whl], system_path=())
    assert not r.ok
    bad = {f.library: f for f in r.findings if f.check == "elf-machine"}
    assert set(bad) == {"demo/_i.so", "demo/_p.so"}
    assert all(f.severity == "error" for f in bad.values())
    assert "32-bit little-endian i386" in bad["demo/_i.so"].message
    assert "32-bit big-endian PowerPC" in bad["demo/_p.so"].message
    assert "64-bit little-endian x86-64" in bad["demo/_p.so"].message
    # the same 64-bit little-endian x86-64 shape passes that rule
    good = tmp_path / "_g.so"
    good.write_bytes(shared_object(64, True, EM_X86_64, needed=["libc.so.6"], soname="_g.so"))
    w2 = make_wheel(tmp_path / "w2", "demo", "1.0", LINUX, {"demo/_g.so": good})
    r2 = check_paths([w2], system_path=())
    assert not [f for f in r2.findings if f.check == "elf-machine"]


def test_a_foreign_library_never_satisfies_a_dependency(tmp_path: Path) -> None:
    dep = _i386(tmp_path / "d", "libdep.so")
    user = compile_shared(tmp_path / "u", "_u.so", 'extern "C" int f(); int g() { return f(); }\n',
                          libs=[compile_shared(tmp_path / "s", "libdep.so",
                                               'extern "C" int f() { return 2; }\n')],
                          runpath="$ORIGIN")
    whl = make_wheel(tmp_path / "w", "demo", "1.0", LINUX, {"demo/_u.so": user, "demo/libdep.so": dep})
    r = check_paths([whl], system_path=())
    missing = [f for f in r.findings if f.check == "missing-library"]
    assert [(f.severity, f.library) for f in missing] == [("error", "demo/_u.so")]
    assert "libdep.so" in missing[0].message
    assert check_paths([whl], with_paths=[tmp_path / "s"], system_path=()).findings  # i386 one still fails


def test_last_line_names_failed_checks_and_the_policy_verdict(developer: dict[str, Path]) -> None:
    r = check_paths([developer["wheel"]], system_path=())
    (w,) = r.wheels
    last = lines(w)[-1]
    assert last.startswith("  FAILED: missing-library 1  policy: ")
    assert last.endswith(" ok") and f"(set by {w.policy_library})" in last
    assert w.policy_library == "demo/_ext.so"
