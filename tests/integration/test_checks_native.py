"""`toolkit check` on real libraries built with g++ at test time, packed into real wheels."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.fixtures.native import NEW_GLIBCXX_SOURCE, compile_shared, objdump_max_versions
from tests.fixtures.wheels import make_wheel
from toolkit.core.proc import run
from toolkit.inspect.checks import check_paths
from toolkit.inspect.report import Report

pytestmark = pytest.mark.integration
TAG = "cp311-cp311-manylinux_2_28_x86_64"

BASE = "namespace demo { int base_value() { return 42; } }\n"
USER = (
    'namespace demo { int base_value(); }\nextern "C" int user_value() { return demo::base_value() + 1; }\n'
)
UNDEF = (
    'namespace demo { void missing_helper(int); }\nextern "C" void call_it() { demo::missing_helper(3); }\n'
)
PLAIN = "int plain(int x) { return x * 2; }\n"


@pytest.fixture(scope="session")
def libs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("native")
    base = compile_shared(d / "base", "libbase.so", BASE)
    return {
        "new": compile_shared(d / "new", "libnew.so", NEW_GLIBCXX_SOURCE),
        "undef": compile_shared(d / "undef", "libundef.so", UNDEF),
        "plain": compile_shared(d / "plain", "libplain.so", PLAIN, lang="c"),
        "base": base,
        "user_origin": compile_shared(d / "u1", "libuser.so", USER, libs=[base], runpath="$ORIGIN"),
        "user_sub": compile_shared(d / "u2", "libuser.so", USER, libs=[base], runpath="$ORIGIN/lib"),
        "user_rpath": compile_shared(d / "u3", "libuser.so", USER, libs=[base], rpath="$ORIGIN"),
        "user_none": compile_shared(d / "u4", "libuser.so", USER, libs=[base]),
        "user_abs": compile_shared(d / "u5", "libuser.so", USER, libs=[base], runpath="/tmp/build/lib"),
    }


def errors(report: Report, check: str | None = None) -> list[str]:
    return [f.message for f in report.findings if f.severity == "error" and check in (None, f.check)]


def test_new_glibcxx_library_cannot_claim_manylinux_2_28(tmp_path: Path, libs: dict[str, Path]) -> None:
    assert objdump_max_versions(libs["new"])["GLIBCXX"] >= "3.4.29"
    whl = make_wheel(tmp_path, "demo", "1.0", TAG, {"demo/_new.so": libs["new"]})
    r = check_paths([whl])
    (msg,) = errors(r, "policy")
    assert "demo/_new.so needs GLIBCXX_3.4.29 (from libstdc++.so.6)" in msg
    assert "manylinux_2_28 (claimed by the platform tag)" in msg and "GLIBCXX_3.4.24" in msg
    (lib,) = r.wheels[0].libraries
    assert lib.max_versions["GLIBCXX"] == objdump_max_versions(libs["new"])["GLIBCXX"]
    assert lib.policy not in {"manylinux_2_28", "manylinux_2_17", None}
    assert r.wheels[0].policy == lib.policy
    # the same library in a wheel that claims nothing is fine, unless --policy asks for it
    linux_tag = "cp311-cp311-linux_x86_64"
    linux = make_wheel(tmp_path / "l", "demo", "1.0", linux_tag, {"demo/_new.so": libs["new"]})
    assert check_paths([linux]).ok
    assert "required by --policy" in errors(check_paths([linux], policy="manylinux_2_28"), "policy")[0]
    # --policy naming the very policy the tag claims still checks it (it once checked neither)
    (msg,) = errors(check_paths([whl], policy="manylinux_2_28"), "policy")
    assert "manylinux_2_28 (required by --policy)" in msg and "GLIBCXX_3.4.29" in msg
    assert check_paths([libs["new"].parent], policy="manylinux_2_35").ok
    assert not check_paths([libs["new"].parent], policy="manylinux2014").ok


def test_max_versions_match_objdump(libs: dict[str, Path]) -> None:
    for key in ("new", "undef", "plain", "base"):
        r = check_paths([libs[key]])
        (lib,) = r.wheels[0].libraries
        assert lib.max_versions == objdump_max_versions(libs[key]), key


def test_undefined_symbol_is_reported_demangled(tmp_path: Path, libs: dict[str, Path]) -> None:
    files = {"demo/_undef.so": libs["undef"], "demo/_ok.so": libs["plain"]}
    whl = make_wheel(tmp_path, "demo", "1.0", TAG, files)
    r = check_paths([whl])
    # the library has no DT_NEEDED at all (readelf -d shows none); it exports no PyInit_
    # (nm -D), so it is no extension module: loading it fails, not an import
    assert errors(r, "undefined-symbol") == [
        "loading demo/_undef.so would fail: 1 undefined symbol (it loads no library that could "
        "define it): demo::missing_helper(int) (_ZN4demo14missing_helperEi)"
    ]
    undef = {lib.path: lib.unresolved for lib in r.wheels[0].libraries}
    assert undef["demo/_ok.so"] == [] and undef["demo/_undef.so"][0]["symbol"] == "_ZN4demo14missing_helperEi"


@pytest.mark.parametrize(
    ("user", "base_at"),
    [
        ("user_origin", "demo/libbase.so"),
        ("user_sub", "demo/lib/libbase.so"),
        ("user_rpath", "demo/libbase.so"),
    ],
)
def test_libraries_resolve_each_other_through_origin(
    tmp_path: Path, libs: dict[str, Path], user: str, base_at: str
) -> None:
    whl = make_wheel(tmp_path, "demo", "1.0", TAG, {"demo/_user.so": libs[user], base_at: libs["base"]})
    r = check_paths([whl])
    assert r.ok, errors(r)


def test_without_runpath_the_sibling_is_not_found(tmp_path: Path, libs: dict[str, Path]) -> None:
    files = {"demo/_user.so": libs["user_none"], "demo/libbase.so": libs["base"]}
    whl = make_wheel(tmp_path, "demo", "1.0", TAG, files)
    r = check_paths([whl])
    # the wheel ships it, but _user.so has no RUNPATH/RPATH (readelf -d): the loader looks there
    # only when told to
    assert "RUNPATH" not in run(["readelf", "-d", str(libs["user_none"])]).stdout
    assert errors(r) == [
        "demo/_user.so needs libbase.so, which the wheel ships at demo/libbase.so, but it has no "
        "RUNPATH or RPATH: the loader finds it only on a system path; fix: add $ORIGIN to the RUNPATH "
        "of demo/_user.so (-Wl,-rpath,'$ORIGIN' or patchelf --add-rpath '$ORIGIN')"
    ]
    # found when it is provided like torch's libraries are: already loaded, via --with
    assert check_paths([whl], with_paths=[libs["base"].parent]).ok
    assert check_paths([whl], with_paths=[libs["base"]]).ok
    other = make_wheel(tmp_path / "o", "base", "1.0", TAG, {"base/libbase.so": libs["base"]})
    assert check_paths([whl], with_paths=[other]).ok
    # the same set checked as a folder (real $ORIGIN semantics on disk)
    d = tmp_path / "dir"
    d.mkdir()
    (d / "libuser.so").write_bytes(libs["user_origin"].read_bytes())
    (d / "libbase.so").write_bytes(libs["base"].read_bytes())
    assert check_paths([d]).ok
    (d / "libbase.so").unlink()
    assert "needs libbase.so, which the wheel does not ship" in errors(check_paths([d]))[0]


def test_wrong_definition_is_an_undefined_symbol(tmp_path: Path, libs: dict[str, Path]) -> None:
    # a libbase.so that does not define demo::base_value(): resolution must look at symbols
    files = {"demo/_user.so": libs["user_origin"], "demo/libbase.so": libs["plain"]}
    whl = make_wheel(tmp_path, "demo", "1.0", TAG, files)
    assert "demo::base_value()" in errors(check_paths([whl]), "undefined-symbol")[0]


def test_absolute_runpath_is_flagged(tmp_path: Path, libs: dict[str, Path]) -> None:
    whl = make_wheel(tmp_path, "demo", "1.0", TAG, {"demo/_user.so": libs["user_abs"]})
    msgs = errors(check_paths([whl], with_paths=[libs["base"].parent]), "rpath")
    assert msgs and "RUNPATH '/tmp/build/lib'" in msgs[0]


def test_required_symbols(tmp_path: Path, libs: dict[str, Path]) -> None:
    files = {"demo/_user.so": libs["user_origin"], "demo/libbase.so": libs["base"]}
    whl = make_wheel(tmp_path, "demo", "1.0", TAG, files)
    assert check_paths([whl], required_symbols=["demo::base_value", "user_value"]).ok
    r = check_paths([whl], required_symbols=["demo::base_val", "demo::user_value"])
    assert len(errors(r, "required-symbol")) == 2


def test_cli_json_and_exit_codes(tmp_path: Path, libs: dict[str, Path]) -> None:
    whl = make_wheel(tmp_path, "demo", "1.0", TAG, {"demo/_new.so": libs["new"]})
    proc = run([sys.executable, "-m", "toolkit", "check", str(whl), "--json"], check=False)
    assert proc.returncode == 1, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["ok"] is False
    (f,) = [f for f in doc["wheels"][0]["findings"] if f["check"] == "policy"]
    assert f["severity"] == "error" and f["library"] == "demo/_new.so"
    proc = run([sys.executable, "-m", "toolkit", "check", str(libs["plain"].parent)], check=False)
    assert proc.returncode == 0 and "libplain.so" in proc.stdout


def test_symbol_versions_must_exist_in_the_provider(tmp_path: Path) -> None:
    """A library linked against VERS_2.0 of libver.so fails next to a libver.so with VERS_1.0 only."""
    v2 = tmp_path / "v2.map"
    v2.write_text("VERS_1.0 { global: foo_old; local: *; };\nVERS_2.0 { global: foo; } VERS_1.0;\n")
    v1 = tmp_path / "v1.map"
    v1.write_text("VERS_1.0 { global: foo_old; local: *; };\n")
    both = "int foo(void){return 2;}\nint foo_old(void){return 1;}\n"
    new = compile_shared(tmp_path / "new", "libver.so", both, lang="c", flags=[f"-Wl,--version-script={v2}"])
    old = compile_shared(
        tmp_path / "old",
        "libver.so",
        "int foo_old(void){return 1;}\n",
        lang="c",
        flags=[f"-Wl,--version-script={v1}"],
    )
    user = compile_shared(
        tmp_path / "user",
        "libuser.so",
        "int foo(void);\nint bar(void){return foo();}\n",
        lang="c",
        libs=[new],
        runpath="$ORIGIN",
    )
    good = make_wheel(tmp_path / "g", "demo", "1.0", TAG, {"demo/_user.so": user, "demo/libver.so": new})
    assert check_paths([good]).ok
    bad = make_wheel(tmp_path / "b", "demo", "1.0", TAG, {"demo/_user.so": user, "demo/libver.so": old})
    r = check_paths([bad])
    # _user.so exports no PyInit_ (nm -D): no extension module, so loading it fails
    assert errors(r) == [
        "loading demo/_user.so would fail: version `VERS_2.0' not found in libver.so "
        "(demo/libver.so provides up to VERS_1.0)"
    ]
