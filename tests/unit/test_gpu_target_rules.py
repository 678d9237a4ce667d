"""GPU code against the targets asked for (``--gfx``), as LLVM's AMDGPUUsage defines which
code runs where (a generic processor's code on each processor of its family; ``xnack``/
``sramecc`` features: code built with a feature on (+) runs only where it is on), and what
the host libraries were linked against (the HIP runtime's soname major is the ROCm major)."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolkit.core.gfx import parse_target
from toolkit.data.matrix import load_matrix as load_data_matrix
from toolkit.env.host import HostFacts
from toolkit.inspect.readers.gpuscan import CodeObject
from toolkit.inspect.report import LibraryResult, TargetCode
from toolkit.inspect.rules.gpu import (
    built_against,
    code_object_findings,
    code_runs_on,
    library_code,
    library_findings,
    no_gpu_code_findings,
    wheel_code,
)
from toolkit.inspect.rules.hygiene import ROCM_LIBS
from toolkit.plan.layout import Layout
from toolkit.plan.model import Options
from toolkit.plan.planner import plan
from toolkit.plan.recipes import load_matrix as load_checked_matrix


@pytest.mark.parametrize(("code", "device", "runs"), [
    ("gfx90a", "gfx90a", True), ("gfx90a", "gfx942", False), ("gfx90a:xnack+", "gfx90a", False),
    ("gfx90a:xnack+", "gfx90a:xnack+", True), ("gfx90a", "gfx90a:xnack-", True),
    ("gfx9-4-generic", "gfx942", True), ("gfx9-4-generic", "gfx90a", False),
    ("gfx11-generic", "gfx1151", True), ("gfx9-generic:xnack-", "gfx906:xnack-", True),
    ("not-a-target", "gfx90a", False),
])
def test_which_code_runs_on_which_device(code: str, device: str, runs: bool) -> None:
    assert code_runs_on(code, parse_target(device)) is runs


def test_a_library_without_code_for_a_target_fails_there() -> None:
    t = [parse_target("gfx90a"), parse_target("gfx942")]
    found = library_findings("demo/_ext.so", ["gfx90a", "gfx908"], t)
    assert [(f.check, f.severity, f.library, f.cause, f.message) for f in found] == [(
        "gpu-targets", "error", "demo/_ext.so", "no code object for gfx942",
        "demo/_ext.so has no code object for gfx942 (carries gfx90a, gfx908); it would fail with "
        "hipErrorNoBinaryForGpu on that GPU")]
    assert library_findings("demo/_ext.so", [], t) == []  # no GPU code at all: another rule
    assert library_findings("demo/_ext.so", ["gfx9-4-generic", "gfx90a"], t) == []
    objs = code_object_findings(["gfx90a", "gfx90a", "gfx908"], t)
    assert [(f.library, f.message) for f in objs] == [
        (None, "no standalone code object (.co/.hsaco) for gfx942; they cover gfx908, gfx90a")]
    assert code_object_findings([], t) == []


def _lib(path: str, kind: str = "shared-library", needed: tuple[str, ...] = (),
         code: dict[str, TargetCode] | None = None) -> LibraryResult:
    return LibraryResult(path, kind, needed=list(needed), gpu_code=code or {})


def test_without_any_gpu_code_each_target_is_an_error_saying_why() -> None:
    t = [parse_target("gfx942"), parse_target("gfx90a")]
    hip = [_lib("a.so", needed=("libamdhip64.so.6", "libc.so.6")), _lib("b.so"), _lib("c.so", "unreadable")]
    found = no_gpu_code_findings(t, hip, "this wheel")
    assert [(f.check, f.severity, f.library, f.cause) for f in found] == [
        ("gpu-targets", "error", None, "no GPU code for gfx942"),
        ("gpu-targets", "error", None, "no GPU code for gfx90a")]
    assert found[0].message == (
        "no GPU code for gfx942 in this wheel: none of its 2 native libraries carries device code, "
        "though 1 link the HIP runtime (host-only HIP, or device code stripped); it would fail with "
        "hipErrorNoBinaryForGpu")
    cpu = no_gpu_code_findings(t[:1], [_lib("a.so")], "libs/")
    assert cpu[0].message == ("no GPU code for gfx942 in libs/: none of its 1 native libraries carries "
                              "device code or links HIP (a CPU-only build?); it would fail with "
                              "hipErrorNoBinaryForGpu")
    empty = no_gpu_code_findings(t[:1], [_lib("x", "unreadable")], "this wheel")
    assert "in this wheel: it has no native library and no code object;" in empty[0].message
    assert no_gpu_code_findings([], hip, "w") == []
    assert no_gpu_code_findings(t, [_lib("g.so", code={"gfx90a": TargetCode()})], "w") == []


def test_code_is_counted_per_target_and_per_place() -> None:
    objs = [CodeObject("gfx942", 100, ".hip_fatbin (bundle)"),
            CodeObject("gfx90a", 50, ".hip_fatbin (bundle)"),
            CodeObject("gfx942", 10, ".rodata (raw ELF)"), CodeObject("gfx1100", 7, ".hip_fatbin (bundle)")]
    code, where = library_code(objs, "demo/_ext.so")
    assert list(code) == ["gfx90a", "gfx942", "gfx1100"]  # by family, then number
    assert (code["gfx942"].code_objects, code["gfx942"].bytes, code["gfx942"].libraries) == (
        2, 110, ["demo/_ext.so"])
    assert where == ["3 code objects in .hip_fatbin (bundle)", "1 code object in .rodata (raw ELF)"]
    _, hsa = library_code(objs[:1], "lib/libhsa-runtime64.so.1")
    assert hsa == ["1 code object in .hip_fatbin (bundle): the HSA runtime's own embedded kernels"]
    libs = [_lib("a.so", code={"gfx942": TargetCode(["a.so"], 2, 110)}),
            _lib("b.so", code={"gfx942": TargetCode(["b.so"], 1, 5), "gfx90a": TargetCode(["b.so"], 1, 1)})]
    total = wheel_code(libs)
    assert list(total) == ["gfx90a", "gfx942"]
    assert (total["gfx942"].libraries, total["gfx942"].code_objects, total["gfx942"].bytes) == (
        ["a.so", "b.so"], 3, 115)


def test_what_the_host_libraries_were_built_against() -> None:
    libs = [_lib("a.so", needed=("libamdhip64.so.6", "librocblas.so.4", "libc10_hip.so")),
            _lib("b.so", needed=("libhipblaslt.so.0", "libamdhip64.so.6")),
            _lib("k.co", "gpu-code-object", needed=("libamdhip64.so.5",))]  # code objects do not count
    assert built_against(libs, ROCM_LIBS) == {
        "hip_runtime": ["libamdhip64.so.6"], "rocm_major": 6, "torch": True, "torch_hip": True,
        "rocm_libraries": ["libhipblaslt.so.0", "librocblas.so.4"]}
    two = built_against([_lib("a.so", needed=("libamdhip64.so.7", "libamdhip64.so.6", "libtorch.so"))],
                        ROCM_LIBS)
    assert (two["rocm_major"], two["torch"], two["torch_hip"]) == ([6, 7], True, False)
    assert built_against([_lib("a.so", needed=("libc.so.6",))], ROCM_LIBS) == {
        "hip_runtime": [], "rocm_major": None, "torch": False, "torch_hip": False, "rocm_libraries": []}


def test_the_hsa_runtimes_own_kernels_are_named_as_such() -> None:
    objs = [CodeObject("gfx90a", 100, ".rodata (raw ELF)"), CodeObject("gfx90a", 50, ".rodata (raw ELF)")]
    code, where = library_code(objs, "usr/lib/x86_64-linux-gnu/libhsa-runtime64.so.1.5.0")
    assert where == ["2 code objects in .rodata (raw ELF): the HSA runtime's own embedded kernels"]
    assert (code["gfx90a"].code_objects, code["gfx90a"].bytes) == (2, 150)
    _, plain = library_code(objs[:1], "pkg/lib/libmine.so")
    assert plain == ["1 code object in .rodata (raw ELF)"]


LAYOUT = Layout(Path("/w"), Path("/c"))


HOST = HostFacts(cores=16, mem_available_gib=64.0)


def test_targets_outside_the_family_are_all_named_in_the_order_asked() -> None:
    """ROCm 7.0's per-family index served gfx94X-dcgpu = gfx942 only (rocm.toml,
    TheRock@de9728b3d): gfx908 and gfx1100 are outside it, listed in the order --gfx gave them."""
    m = load_data_matrix()
    p = plan(m, m.build("apex-1.8.0-cp312-rocm7.0"),
             Options(gfx=("gfx1100", "gfx942", "gfx908"), channel="nightly"), HOST, LAYOUT)
    desc = p.step("install-rocm-sdk").description
    assert ("(family gfx94X-dcgpu; its libraries do not serve gfx1100, gfx908, its compiler "
            "builds for them)") in desc
    inside = plan(m, m.build("apex-1.8.0-cp312-rocm7.0"), Options(gfx=("gfx942",), channel="nightly"),
                  HOST, LAYOUT)
    assert "(family gfx94X-dcgpu)" in inside.step("install-rocm-sdk").description


def test_the_check_step_asks_a_gpu_wheel_for_every_planned_target() -> None:
    from toolkit.env.host import HostFacts
    from toolkit.plan.layout import Layout
    from toolkit.plan.model import Options
    from toolkit.plan.planner import plan

    matrix = load_checked_matrix()
    p = plan(matrix, matrix.build("fbgemm_gpu-1.3.0-cp312-rocm6.4"), Options(gfx=("gfx90a", "gfx942")),
             HostFacts(), Layout(Path("/w"), Path("/c")))
    steps = {s["name"]: s for s in p.as_json()["steps"]}
    assert tuple(steps["check"]["action"]["gfx"]) == ("gfx90a", "gfx942") == p.targets


def test_the_hsa_runtime_without_code_for_a_gpu_cannot_drive_it() -> None:
    from toolkit.core.gfx import parse_target
    from toolkit.inspect.rules.gpu import library_findings

    # ROCr loads its blit and trap-handler kernels for every agent at hsa_init; an agent it
    # has no kernels for is not usable
    (f,) = library_findings("usr/lib/libhsa-runtime64.so.1", ["gfx90a"], [parse_target("gfx942")])
    assert (f.check, f.severity, f.cause) == ("gpu-targets", "error", "no code object for gfx942")
    assert f.message == ("the HSA runtime's own embedded kernels (blit/trap handlers) in "
                         "usr/lib/libhsa-runtime64.so.1 have no code object for gfx942 (carries gfx90a); "
                         "this runtime cannot drive that GPU (hsa_init finds no usable agent)")


def test_the_rocm_libraries_a_wheel_links_are_named_by_soname() -> None:
    from toolkit.inspect.rules.gpu import built_against
    from toolkit.inspect.rules.hygiene import ROCM_LIBS

    lib = LibraryResult("pkg/_C.so", "shared-library",
                        needed=["librocblas.so.4", "libhipblaslt.so.0", "libamdhip64.so.6", "libc.so.6"])
    got = built_against([lib], ROCM_LIBS)
    # the HIP runtime is reported on its own (its soname major is the ROCm major: 6 for ROCm 6.x)
    assert got["rocm_libraries"] == ["libhipblaslt.so.0", "librocblas.so.4"]
    assert (got["hip_runtime"], got["rocm_major"]) == (["libamdhip64.so.6"], 6)
