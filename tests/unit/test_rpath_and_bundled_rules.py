"""RPATH/RUNPATH entries and bundled torch/ROCm libraries, as ld.so(8) reads search paths
(an empty element and a relative one search the current directory; ``$ORIGIN`` and
``${ORIGIN}`` are the library's folder) and as pip installs packages (a wheel's top-level
folders land side by side in site-packages)."""

from __future__ import annotations

import pytest

from toolkit.inspect.readers.elf import ElfInfo
from toolkit.inspect.rules.hygiene import bundled_findings, classify_rpath, rpath_findings

TOPS = {"demo", "demo.libs"}


@pytest.mark.parametrize(("entry", "lib", "tops", "kind"), [
    ("", "demo/_ext.so", TOPS, "empty"),
    ("lib", "demo/_ext.so", TOPS, "relative"),
    ("./lib", "demo/_ext.so", TOPS, "relative"),
    ("$ORIGIN", "demo/_ext.so", TOPS, None),
    ("${ORIGIN}/../demo.libs", "demo/_ext.so", TOPS, None),  # a folder the wheel ships
    ("$ORIGIN/sub", "demo/_ext.so", TOPS, None),
    ("$ORIGIN/../nowhere", "demo/_ext.so", TOPS, "leaves"),
    ("$ORIGIN/../..", "demo/_ext.so", TOPS, "leaves"),
    ("$ORIGIN/../torch/lib", "demo/_ext.so", TOPS, "sibling"),
    ("$ORIGIN/../_rocm_sdk_core/lib", "demo/_ext.so", TOPS, "sibling"),
    ("$ORIGIN/../../../lib/python3.12/site-packages/torch/lib", "demo/_ext.so", TOPS, "site"),
    ("$ORIGIN/../anything", "demo/_ext.so", None, None),  # files on disk: not judged
    ("/tmp/build/lib", "demo/_ext.so", TOPS, "build"),
    ("/home/ci/x", "demo/_ext.so", TOPS, "build"),
    ("/io", "demo/_ext.so", TOPS, "build"),
    ("/homework/lib", "demo/_ext.so", TOPS, "outside"),  # not /home
    ("/usr/lib/python3/dist-packages/torch/lib", "demo/_ext.so", TOPS, "site"),
    ("/opt/rocm/lib", "demo/_ext.so", TOPS, "rocm"),
    ("/opt/rocm-6.2.0/lib", "demo/_ext.so", TOPS, "rocm"),
    ("/opt/rocmx/lib", "demo/_ext.so", TOPS, "outside"),
    ("/usr/local/lib", "demo/_ext.so", TOPS, "outside"),
])
def test_each_entry_is_classified(entry: str, lib: str, tops: set[str] | None, kind: str | None) -> None:
    assert classify_rpath(entry, lib, tops) == kind


def _info(rpath: tuple[str, ...] = (), runpath: tuple[str, ...] = ()) -> ElfInfo:
    return ElfInfo(machine=62, elf_class=64, type=3, rpath=rpath, runpath=runpath)


def test_one_finding_per_entry_with_every_library_using_it() -> None:
    libs = [(f"demo/l{i}.so", _info(runpath=("/tmp/x", "$ORIGIN", "/tmp/x"))) for i in range(5)]
    libs.append(("demo/r.so", _info(rpath=("",))))
    found = rpath_findings(libs, TOPS)
    assert [(f.check, f.severity, f.library, f.cause, f.libraries) for f in found] == [
        ("rpath", "error", None, "RUNPATH a build-machine path leaks into the wheel",
         tuple(f"demo/l{i}.so" for i in range(5))),
        ("rpath", "error", "demo/r.so", "RPATH an empty element: ld.so searches the current directory there",
         ("demo/r.so",)),
    ]
    assert found[0].message == ("RUNPATH '/tmp/x' in demo/l0.so, demo/l1.so, demo/l2.so and 2 more: "
                                "a build-machine path leaks into the wheel")
    assert found[1].message == ("RPATH '' in demo/r.so: an empty element: ld.so searches the current "
                                "directory there")
    sev = rpath_findings([("demo/a.so", _info(runpath=("/usr/lib", "/opt/rocm/lib")))], TOPS)
    assert [f.severity for f in sev] == ["warning", "info"]
    assert rpath_findings([("demo/a.so", _info(runpath=("$ORIGIN",)))], TOPS) == []


