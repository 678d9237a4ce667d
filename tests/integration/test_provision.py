"""Provisioning for real: uv/pip install the SDK doubles from a local PEP 503 index.

Each test runs ``python -m toolkit provision ID`` in a subprocess, the way a contributor or
CI does, with a temp matrix (``TOOLKIT_DATA_DIR``), cache and work folder.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.doubles.fixtures import local_index, sandbox, toolkit, uv_cache  # noqa: F401
from tests.doubles.index import CPU_TORCH
from toolkit.env.venvs import STAMP

pytestmark = pytest.mark.integration


def provision(env: dict[str, str], build_id: str, *args: str) -> subprocess.CompletedProcess[str]:
    return toolkit("provision", build_id, "--workdir", env["WORK"], *args, env=env)


def env_dir(env: dict[str, str], name: str) -> Path:
    return Path(env["TOOLKIT_CACHE_DIR"]) / "envs" / name


def rocm_sdk(env_path: Path, *args: str) -> str:
    out = subprocess.run([str(env_path / "bin" / "python"), "-m", "rocm_sdk", *args],
                         capture_output=True, text=True, check=True)
    return out.stdout.strip()


def one_error_line(proc: subprocess.CompletedProcess[str]) -> str:
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1, proc.stderr
    assert proc.stderr.rstrip().splitlines()[-1] == errors[0]
    assert "Traceback" not in proc.stderr
    return errors[0]


def test_per_family_provision_then_reuse(sandbox: dict[str, str]) -> None:  # noqa: F811
    proc = provision(sandbox, "sample-1.0.0-cp312-rocm7.0")
    assert proc.returncode == 0, proc.stderr
    env = env_dir(sandbox, "3.12-rocm7.0-torch2.8")
    assert proc.stdout.strip() == str(env)
    root = rocm_sdk(env, "path", "--root")
    assert root.startswith(str(env)) and Path(root, "bin", "hipconfig").exists()
    assert rocm_sdk(env, "targets") == "gfx942"
    assert rocm_sdk(env, "version") == "7.0.0a20260101"
    site = next(env.glob("lib/python3.12/site-packages"))
    assert (site / "_rocm_sdk_libraries_gfx94x_dcgpu").is_dir()
    assert not list(site.glob("rocm_placeholder*"))  # PyPI-style 0.1.0 placeholder skipped
    stamp = json.loads((env / STAMP).read_text())
    assert stamp["values"]["ROCM_ROOT"] == root
    assert stamp["values"]["TORCH_VERSION"] == "2.8.0+rocm7.0"
    # nothing changed: every provisioning step is skipped (what it costs is measured by
    # benchmarks/bench_provision.py, never by a clock in a test: on a busy machine that flakes)
    again = provision(sandbox, "sample-1.0.0-cp312-rocm7.0", "--json")
    assert again.returncode == 0, again.stderr
    result = json.loads(again.stdout)
    ran = [s["name"] for s in result["steps"] if not s["skipped"]]
    assert ran == ["check-env"]  # it decides the reuse; every other step is skipped
    assert result["values"]["ROCM_ROOT"] == root


def test_multi_arch_provision(sandbox: dict[str, str]) -> None:  # noqa: F811
    proc = provision(sandbox, "sample-1.0.0-cp312-rocm7.1", "--gfx", "gfx942,gfx90a",
                     "--rocm-sdk-test")
    assert proc.returncode == 0, proc.stderr
    env = env_dir(sandbox, "3.12-rocm7.1-torch2.8")
    assert rocm_sdk(env, "path", "--root").startswith(str(env))
    assert rocm_sdk(env, "targets") == "gfx90a;gfx942"
    site = next(env.glob("lib/python3.12/site-packages"))
    assert (site / "_rocm_sdk_device_gfx942").is_dir() and (site / "_rocm_sdk_device_gfx90a").is_dir()
    assert "rocm-sdk-test" in proc.stderr
    # TheRock's split torch: the host wheel plus one device package per requested target,
    # the SDK release kept (torch pins rocm[libraries]==<its SDK>)
    assert (site / "_amd_torch_device_gfx942").is_dir() and (site / "_amd_torch_device_gfx90a").is_dir()
    assert rocm_sdk(env, "version") == "7.1.0a20260101"
    assert "rocm-sdk-init" in proc.stderr


def test_multi_arch_refuses_family_and_unbuildable_targets(sandbox: dict[str, str]) -> None:  # noqa: F811
    proc = provision(sandbox, "sample-1.0.0-cp312-rocm7.1", "--family", "gfx94X-dcgpu")
    assert proc.returncode == 2
    line = one_error_line(proc)
    assert "--family gfx94X-dcgpu" in line and "multi-arch" in line and "--gfx" in line
    # gfx1013: the compilers accept it, but no rocm-sdk-device package exists for it
    proc = provision(sandbox, "sample-1.0.0-cp312-rocm7.1", "--gfx", "gfx1013")
    assert proc.returncode == 2
    assert "no rocm-sdk-device package for gfx1013" in one_error_line(proc)


def test_changed_family_rebuilds_with_fresh_rocm_build(sandbox: dict[str, str]) -> None:  # noqa: F811
    assert provision(sandbox, "sample-1.0.0-cp312-rocm7.0").returncode == 0
    env = env_dir(sandbox, "3.12-rocm7.0-torch2.8")
    # the rocm sdist picks its family when built: the uv cache must not hand back gfx94X
    proc = provision(sandbox, "sample-1.0.0-cp312-rocm7.0", "--gfx", "gfx90a")
    assert proc.returncode == 0, proc.stderr
    assert "skipped" not in proc.stderr
    site = next(env.glob("lib/python3.12/site-packages"))
    assert (site / "_rocm_sdk_libraries_gfx90a").is_dir()
    assert not (site / "_rocm_sdk_libraries_gfx94x_dcgpu").exists()
    assert rocm_sdk(env, "targets") == "gfx90a"


@pytest.mark.skipif(not CPU_TORCH.is_file(), reason="no CPU torch wheel on disk")
def test_real_cpu_torch_is_refused_then_allowed(sandbox: dict[str, str]) -> None:  # noqa: F811
    proc = provision(sandbox, "sample-2.0.0-cp311-rocm7.0")
    assert proc.returncode == 4
    line = one_error_line(proc)
    assert "torch 2.13.0+cpu is not a ROCm build (torch.version.hip is None" in line
    env = env_dir(sandbox, "3.11-rocm7.0-torch2.13")
    assert not (env / STAMP).exists()
    ok = provision(sandbox, "sample-2.0.0-cp311-rocm7.0", "--allow-rocm-mismatch")
    assert ok.returncode == 0, ok.stderr
    assert (env / STAMP).exists()


def test_torch_hip_mismatch_one_line(sandbox: dict[str, str]) -> None:  # noqa: F811
    proc = provision(sandbox, "sample-0.9.0-cp311-rocm7.0")
    assert proc.returncode == 4
    line = one_error_line(proc)
    assert "torch 2.7.0+rocm6.4 was built with HIP 6.4" in line and "needs HIP 7.0" in line
    assert not (env_dir(sandbox, "3.11-rocm7.0-torch2.7") / STAMP).exists()


def test_unknown_provider(sandbox: dict[str, str]) -> None:  # noqa: F811
    proc = provision(sandbox, "sample-1.0.0-cp312-rocm7.0", "--rocm-from", "conda")
    assert proc.returncode == 2
    assert "unknown ROCm SDK provider 'conda'" in one_error_line(proc)
    assert not env_dir(sandbox, "3.12-rocm7.0-torch2.8").exists()


def test_unreachable_index_fails_fast_masked(sandbox: dict[str, str]) -> None:  # noqa: F811
    proc = provision(sandbox, "sample-1.0.0-cp312-rocm7.0",
                     "--index-url", "http://ci:hunter2@127.0.0.1:9/v2/")
    assert proc.returncode == 8  # the source, not this machine's tools
    line = one_error_line(proc)
    assert "cannot reach ROCm SDK index http://***@127.0.0.1:9/v2/gfx94X-dcgpu/" in line
    assert "hunter2" not in proc.stderr + proc.stdout
    # fast: refused at the probe, before any environment was created (not timed by a clock)
    assert not env_dir(sandbox, "3.12-rocm7.0-torch2.8").exists()


def test_index_without_the_family(sandbox: dict[str, str]) -> None:  # noqa: F811
    proc = provision(sandbox, "sample-1.0.0-cp312-rocm7.0", "--gfx", "gfx1201")
    assert proc.returncode == 8  # the index cannot serve the build: the source, not the host
    line = one_error_line(proc)
    assert "/v2/gfx120X-all/ has no 'rocm' project" in line
    assert not env_dir(sandbox, "3.12-rocm7.0-torch2.8").exists()


def test_missing_interpreter(sandbox: dict[str, str], tmp_path: Path) -> None:  # noqa: F811
    env = {**sandbox, "PYENV_ROOT": str(tmp_path / "no-pyenv"), "PATH": "/usr/bin:/bin"}
    # uv may still know a 3.12 (uv python find): hide it by pointing uv at an empty install dir
    env["UV_PYTHON_INSTALL_DIR"] = str(tmp_path / "no-uv-pythons")
    proc = provision(env, "sample-1.0.0-cp312-rocm7.0")
    if proc.returncode == 0:
        pytest.skip("a system python3.12 exists on this machine")
    assert proc.returncode == 4
    line = one_error_line(proc)
    assert "no Python 3.12 interpreter found" in line and "uv python install 3.12" in line
    assert not env_dir(sandbox, "3.12-rocm7.0-torch2.8").exists()


@pytest.mark.skipif(not shutil.which("hipcc"), reason="no system hipcc")
def test_system_rocm_from_hipcc_and_mismatch(sandbox: dict[str, str]) -> None:  # noqa: F811
    # Debian's hipcc (ROCm 5.2) with root /usr; the 5.2 release in the test matrix matches it
    proc = provision(sandbox, "sample-1.0.0-cp312-rocm5.2", "--json")
    assert proc.returncode == 0, proc.stderr
    values = json.loads(proc.stdout)["values"]
    assert values["ROCM_ROOT"] == str(Path(shutil.which("hipcc") or "").resolve().parent.parent)
    # the same install for a ROCm 7.0 session: one line naming both versions
    bad = provision(sandbox, "sample-1.0.0-cp312-rocm7.0", "--rocm-from", "system")
    assert bad.returncode == 4
    line = one_error_line(bad)
    assert "5.2" in line and "ROCm 7.0" in line
    assert not (env_dir(sandbox, "3.12-rocm7.0-torch2.8") / STAMP).exists()
