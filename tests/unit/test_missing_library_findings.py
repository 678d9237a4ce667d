"""Each unprovided DT_NEEDED as a user reads it: excluded (``--exclude``, fnmatch patterns as
``auditwheel repair --exclude``), a package the wheel requires (Requires-Dist, PEP 503 names),
a known torch or ROCm soname (a warning), or an error naming the three fixes; the needing
library and this machine's copy are named when they differ from the input library / exist."""

from __future__ import annotations

import pytest

from toolkit.inspect.rules.needed import Missing, excluded, missing_findings, provider_of, stem

POLICY = "manylinux_2_28"


def _one(
    m: Missing, requires: tuple[str, ...] = (), excludes: tuple[str, ...] = ()
) -> tuple[str, str, str, str]:
    (f,) = missing_findings(m, policy=POLICY, requires=requires, excludes=excludes)
    assert f.check == "missing-library" and f.library == m.library
    return f.severity, f.cause or "", f.message, f.library or ""


def test_an_unprovided_library_is_an_error_naming_the_fixes() -> None:
    sev, cause, msg, _ = _one(Missing("libfoo.so.1", "demo/_ext.so", "demo/_ext.so"))
    assert (sev, cause) == ("error", "needs libfoo.so.1, not provided")
    assert msg == ("demo/_ext.so needs libfoo.so.1, which the wheel does not ship, manylinux_2_28 does "
                   "not allow (not in auditwheel's list of libraries every system has) and no --with "
                   "provides; fix: ship it (auditwheel repair), declare a provider (--with DIR|WHEEL) "
                   "or --exclude libfoo.so.1")
    _, _, via, _ = _one(Missing("libfoo.so.1", "demo/libdep.so", "demo/_ext.so", "/usr/lib/libfoo.so.1"))
    assert via.startswith("demo/_ext.so needs libfoo.so.1 (needed by demo/libdep.so), which")
    assert "provides; this machine has it at /usr/lib/libfoo.so.1, which is not an input; fix:" in via


def test_an_excluded_library_is_only_noted() -> None:
    sev, cause, msg, _ = _one(Missing("libcuda.so.1", "x.so", "x.so"), excludes=("libcu*",))
    assert (sev, cause, msg) == ("info", "needs libcuda.so.1, excluded",
                                 "x.so needs libcuda.so.1: excluded by --exclude, not checked")
    assert excluded("libcuda.so.1", ["libcuda.so.1"]) and excluded("libcuda.so.1", ["x", "*.so.1"])
    assert not excluded("libcuda.so.1", ["libcuda.so"]) and not excluded("libcuda.so.1", [])


def test_a_required_package_named_after_the_library_provides_it() -> None:
    sev, cause, msg, _ = _one(Missing("libtbb.so.12", "x.so", "x.so", "/usr/lib/libtbb.so.12"),
                              requires=("numpy", "tbb"))
    assert (sev, cause) == ("warning", "needs libtbb.so.12, provided by tbb")
    assert msg == ("x.so needs libtbb.so.12: provided by tbb (Requires-Dist: tbb; verify with --with tbb's "
                   "lib folder); its symbols were not checked; this machine has it at "
                   "/usr/lib/libtbb.so.12, which is not an input")
    assert _one(Missing("libfoo_bar.so", "x.so", "x.so"), requires=("foo-bar-runtime",))[1] == (
        "needs libfoo_bar.so, provided by foo-bar-runtime")
    assert _one(Missing("libtbb.so.12", "x.so", "x.so"), requires=("tbbx",))[0] == "error"


@pytest.mark.parametrize(("name", "requires", "owner", "why"), [
    ("libtorch_cpu.so", ("torch",), "torch", "Requires-Dist: torch"),
    ("libc10.so", (), "torch", "a known soname"),
    ("libamdhip64.so.6", ("rocm-sdk-core", "numpy"), "rocm-sdk", "Requires-Dist: rocm-sdk-core"),
    ("librocblas.so.4", ("rocm",), "rocm-sdk", "Requires-Dist: rocm"),
    ("libhipblaslt.so.0", (), "rocm-sdk", "a known soname"),
])
def test_torch_and_rocm_sonames_are_warnings(
    name: str, requires: tuple[str, ...], owner: str, why: str
) -> None:
    sev, cause, msg, _ = _one(Missing(name, "x.so", "x.so"), requires=requires)
    assert (sev, cause) == ("warning", f"needs {name}, provided by {owner}")
    assert msg == (f"x.so needs {name}: provided by {owner} ({why}; verify with --with {owner}'s lib "
                   "folder); its symbols were not checked")


