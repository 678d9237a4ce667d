"""The smoke suite's own collection: per-package tests, ids by package-version/target/module.

Collected (never run) by this interpreter with fake manifests: no wheel is needed for that.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from toolkit.data.matrix import load_matrix
from toolkit.plan.recipes import recipe_for
from toolkit.verify.smoke import manifest_for_id, smoke_facts, suite_dir

SUITE = suite_dir()


def collect(tmp_path: Path, build_id: str, *extra: str) -> list[str]:
    data = manifest_for_id(build_id, tmp_path / "env")
    assert data is not None
    data["smoke"] = smoke_facts(data)
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps(data))
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", str(SUITE), "-c", str(SUITE / "pytest.ini"),
         "--rootdir", str(SUITE), "-p", "no:cacheprovider", "--import-mode=importlib",
         "--collect-only", "-q", "--manifest", str(path), *extra],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
        env={"PYTHONDONTWRITEBYTECODE": "1", "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return [line.split("::", 1)[1] for line in proc.stdout.splitlines() if "::" in line]


def test_apex_jit_build(tmp_path: Path) -> None:
    ids = collect(tmp_path, "apex-1.8.0-cp312-rocm7.0", "--gfx", "gfx942,gfx90a")
    b = next(b for b in load_matrix().builds if b.id == "apex-1.8.0-cp312-rocm7.0")
    modules = recipe_for("apex").expected_modules(b.pkg_version)
    assert modules and all(m.startswith("apex.") for m in modules)
    for m in modules:
        assert f"test_import[apex-1.8.0-{m}]" in ids
        assert f"test_apex_ops_installed[apex-1.8.0-{m}]" in ids
    assert "test_gpu_code_for_target[apex-1.8.0-gfx942]" in ids
    assert "test_gpu_code_for_target[apex-1.8.0-gfx90a]" in ids
    assert "test_apex_fused_layer_norm[apex-1.8.0-gfx942]" in ids
    assert "test_apex_multi_tensor_scale[apex-1.8.0-gfx90a]" in ids
    assert not [i for i in ids if "fbgemm" in i or "sample" in i]


def test_apex_setuptools_build_has_no_installed_ops_tests(tmp_path: Path) -> None:
    ids = collect(tmp_path, "apex-1.7.0-cp312-rocm6.4", "--gfx", "gfx942")
    assert "test_import[apex-1.7.0-amp_C]" in ids
    assert not [i for i in ids if i.startswith("test_apex_ops_installed")]


def test_fbgemm_build(tmp_path: Path) -> None:
    build = next(b for b in load_matrix().builds if b.package.name == "fbgemm_gpu")
    label = f"{build.package.name}-{build.version}"
    ids = collect(tmp_path, build.id, "--gfx", "gfx942")
    for name in (f"test_fbgemm_variant[{label}]",
                 f"test_fbgemm_op_registered[{label}-jagged_2d_to_dense]",
                 f"test_fbgemm_op_registered[{label}-asynchronous_inclusive_cumsum]",
                 f"test_fbgemm_jagged_2d_to_dense[{label}-gfx942]",
                 f"test_torch_hip_matches_rocm[{label}]", f"test_import[{label}-fbgemm_gpu]"):
        assert name in ids
    assert not [i for i in ids if "apex" in i]


def test_bad_manifest_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "m.json").write_text("{}")
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", str(SUITE), "-c", str(SUITE / "pytest.ini"),
         "-p", "no:cacheprovider", "--collect-only", "--manifest", str(tmp_path / "m.json")],
        cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 4
    assert "is not a build manifest" in proc.stderr


@pytest.mark.parametrize("gfx", ["", "gfx942"])
def test_targets_default_to_the_builds(tmp_path: Path, gfx: str) -> None:
    data = {"build": {"id": "x", "package": "hip_sample", "version": "0.1.0", "rocm": "5.2"},
            "recipe": "sample", "dist": "hip-sample", "targets": ["gfx90a", "gfx908"],
            "expected_modules": ["hip_sample"]}
    (tmp_path / "m.json").write_text(json.dumps(data))
    extra = ["--gfx", gfx] if gfx else []
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", str(SUITE), "-c", str(SUITE / "pytest.ini"),
         "-p", "no:cacheprovider", "--import-mode=importlib", "--collect-only", "-q",
         "--manifest", str(tmp_path / "m.json"), *extra],
        cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    want = ["gfx942"] if gfx else ["gfx90a", "gfx908"]
    got = [line.rsplit("-", 1)[1].rstrip("]") for line in proc.stdout.splitlines()
           if "test_gpu_code_for_target[" in line]
    assert got == want
