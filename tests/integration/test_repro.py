"""`invoke repro`: a demo build re-run from its manifest, and refusals where it would mislead."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.hipcc]
ROOT = Path(__file__).resolve().parents[2]
BUILD = "hip_sample-0.1.0-cp311-rocm5.2"

if not shutil.which("hipcc"):
    pytest.skip("no hipcc: the demo builds its CPU variant (apt-get install hipcc)",
                allow_module_level=True)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    tmp = tmp_path_factory.mktemp("repro")
    env = {**os.environ, "TOOLKIT_CACHE_DIR": str(tmp / "cache"), "CI": "true"}
    work = tmp / "work"
    res = subprocess.run([sys.executable, "-m", "nox", "-s", "demo", "--", "--workdir", str(work)],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert res.returncode == 0, res.stdout[-4000:]
    assert f"reproduce with: invoke repro {work}/artifacts/{BUILD}/manifest.json" in res.stdout
    return work, env


def invoke_repro(work: Path, env: dict[str, str], manifest: str, *extra: str
                 ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "invoke", "-r", str(ROOT), "repro", manifest,
                           *extra], cwd=work, env=env, capture_output=True, text=True, timeout=900)


def load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())  # type: ignore[no-any-return]


def test_manifest_records_what_a_rerun_needs(demo: tuple[Path, dict[str, str]]) -> None:
    work, _ = demo
    m = load(work / "artifacts" / BUILD / "manifest.json")
    assert m["schema_version"] == 5 and m["outcome"] == "ok" and m["failed_step"] is None
    assert m["failure"] is None
    assert m["targets"] == ["gfx90a", "gfx908"]
    assert m["sdk"]["provider"] == "system" and m["sdk"]["version"].startswith("5.2")
    assert {"name": "hip-sample", "version": Path(m["wheel"]).name.split("-")[1]} in m["installed"]
    assert m["environment"]["build-wheel"]["PYTORCH_ROCM_ARCH"] == "gfx90a;gfx908"
    assert m["tools"]["hipcc"].startswith("HIP version: 5.2") and m["tools"]["gcc"]
    assert m["host"]["glibc"] and m["host"]["cores"] >= 1 and m["host"]["gpus"] == []
    assert [s["name"] for s in m["steps"]][-2:] == ["smoke", "publish"]
    assert Path(m["wheel"]).parent == work / "dist" / BUILD  # the published wheel
    assert all(isinstance(s["returncode"], int) or s["skipped"] for s in m["steps"])
    assert len(m["source"]["sha"]) == 40
    # identity apart from host: the host's paths are recorded, and only there
    assert m["host"]["paths"]["workdir"] == str(work)
    assert m["identity"]["targets"] == ["gfx90a", "gfx908"]
    assert m["identity"]["interpreter"]["abi"].startswith("cpython-311")
    assert str(work) not in json.dumps(m["identity"])


def test_repro_rebuilds_bit_for_bit(demo: tuple[Path, dict[str, str]]) -> None:
    work, env = demo
    original = load(work / "artifacts" / BUILD / "manifest.json")
    wheel = Path(original["wheel"])
    published = wheel.read_bytes()
    res = invoke_repro(work, env, f"artifacts/{BUILD}/manifest.json")
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-2000:]
    digest = hashlib.sha256(published).hexdigest()
    assert f"identical: {digest}" in res.stdout
    assert wheel.read_bytes() == published  # the published wheel is never touched
    again = load(work / "artifacts" / BUILD / "repro-manifest.json")
    assert again["installed"] == original["installed"]
    ran = {s["name"] for s in again["steps"] if not s["skipped"]}
    assert "build-wheel" in ran and "publish" not in ran  # really rebuilt, never published
    staged = Path(again["wheel"])
    assert hashlib.sha256(staged.read_bytes()).hexdigest() == digest


def test_a_tampered_command_never_runs(demo: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    work, env = demo
    m = load(work / "artifacts" / BUILD / "manifest.json")
    marker = tmp_path / "pwned"
    for step in m["plan"]["steps"]:
        if step["name"] == "build-wheel":
            step["argv"] = ["touch", str(marker)]
            step["action"]["build"]["argv"] = ["touch", str(marker)]
    for step in m["steps"]:
        if step["name"] == "build-wheel":
            step["argv"] = ["touch", str(marker)]
    altered = tmp_path / "manifest.json"
    altered.write_text(json.dumps(m))
    res = invoke_repro(work, env, str(altered))
    assert not marker.exists()
    assert res.returncode == 2, res.stdout[-3000:] + res.stderr[-2000:]
    assert "step build-wheel" in res.stderr and "Traceback" not in res.stderr


@pytest.mark.parametrize("edit, needle", [
    (lambda m: m.pop("plan"), "'plan' is a required property"),
    (lambda m: m.update(extra=1), "Additional properties are not allowed ('extra'"),
    (lambda m: m.update(schema_version=2), "schema_version 2; this toolkit reads 4 and 5"),
    (lambda m: m.pop("failure"), "manifest field failure: missing (a schema 5 manifest"),
    (lambda m: m.update(failure={"step": "x", "exit_code": 5, "signature": ["l"] * 21,
                                 "log": None}), "manifest field failure"),
    (lambda m: m["build"].update(id=7), "manifest field build.id: 7 is an integer, expected a string"),
    (lambda m: m.update(targets="gfx90a"), "manifest field targets"),
    (lambda m: m["source"].update(sha="../../etc"), "manifest field source.sha"),
    (lambda m: m.update(options={"gfx": "x"}),
     "manifest field options.gfx: 'x' is a string, expected an array"),
])
def test_malformed_manifests_are_one_line(demo: tuple[Path, dict[str, str]], tmp_path: Path,
                                          edit: Any, needle: str) -> None:
    work, env = demo
    m = load(work / "artifacts" / BUILD / "manifest.json")
    edit(m)
    altered = tmp_path / "manifest.json"
    altered.write_text(json.dumps(m))
    res = invoke_repro(work, env, str(altered))
    assert res.returncode == 2, res.stdout[-2000:] + res.stderr
    assert needle in res.stderr and "Traceback" not in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1


def test_a_schema_4_manifest_is_still_read(demo: tuple[Path, dict[str, str]],
                                          tmp_path: Path) -> None:
    """Schema 4 is schema 5 without ``failure``: an older CI's manifest is re-planned."""
    work, env = demo
    m = load(work / "artifacts" / BUILD / "manifest.json")
    m.pop("failure")
    m["schema_version"] = 4
    older = tmp_path / "manifest.json"
    older.write_text(json.dumps(m))
    res = invoke_repro(work, env, str(older), "--dry-run")
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr
    assert "build-wheel" in res.stdout and "publish" not in res.stdout