def test_stems_and_providers() -> None:
    assert stem("libamdhip64.so.7") == "libamdhip64" and stem("libfoo.so") == "libfoo"
    assert stem("libfoo") == "libfoo"
    assert provider_of("libtorch.so") == "torch" and provider_of("libamd_comgr.so.2") == "rocm-sdk"
    assert provider_of("libtorchvision.so") is None and provider_of("libz.so.1") is None


def test_torch_and_rocm_sonames_are_attributed_to_their_package() -> None:
    from toolkit.inspect.rules.needed import Missing, missing_findings, provider_of

    assert [provider_of(n) for n in ("libc10.so", "libtorch_cpu.so", "libamdhip64.so.7", "libnuma.so.1")] == [
        "torch", "torch", "rocm-sdk", None]
    (f,) = missing_findings(Missing("libc10.so", "pkg/x.so", "pkg/x.so"), policy="manylinux_2_28",
                            requires=["torch"], excludes=())
    assert f.severity == "warning"
    assert "provided by torch (Requires-Dist: torch; verify with --with" in f.message
    (g,) = missing_findings(Missing("libhipblas.so.2", "pkg/y.so", "pkg/x.so"), policy="manylinux_2_28",
                            requires=[], excludes=())
    assert "needs libhipblas.so.2 (needed by pkg/y.so): provided by rocm-sdk (a known soname" in g.message
    (h,) = missing_findings(Missing("libnuma.so.1", "pkg/x.so", "pkg/x.so", "/usr/lib/libnuma.so.1"),
                            policy="manylinux_2_28", requires=[], excludes=["libnuma*"])
    assert h.severity == "info" and "excluded by --exclude" in h.message


def test_a_library_is_attributed_to_the_requirement_named_after_it() -> None:
    from toolkit.inspect.rules.needed import _required_package

    assert _required_package("libtbb.so.12", ["numpy", "tbb"]) == "tbb"
    assert _required_package("libTBB.so.12", ["tbb-devel"]) == "tbb-devel"  # names are lower-case
    assert _required_package("libnuma.so.1", ["tbb"]) is None


def test_a_rocm_library_names_the_per_family_sdk_package_the_wheel_requires() -> None:
    from toolkit.inspect.rules.needed import Missing, missing_findings

    # TheRock's per-family SDK packages are rocm-sdk-libraries-<family> (canonical, lowercase)
    (f,) = missing_findings(Missing("libamdhip64.so.7", "pkg/x.so", "pkg/x.so"), policy="manylinux_2_28",
                            requires=["rocm-sdk-libraries-gfx94x-dcgpu", "numpy"], excludes=[])
    assert f.severity == "warning"
    assert "provided by rocm-sdk (Requires-Dist: rocm-sdk-libraries-gfx94x-dcgpu; verify with " in f.message


def test_a_known_rocm_soname_is_rocms_even_when_a_requirement_shares_its_name() -> None:
    # the known sonames come first (toolkit/inspect/rules/needed.py): a Requires-Dist named
    # after the library does not make it that package's
    [f] = missing_findings(Missing("libamdhip64.so.6", "a.so", "a.so"), policy="manylinux_2_28",
                           requires=["amdhip64"], excludes=[])
    assert (f.severity, f.cause) == ("warning", "needs libamdhip64.so.6, provided by rocm-sdk")
    assert "provided by rocm-sdk (a known soname;" in f.message and "amdhip64 (" not in f.message


def test_an_excluded_library_is_an_info_of_the_missing_library_check() -> None:
    from toolkit.inspect.report import Finding
    from toolkit.inspect.rules.needed import Missing, missing_findings

    got = missing_findings(Missing("libfoo.so.1", "pkg/x.so", "pkg/x.so"), policy="manylinux_2_28",
                           requires=[], excludes=["libfoo*"])
    assert got == [Finding("missing-library", "info", "pkg/x.so",
                           "pkg/x.so needs libfoo.so.1: excluded by --exclude, not checked",
                           cause="needs libfoo.so.1, excluded")]
