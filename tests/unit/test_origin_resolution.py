"""$ORIGIN as ld.so(8) expands it: in a wheel, the member's folder (auditwheel's ``<pkg>.libs``
layout stays inside the wheel); for a ``--with`` library, the folder of the file given."""

from __future__ import annotations

from pathlib import Path

from tests.fixtures.native import compile_shared
from tests.fixtures.wheels import make_wheel
from toolkit.core.proc import run
from toolkit.inspect.checks import check_paths

TAG = "cp311-cp311-manylinux_2_28_x86_64"


def test_a_runpath_into_the_wheels_own_libs_folder_stays_inside(tmp_path: Path) -> None:
    # auditwheel repair's layout: the extension in demo/, its grafted libraries in demo.libs/,
    # found through RUNPATH $ORIGIN/../demo.libs
    dep = compile_shared(tmp_path / "dep", "libdep.so", 'extern "C" int dep() { return 1; }\n')
    src = 'extern "C" int dep();\nextern "C" int f() { return dep(); }\n'
    ext = compile_shared(tmp_path / "ext", "_ext.so", src, libs=[dep], runpath="$ORIGIN/../demo.libs")
    assert "Library runpath: [$ORIGIN/../demo.libs]" in run(["readelf", "-d", str(ext)]).stdout
    whl = make_wheel(tmp_path / "w", "demo", "1.0", TAG, {"demo/_ext.so": ext, "demo.libs/libdep.so": dep})
    (w,) = check_paths([whl]).wheels
    assert not [f for f in w.findings if f.check == "rpath"]
    # the same entry into a folder the wheel does not ship leaves it
    whl = make_wheel(tmp_path / "w2", "demo", "1.0", TAG, {"demo/_ext.so": ext, "other/libdep.so": dep})
    (w,) = check_paths([whl]).wheels
    assert [(f.check, f.severity) for f in w.findings if f.check == "rpath"] == [("rpath", "warning")]


def test_a_with_library_finds_its_own_dependencies_through_its_origin(tmp_path: Path) -> None:
    # --with torch/lib/libtorch.so: its own DT_NEEDED (libc10.so) is found as ld.so finds it,
    # through its RUNPATH $ORIGIN, i.e. the folder of the file given
    torch = tmp_path / "site" / "torch" / "lib"
    c10 = compile_shared(torch, "libc10.so", 'extern "C" int c10() { return 1; }\n')
    src = 'extern "C" int c10();\nextern "C" int t() { return c10(); }\n'
    libtorch = compile_shared(torch, "libtorch.so", src, libs=[c10], runpath="$ORIGIN")
    src = 'extern "C" int t();\nextern "C" int f() { return t(); }\n'
    ext = compile_shared(tmp_path / "ext", "_ext.so", src, libs=[libtorch])
    whl = make_wheel(tmp_path / "w", "demo", "1.0", TAG, {"demo/_ext.so": ext})
    (w,) = check_paths([whl], with_paths=[libtorch], system_path=[]).wheels
    assert not [f for f in w.findings if f.check in ("missing-library", "undefined-symbol")], w.findings
    (w,) = check_paths([whl], system_path=[]).wheels  # without --with: libtorch.so is missing
    assert [f.library for f in w.findings if f.check == "missing-library"] == ["demo/_ext.so"]
