"""Opt-in (pytest --run-network): real wheels from PyPI against independent tools.

Truth comes from objdump/readelf (symbol versions, DT_NEEDED) and from LLVM's
``clang-offload-bundler --list`` on each offload bundle (compressed ones decompressed by the
test's own reader first): never from the toolkit's earlier output.
"""

from __future__ import annotations

import re
import sys
import zipfile
from pathlib import Path

import pytest

from tests.fixtures.bundles import split_fatbin
from tests.fixtures.native import bundler_list, objdump_max_versions
from toolkit.cli.commands.check import expand_targets
from toolkit.core.proc import run
from toolkit.inspect.checks import check_paths

pytestmark = [pytest.mark.integration, pytest.mark.network]  # skipped without --run-network
CACHE = Path.home() / ".cache" / "rocm-wheel-toolkit-tests" / "wheels"
PLATFORMS = ("manylinux_2_35_x86_64", "manylinux_2_34_x86_64", "manylinux_2_32_x86_64",
             "manylinux_2_28_x86_64", "manylinux_2_27_x86_64",
             "manylinux_2_17_x86_64", "manylinux2014_x86_64")  # fmt: skip
WHEELS = {  # spec -> (file glob, Python)
    "kiwisolver==1.4.8": ("kiwisolver-1.4.8-*.whl", "3.11"),
    "torch-cluster-rocm==1.6.3.post7": ("torch_cluster_rocm-1.6.3.post7-cp312-*.whl", "3.12"),
    "cupy-rocm-7-0==14.2.0": ("cupy_rocm_7_0-14.2.0-cp312-*.whl", "3.12"),
    "jax-rocm7-plugin==0.12.0": ("jax_rocm7_plugin-0.12.0-cp312-*.whl", "3.12"),
    # the developer set of issue 19: needs libraries it neither ships nor may assume
    "amd-mori==1.2.4": ("amd_mori-1.2.4-cp310-*.whl", "3.10"),
    "jax-rocm60-plugin==0.5.0": ("jax_rocm60_plugin-0.5.0-cp312-*.whl", "3.12"),
    "cupy-rocm-5-0==13.3.0": ("cupy_rocm_5_0-13.3.0-cp312-*.whl", "3.12"),
}


def fetch(spec: str) -> Path:
    """The wheel of ``spec`` (pip download once into the test cache)."""
    pattern, python = WHEELS[spec]
    CACHE.mkdir(parents=True, exist_ok=True)
    found = sorted(CACHE.glob(pattern))
    if not found:
        plats = [a for p in PLATFORMS for a in ("--platform", p)]
        pip = [sys.executable, "-m", "pip", "download", spec, "--no-deps", "--only-binary=:all:"]
        run([*pip, *plats, "--python-version", python, "-d", str(CACHE)], timeout=600)
        found = sorted(CACHE.glob(pattern))
    assert found, f"pip download {spec} left no wheel in {CACHE}"
    return found[0]


def _section(path: Path, name: str) -> bytes | None:
    out = run(["readelf", "-S", "-W", str(path)]).stdout
    for line in out.splitlines():
        parts = line.replace("[ ", "[").split()
        if len(parts) > 5 and parts[1] == name:
            off, size = int(parts[4], 16), int(parts[5], 16)
            return path.read_bytes()[off : off + size]
    return None


def _needed(path: Path) -> list[str]:
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", run(["readelf", "-d", str(path)]).stdout)


def test_kiwisolver_versions_match_objdump(tmp_path: Path) -> None:
    whl = fetch("kiwisolver==1.4.8")
    report = check_paths([whl])
    (wheel,) = report.wheels
    assert wheel.name == "kiwisolver" and wheel.libraries
    with zipfile.ZipFile(whl) as zf:
        for lib in wheel.libraries:
            out = tmp_path / Path(lib.path).name
            out.write_bytes(zf.read(lib.path))
            assert lib.max_versions == objdump_max_versions(out), lib.path
            assert "GLIBCXX" in lib.max_versions
    assert not [f for f in report.findings if f.check in ("policy", "record", "elf", "gpu-code")]


@pytest.mark.parametrize("spec", ["torch-cluster-rocm==1.6.3.post7", "cupy-rocm-7-0==14.2.0",
                                  "jax-rocm7-plugin==0.12.0"])  # fmt: skip
def test_rocm_wheel_against_readelf_objdump_and_the_bundler(tmp_path: Path, spec: str) -> None:
    whl = fetch(spec)
    (wheel,) = check_paths([whl]).wheels
    assert not [f for f in wheel.findings if f.check in ("record", "elf", "gpu-code", "archive")]
    all_targets: set[str] = set()
    with zipfile.ZipFile(whl) as zf:
        for lib in wheel.libraries:
            out = tmp_path / Path(lib.path).name
            out.write_bytes(zf.read(lib.path))
            assert lib.max_versions == objdump_max_versions(out), lib.path
            assert lib.needed == _needed(out), lib.path
            fatbin = _section(out, ".hip_fatbin")
            truth: set[str] = set()
            for i, bundle in enumerate(split_fatbin(fatbin) if fatbin else []):
                work = tmp_path / f"b{i}"
                work.mkdir(exist_ok=True)
                truth |= {e.split("--", 1)[1] for e in bundler_list(bundle, work) if "--" in e}
            assert set(lib.gpu_targets) == truth, lib.path
            all_targets |= truth
    assert set(wheel.gpu) == all_targets and all_targets
    assert wheel.built_against["rocm_major"] == 7  # libamdhip64.so.7, per readelf -d above


def test_torch_cluster_manylinux_2_32_tag_is_judged_on_any_host() -> None:
    whl = fetch("torch-cluster-rocm==1.6.3.post7")
    r = check_paths([whl])
    policy = [f for f in r.findings if f.check == "policy"]
    assert policy and all("manylinux_2_32 (claimed by the platform tag)" in f.message for f in policy)
    assert any("CXXABI_1.3.15" in f.message for f in policy)
    assert [str(t) for t in expand_targets(["gfx1251"])] == ["gfx1251"]
    gate = check_paths([whl], targets=expand_targets(["gfx1251", "gfx942"]))
    assert not [f for f in gate.findings if f.check == "gpu-targets"]  # both carried


@pytest.mark.parametrize("spec", ["amd-mori==1.2.4", "jax-rocm60-plugin==0.5.0", "cupy-rocm-5-0==13.3.0"])
def test_developer_set_verdict_does_not_depend_on_this_machine(spec: str) -> None:
    whl = fetch(spec)

    def verdict(system_path: list[str] | None) -> list[tuple[str, str, str, str]]:
        r = check_paths([whl], system_path=system_path)
        return sorted((f.check, f.severity, f.cause or "", f.library or "") for f in r.findings)

    empty = verdict([])
    assert empty == verdict(None)  # this machine's library path (Debian's ROCm 5 libraries here)
    assert empty == verdict(["/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu", "/opt/rocm/lib"])
    if spec.startswith("amd-mori"):  # libnuma is nobody's: readelf -d lists it, the wheel lacks it
        assert ("missing-library", "error", "needs libnuma.so.1, not provided") in {x[:3] for x in empty}
    if spec.startswith("jax-rocm60"):  # ROCm's own libraries: the SDK's, a warning
        assert any(x[1] == "warning" and "libamd_comgr" in (x[2] or "") for x in empty)