def test_repro_refuses_another_rocm_and_names_it(demo: tuple[Path, dict[str, str]],
                                                  tmp_path: Path) -> None:
    work, env = demo
    m = load(work / "artifacts" / BUILD / "manifest.json")
    m["sdk"]["version"] = "6.4.0"
    altered = tmp_path / "manifest.json"
    altered.write_text(json.dumps(m))
    res = invoke_repro(work, env, str(altered))
    assert res.returncode == 2
    assert "ROCm 6.4.0 in the manifest, 5.2" in res.stderr and "--force" in res.stderr
    assert "REFUSE  ROCm: manifest 6.4.0" in res.stdout
    assert "Traceback" not in res.stderr
    res = invoke_repro(work, env, str(altered), "--dry-run", "--force", "--step", "check")
    assert res.returncode == 0 and "name-wheel" in res.stdout and "smoke" not in res.stdout


def test_repro_bad_input(demo: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    work, env = demo
    res = invoke_repro(work, env, str(tmp_path / "nope.json"))
    assert res.returncode == 2 and "no manifest at" in res.stderr
    (tmp_path / "bad.json").write_text("{")
    res = invoke_repro(work, env, str(tmp_path / "bad.json"))
    assert res.returncode == 2 and "not a readable manifest" in res.stderr
    (tmp_path / "bin.json").write_bytes(b"\xff\xfe\x00garbage")
    res = invoke_repro(work, env, str(tmp_path / "bin.json"))
    assert res.returncode == 2 and "Traceback" not in res.stderr
    res = invoke_repro(work, env, f"artifacts/{BUILD}/manifest.json", "--step", "fly")
    assert res.returncode == 2 and "unknown step 'fly'" in res.stderr
