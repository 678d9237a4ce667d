"""Policies judged host-independently on g++-built libraries; RPATH hygiene (issue 11)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fixtures.native import compile_shared, objdump_max_versions
from tests.fixtures.wheels import make_wheel
from toolkit.cli.main import main
from toolkit.core.proc import run
from toolkit.inspect.checks import check_paths

pytestmark = pytest.mark.integration

# std::condition_variable::wait(unique_lock&) moved to GLIBCXX_3.4.30 in GCC 12's libstdc++
GLIBCXX_330 = """
#include <condition_variable>
#include <mutex>
std::mutex m; std::condition_variable cv;
extern "C" void wait_once() { std::unique_lock<std::mutex> lock(m); cv.wait(lock); }
"""


def test_policy_equal_to_the_tag_is_still_judged(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lib = compile_shared(tmp_path / "n", "libnew.so", GLIBCXX_330, flags=["-pthread"])
    if objdump_max_versions(lib).get("GLIBCXX") != "3.4.30":
        pytest.skip("this g++'s libstdc++ does not put condition_variable::wait at GLIBCXX_3.4.30")
    whl = make_wheel(tmp_path, "demo", "1.0", "cp311-cp311-manylinux_2_28_x86_64", {"demo/_n.so": lib})
    assert main(["check", str(whl), "--policy", "manylinux_2_28", "--json"]) == 1
    out = capsys.readouterr().out
    assert '"check": "policy"' in out and "GLIBCXX_3.4.30" in out and "required by --policy" in out


def test_manylinux_2_32_needing_cxxabi_1_3_15_fails_on_any_host(tmp_path: Path) -> None:
    """A stub libstdc++.so.6 defines CXXABI_1.3.15 (GCC 14); the library links against it."""
    vmap = tmp_path / "stub.map"
    vmap.write_text("CXXABI_1.3.15 { global: __cxa_new_in_gcc14; };\n")
    stub = compile_shared(tmp_path / "stub", "libstdc++.so.6", "int __cxa_new_in_gcc14(void){return 0;}\n",
                          lang="c", flags=[f"-Wl,--version-script={vmap}"])  # fmt: skip
    user = compile_shared(tmp_path / "user", "libuser.so",
                          "int __cxa_new_in_gcc14(void);\nint g(void){return __cxa_new_in_gcc14();}\n",
                          lang="c", libs=[stub])  # fmt: skip
    assert "CXXABI_1.3.15" in run(["objdump", "-T", str(user)]).stdout
    tag = "cp311-cp311-manylinux_2_32_x86_64"
    whl = make_wheel(tmp_path, "demo", "1.0", tag, {"demo/_u.so": user})
    # --with the stub: the host's own libstdc++ plays no part, only the derived manylinux_2_32 policy
    r = check_paths([whl], with_paths=[stub.parent])
    policy = [f.message for f in r.findings if f.check in ("policy", "platform-tag")]
    assert policy and "CXXABI_1.3.15" in policy[0] and "manylinux_2_32" in policy[0]
    assert "CXXABI_1.3.13" in policy[0]  # what manylinux_2_32 allows (RHEL 9's GCC 11 runtime)
    r = check_paths([whl], policy="manylinux_2_32", with_paths=[stub.parent])
    assert any(f.check == "policy" and "required by --policy" in f.message for f in r.findings)


def test_empty_runpath_element_and_layouts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = "int f(void){return 1;}\n"
    lib = compile_shared(tmp_path / "e", "libe.so", src, lang="c", runpath="$ORIGIN:")
    assert "[$ORIGIN:]" in run(["readelf", "-d", str(lib)]).stdout
    r = check_paths([lib])
    (f,) = [f for f in r.findings if f.check == "rpath"]
    assert f.severity == "error" and "empty element" in f.message
    sdk = compile_shared(tmp_path / "s", "libs.so", src, lang="c",
                         runpath="$ORIGIN/../_rocm_sdk_core/lib:/opt/rocm/lib:/tmp/build/lib")  # fmt: skip
    files = {f"pkg/_m{i}.so": sdk for i in range(8)}
    whl = make_wheel(tmp_path, "pkg", "1.0", "cp311-cp311-linux_x86_64", files)
    r = check_paths([whl])
    rp = {f.message.split(" in ")[0]: f for f in r.findings if f.check == "rpath"}
    assert len(rp) == 3  # one finding per distinct entry, not per library
    assert rp["RUNPATH '$ORIGIN/../_rocm_sdk_core/lib'"].severity == "info"
    assert rp["RUNPATH '/opt/rocm/lib'"].severity == "info"
    assert rp["RUNPATH '/tmp/build/lib'"].severity == "error"
    assert all(len(f.libraries) == 8 for f in rp.values())