@pytest.mark.parametrize(("path", "project", "allow", "what"), [
    ("demo/libtorch_cpu.so", "demo", (), "torch"),
    ("demo/libc10.so", "demo", (), "torch"),
    ("demo.libs/libamdhip64.so.6", "demo", (), "ROCm"),
    ("demo.libs/libamdhip64-1a2b3c.so.6", "demo", (), "ROCm"),  # auditwheel's renamed copy
    ("demo/librocblas.so.4", "rocm-sdk-libraries", (), None),  # ROCm's own wheels
    ("demo/librocblas.so.4", "rocm", (), None),
    ("demo/libtorch.so", "rocm-sdk-libraries", (), "torch"),  # but not torch's libraries
    ("torch/lib/libtorch.so", "torch", (), None),
    ("demo/libamdhip64.so.6", "demo", ("libamdhip64",), None),
    ("demo/libamdhip64.so.6", "demo", ("libamd*",), None),
    ("demo/libtorchvision.so", "demo", (), None),  # another library, not libtorch
    ("demo/libhipblas_ext.so", "demo", (), None),
    # MAGMA, the GPU linear algebra library ROCm builds of torch link (torch/lib/libmagma.so in
    # torch's ROCm wheels): a ROCm-side library, and the last name of that list
    ("demo.libs/libmagma.so", "demo", (), "ROCm"),
    ("torch/lib/libmagma.so", "torch", (), None),
])
def test_bundled_torch_and_rocm_libraries(path: str, project: str, allow: tuple[str, ...],
                                          what: str | None) -> None:
    found = bundled_findings(path, project, allow)
    if what is None:
        assert found == []
        return
    base = path.rsplit("/", 1)[-1].split(".")[0]
    assert [(f.check, f.severity, f.library, f.cause, f.message) for f in found] == [(
        "bundled-library", "error", path, f"bundles a {what} library",
        f"{path} bundles a {what} library: it must come from the installed {what} "
        f"(or pass --allow-bundled {base})")]


def test_rpath_entries_are_classified_as_ld_so_reads_them() -> None:
    from toolkit.inspect.rules.hygiene import classify_rpath

    assert classify_rpath("", "pkg/x.so", {"pkg"}) == "empty"  # an empty entry: the current folder
    # ld.so(8): $ORIGIN and ${ORIGIN} are the same token
    for origin in ("$ORIGIN", "${ORIGIN}"):
        assert classify_rpath(f"{origin}/../pkg.libs", "pkg/x.so", {"pkg", "pkg.libs"}) is None
        assert classify_rpath(f"{origin}/../../..", "pkg/x.so", {"pkg"}) == "leaves"


@pytest.mark.parametrize(("entry", "lib", "want"), [
    ("$ORIGIN/Xpkg", "libfoo.so", None),  # a folder whose name starts with X, in the wheel
    ("${ORIGIN}/Xpkg", "libfoo.so", None),
    ("$ORIGIN/Xother", "libfoo.so", "leaves"),  # not shipped
])
def test_an_origin_entry_names_the_folder_as_written(entry: str, lib: str, want: str | None) -> None:
    assert classify_rpath(entry, lib, {"Xpkg", "other"}) == want


def test_an_absolute_rpath_outside_the_wheel_is_a_warning() -> None:
    # ld.so(8): an absolute DT_RUNPATH entry is searched as is on the machine that loads the
    # library
    assert classify_rpath("/usr/local/lib", "pkg/x.so", {"pkg"}) == "outside"
    info = ElfInfo(machine=62, elf_class=64, type=3, runpath=("/usr/local/lib",))
    (f,) = rpath_findings([("pkg/x.so", info)], {"pkg"})
    assert (f.severity, f.library) == ("warning", "pkg/x.so")
    assert f.message == ("RUNPATH '/usr/local/lib' in pkg/x.so: an absolute path outside the wheel "
                         "(libraries there would load on users' machines)")


def test_the_rocm_meta_package_may_ship_rocm_libraries_but_not_torchs() -> None:
    from toolkit.inspect.rules.hygiene import bundled_findings

    # TheRock's meta package is named "rocm" (ROCm/TheRock@89553ce37
    # build_tools/packaging/python/templates/rocm/setup.py: name="rocm")
    assert bundled_findings("rocm/lib/librocblas.so.4", "rocm", ()) == []
    (f,) = bundled_findings("rocm/lib/libtorch_cpu.so", "rocm", ())
    assert (f.check, f.severity) == ("bundled-library", "error")
    (f,) = bundled_findings("demo/lib/librocblas.so.4", "demo", ())
    assert (f.check, f.severity) == ("bundled-library", "error")


@pytest.mark.parametrize(("kind", "entry", "severity", "begins", "ends"), [
    # ld.so(8): a relative element is looked up from the process's current directory
    ("RUNPATH", "lib", "error", "relative to the current directory", "not to $ORIGIN"),
    # demo/../nowhere: a folder the wheel does not ship and no known package installs
    ("RPATH", "$ORIGIN/../nowhere", "warning", "$ORIGIN-relative but leaves the wheel",
     "for a folder no known package installs"),
    # pip puts torch in one interpreter's site-packages
    ("RUNPATH", "/usr/lib/python3/dist-packages/torch/lib", "info", "install layout: a pip-installed",
     "in one interpreter's site-packages"),
])
def test_each_entry_kind_is_explained_after_the_entry_and_its_library(
        kind: str, entry: str, severity: str, begins: str, ends: str) -> None:
    info = _info(rpath=(entry,)) if kind == "RPATH" else _info(runpath=(entry,))
    (f,) = rpath_findings([("demo/_ext.so", info)], TOPS)
    assert (f.severity, f.library) == (severity, "demo/_ext.so")
    assert f.message.startswith(f"{kind} {entry!r} in demo/_ext.so: {begins}"), f.message
    assert f.message.endswith(ends), f.message
    assert f.cause.startswith(f"{kind} {begins}") and f.cause.endswith(ends)
