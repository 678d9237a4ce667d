"""`nox -s demo`, then `invoke smoke`: the sample built with hipcc for gfx90a and gfx908.

gfx90a passes (GPU runtime tests skipped, with the reason); gfx942 fails on the GPU-code
test, naming the library and the targets it does carry. The KFD topology is pinned to a
CPU-only folder written here, so the outcome does not depend on the machine's GPUs.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.integration,
    pytest.mark.hipcc,
    pytest.mark.skipif(shutil.which("hipcc") is None,
                       reason="needs hipcc (Debian: apt-get install hipcc) to build the sample's GPU code"),
]

ROOT = Path(__file__).resolve().parents[2]
BUILD_ID = f"hip_sample-0.1.0-cp{sys.version_info.major}{sys.version_info.minor}-rocm"


def run(argv: list[str], cwd: Path, env: dict[str, str],
        timeout: int = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout,
                          check=False)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A work folder where `nox -s demo` built, checked and smoke-tested the sample."""
    base = tmp_path_factory.mktemp("smoke-demo")
    work = base / "work"
    kfd = base / "kfd" / "nodes" / "0"
    kfd.mkdir(parents=True)
    (kfd / "properties").write_text("cpu_cores_count 8\nsimd_count 0\ngfx_target_version 0\n")
    env = {**os.environ, "TOOLKIT_CACHE_DIR": str(base / "cache"),
           "TOOLKIT_KFD_ROOT": str(base / "kfd" / "nodes"), "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("CI", None)
    proc = run([sys.executable, "-m", "nox", "-s", "demo", "--", "--workdir", str(work)], ROOT, env,
               timeout=900)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"nox -s demo failed (exit {proc.returncode}):\n{out[-4000:]}"
    assert "[9/9] smoke" in out or "smoke " in out, out[-2000:]
    return work, env


def invoke_smoke(demo: tuple[Path, dict[str, str]], *args: str) -> subprocess.CompletedProcess[str]:
    work, env = demo
    return run([sys.executable, "-m", "invoke", "-r", str(ROOT), "smoke", *args], work, env)


def test_demo_manifest_records_a_passed_smoke_step(demo: tuple[Path, dict[str, str]]) -> None:
    import json

    work, _ = demo
    (manifest,) = (work / "artifacts").glob("hip_sample-*/manifest.json")
    data = json.loads(manifest.read_text())
    assert data["build"]["id"].startswith(BUILD_ID) and data["targets"] == ["gfx90a", "gfx908"]
    smoke = next(s for s in data["steps"] if s["name"] == "smoke")
    assert smoke["returncode"] == 0 and smoke["skipped"] is None
    assert data["outcome"] == "ok"


def test_demo_manifest_has_the_shared_fields(demo: tuple[Path, dict[str, str]]) -> None:
    """What a made manifest takes from ``recipe_facts`` is what the build wrote itself."""
    import json

    from toolkit.run.manifest import recipe_facts
    from toolkit.verify.smoke import build_for_id, manifest_for_id

    work, _ = demo
    (manifest,) = (work / "artifacts").glob("hip_sample-*/manifest.json")
    data = json.loads(manifest.read_text())
    build = build_for_id(data["build"]["id"])
    assert build is not None
    facts = recipe_facts(build, data["targets"])
    assert {k: data[k] for k in facts} == facts
    made = manifest_for_id(build.id, Path(data["env_dir"]), data["targets"])
    assert made is not None and {k: made[k] for k in facts} == facts


def test_gfx90a_passes_with_runtime_tests_skipped(demo: tuple[Path, dict[str, str]]) -> None:
    work, _ = demo
    junit = work / "junit-gfx90a.xml"
    proc = invoke_smoke(demo, "--gfx", "gfx90a", "--junit", str(junit))
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-4000:]
    assert "Traceback" not in out
    assert "no AMD GPU found (looked at" in out and "skipped (2): no AMD GPU found" in out
    cases = {tc.get("name"): [c.tag for c in tc] for tc in ET.parse(junit).getroot().iter("testcase")}
    assert cases["test_gpu_code_for_target[hip_sample-0.1.0-gfx90a]"] == []  # passed
    assert cases["test_import[hip_sample-0.1.0-hip_sample._native]"] == []
    assert cases["test_sample_saxpy[hip_sample-0.1.0-gfx90a]"] == ["skipped"]  # never a pass
    assert cases["test_gpu_is_requested_target[hip_sample-0.1.0-gfx90a]"] == ["skipped"]


def test_gfx942_fails_naming_the_library_and_what_it_carries(demo: tuple[Path, dict[str, str]]) -> None:
    proc = invoke_smoke(demo, "--gfx", "gfx942")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out[-4000:]
    assert "Traceback" not in out
    assert ("FAILED test_gpu_code.py::test_gpu_code_for_target[hip_sample-0.1.0-gfx942]: "
            "no GPU code for gfx942") in out
    line = next(x for x in out.splitlines() if x.strip().startswith("FAILED test_gpu_code"))
    assert "hip_sample/_native.cpython-" in line and "carries only gfx908, gfx90a" in line
    assert "error: smoke tests failed" in out


def test_require_gpu_turns_the_skip_into_a_failure(demo: tuple[Path, dict[str, str]]) -> None:
    proc = invoke_smoke(demo, "--gfx", "gfx90a", "--require-gpu")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out[-4000:]
    assert "--require-gpu: no AMD GPU found" in out


def test_cli_json_and_a_named_build(demo: tuple[Path, dict[str, str]]) -> None:
    import json

    work, env = demo
    (bid,) = [p.name for p in (work / "artifacts").iterdir()]
    proc = run([sys.executable, "-m", "toolkit", "smoke", "--workdir", str(work), "--build", bid,
                "--gfx", "gfx90X-dcgpu", "--json"], ROOT, env)
    assert proc.returncode == 1, proc.stdout + proc.stderr  # gfx906 is in the family, not in the wheel
    data = json.loads(proc.stdout)
    assert data["targets"] == ["gfx906", "gfx908", "gfx90a"] and data["failed"] == 1
    failed = [c for c in data["cases"] if c["outcome"] == "failed"]
    assert [c["name"] for c in failed] == [
        "test_gpu_code.py::test_gpu_code_for_target[hip_sample-0.1.0-gfx906]"]
