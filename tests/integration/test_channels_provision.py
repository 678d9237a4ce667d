"""TheRock channels on the real tools: nox, the toolkit's CLI, uv against the local index.

The doubles' ROCm 7.1 is a release branch (tests/doubles/fixtures.py): by default its
prerelease channel; its stable and nightly channels are one index that holds only the
pre-release ``7.1.0a20260101``. So uv, resolving the stable channel without pre-releases,
finds no SDK there, and the nightly channel installs that pre-release. The sample package's
sources live at example.invalid: a build whose provisioning succeeds stops at get-sources.

One sequence (module fixture), each run through the real nox session or CLI:
1. ``TOOLKIT_ROCM_CHANNEL=stable nox -s build-3.12-rocm7.1 -- --channel nightly``: the flag
   wins; the environment is provisioned from the nightly channel;
2. a wheel is put in the build's dist/ folder, as an earlier build would have published it;
3. ``TOOLKIT_ROCM_CHANNEL=stable nox -s build-3.12-rocm7.1``: the variable alone picks stable
   (7.1's default is prerelease); uv refuses, exit 5 at install-rocm-sdk;
4. ``python -m toolkit provision ... --channel stable``: the same failure from the CLI.
Each run's plan comes from the same command with ``--dry-run --json`` (the plan is the truth
of what runs).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.doubles.fixtures import local_index, toolkit, uv_cache, write_data  # noqa: F401
from tests.doubles.index import MULTI_ARCH_VERSION, LocalIndex
from tests.fixtures.nox_runs import toolkit_code
from toolkit.env.venvs import STAMP

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]
BUILD = "sample-1.0.0-cp312-rocm7.1"
SESSION = ("build-3.12-rocm7.1", "--", "--package", "sample", "--version", "1.0.0", "--no-smoke")
# hand-computed from the doubles' 7.1 (line version 7.1.0, default family gfx94X-dcgpu, whose
# multi-arch device package is gfx942): the stable channel asks for releases of the line only,
# the others for its pre-releases as well (rocm.toml's channels: toolkit/data/releases.py)
STABLE_SPEC = "rocm[libraries,devel,device-gfx942]>1.0,>=7.1.0,<7.2"
NIGHTLY_SPEC = "rocm[libraries,devel,device-gfx942]>1.0,>=7.1.0a0,<7.2"


def nox(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "nox", "-s", *SESSION, *args],
                          cwd=ROOT, env={**os.environ, **env, "CI": "true"},
                          capture_output=True, text=True, timeout=600, check=False)


def planned(env: dict[str, str], *args: str) -> dict[str, Any]:
    """The plan of the build, from the same session with --dry-run --json."""
    res = nox(env, *args, "--dry-run", "--json")
    assert res.returncode == 0, res.stderr[-3000:]
    (plan,) = json.loads(res.stdout)
    return dict(plan)


def argv_of(plan_or_manifest: dict[str, Any], step: str) -> list[str]:
    steps = plan_or_manifest["steps"]
    return list(next(s["argv"] for s in steps if s["name"] == step))


def words(text: str) -> str:
    """``text`` with its whitespace runs as one space (uv wraps its message at a width)."""
    return " ".join(text.split())


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def runs(local_index: LocalIndex, uv_cache: Path,  # noqa: F811
         tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("channels")
    work = tmp / "work"
    work.mkdir()
    env = {"TOOLKIT_DATA_DIR": str(write_data(tmp / "data", local_index.url)),
           "TOOLKIT_CACHE_DIR": str(tmp / "cache"), "UV_CACHE_DIR": str(uv_cache),
           "TOOLKIT_ROCM_CHANNEL": "stable"}
    manifest = work / "artifacts" / BUILD / "manifest.json"
    envdir = tmp / "cache" / "envs" / "3.12-rocm7.1-torch2.8"
    out: dict[str, Any] = {"env_dir": envdir}
    # 1. the flag beats the variable: nightly
    args = ("--workdir", str(work), "--channel", "nightly")
    out["nightly_plan"] = planned(env, *args)
    out["nightly"] = nox(env, *args)
    out["nightly_manifest"] = json.loads(manifest.read_text())
    out["nightly_ready"] = (envdir / STAMP).is_file()
    out["nightly_sdk"] = subprocess.run(
        [str(envdir / "bin" / "python"), "-m", "rocm_sdk", "version"], capture_output=True,
        text=True, check=False).stdout.strip()
    # 2. a wheel an earlier build published
    wheel = work / "dist" / BUILD / "sample-1.0.0+rocm7.1-cp312-cp312-linux_x86_64.whl"
    wheel.parent.mkdir(parents=True)
    wheel.write_bytes(b"PK\x05\x06" + bytes(18))  # an empty zip archive
    out["wheel"], out["wheel_sha256"] = wheel, sha256(wheel)
    # 3. the variable alone: stable
    args = ("--workdir", str(work))
    out["stable_plan"] = planned(env, *args)
    out["stable"] = nox(env, *args)
    out["stable_manifest"] = json.loads(manifest.read_text())
    out["stable_log"] = (work / "artifacts" / BUILD / "build.log").read_text()
    out["stable_ready"] = (envdir / STAMP).is_file()
    previous = envdir.with_name(envdir.name + ".previous")
    out["previous_ready"] = (previous / STAMP).is_file()
    # 4. the CLI, the flag alone
    env.pop("TOOLKIT_ROCM_CHANNEL")
    out["cli"] = toolkit("provision", BUILD, "--workdir", str(work), "--channel", "stable",
                         env={**env, "TOOLKIT_ROCM_CHANNEL": ""})
    # 5. nightly again: the environment set aside comes back, nothing is installed again
    out["nightly_again"] = nox(env, "--workdir", str(work), "--channel", "nightly")
    out["nightly_again_log"] = (work / "artifacts" / BUILD / "build.log").read_text()
    out["nightly_again_sdk"] = subprocess.run(
        [str(envdir / "bin" / "python"), "-m", "rocm_sdk", "version"], capture_output=True,
        text=True, check=False).stdout.strip()
    return out


def test_nightly_installs_the_pre_release(runs: dict[str, Any]) -> None:
    res = runs["nightly"]
    out = res.stdout + res.stderr
    assert "Traceback" not in out
    # provisioned; then the sample's sources at example.invalid stop the build (exit 5)
    assert toolkit_code(res.returncode, res.stderr) == 5, out[-3000:]
    m = runs["nightly_manifest"]
    assert m["failed_step"] == "get-sources", out[-3000:]
    assert m["sdk"]["channel"] == "nightly"  # --channel beat TOOLKIT_ROCM_CHANNEL=stable
    assert runs["nightly_ready"]
    # the SDK's own CLI in the environment says which SDK uv installed: the double's pre-release
    assert runs["nightly_sdk"] == MULTI_ARCH_VERSION == "7.1.0a20260101"
    assert m["sdk"]["version"] == MULTI_ARCH_VERSION


def test_stable_refuses_the_pre_release_in_one_error(runs: dict[str, Any]) -> None:
    res = runs["stable"]
    out = res.stdout + res.stderr
    assert "Traceback" not in out
    assert toolkit_code(res.returncode, res.stderr) == 5, out[-3000:]
    m = runs["stable_manifest"]
    assert m["failed_step"] == "install-rocm-sdk"
    assert m["sdk"]["channel"] == "stable"  # TOOLKIT_ROCM_CHANNEL alone (7.1's default: prerelease)
    # uv's own resolution message, with the only version the channel has
    assert "No solution found when resolving dependencies" in out
    assert f"only rocm[libraries]<={MULTI_ARCH_VERSION} is available" in words(out)
    # the toolkit's error names the channel, why, and what takes pre-releases
    (error,) = [ln for ln in out.splitlines() if ln.startswith("error: ROCm 7.1")]
    assert "TheRock's stable channel" in error and "pre-releases are not taken on stable" in error
    assert "(next: --channel prerelease or nightly takes pre-releases)" in words(out)
    assert "sample-1.0.0-cp312-rocm7.1 at install-rocm-sdk (exit 5)" in res.stderr
    # the wheel an earlier build published is untouched
    assert sha256(runs["wheel"]) == runs["wheel_sha256"]


def test_the_provision_command_says_the_channel(runs: dict[str, Any]) -> None:
    res = runs["cli"]
    assert res.returncode == 5, res.stderr
    assert "Traceback" not in res.stderr + res.stdout
    errors = [ln for ln in res.stderr.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1, res.stderr
    assert errors[0].startswith("error: ROCm 7.1 from TheRock's stable channel, which takes "
                                "releases only (pre-releases are not taken on stable): step "
                                "'install-rocm-sdk' failed (exit 1): ")
    assert errors[0].endswith(STABLE_SPEC)
    # uv's words close the error (the output's last lines), then the hint
    tail = words(res.stderr.split(errors[0], 1)[1])
    assert tail.endswith("we can conclude that your requirements are unsatisfiable. "
                         "(next: --channel prerelease or nightly takes pre-releases)")


def test_the_plan_is_what_ran(runs: dict[str, Any]) -> None:
    nightly, stable = runs["nightly_plan"], runs["stable_plan"]
    # the plans differ where the channels do (hand-computed), and nowhere else in the SDK install
    n_sdk, s_sdk = argv_of(nightly, "install-rocm-sdk"), argv_of(stable, "install-rocm-sdk")
    assert n_sdk[-1] == NIGHTLY_SPEC and "--prerelease=allow" in n_sdk
    assert s_sdk[-1] == STABLE_SPEC and "--prerelease=allow" not in s_sdk
    assert [a for a in n_sdk if a not in ("--prerelease=allow", NIGHTLY_SPEC)] == s_sdk[:-1]
    # nightly: the manifest records the argv each step ran; the plan's, exactly
    ran = runs["nightly_manifest"]
    for step in ("install-rocm-sdk", "install-torch", "rocm-sdk-init"):
        assert argv_of(ran, step) == argv_of(nightly, step), step
    # the interpreter is the one placeholder of a plan: found when the run starts
    learned = ran["learned"]["INTERPRETER"]
    assert argv_of(ran, "create-env") == [a.replace("{INTERPRETER}", learned)
                                          for a in argv_of(nightly, "create-env")]
    # stable: the failed step's command is in the build log, as it ran
    commands = [ln[2:] for ln in runs["stable_log"].splitlines() if ln.startswith("$ ")]
    assert commands[-1] == " ".join(s_sdk)
    # the channel is part of the build's identity
    assert ran["identity"]["digest"] != runs["stable_manifest"]["identity"]["digest"]
    assert ran["identity"]["plan_sha256"] != runs["stable_manifest"]["identity"]["plan_sha256"]


def test_a_failed_stable_attempt_keeps_the_nightly_environment(runs: dict[str, Any]) -> None:
    """create-env sets a ready environment aside (``<env>.previous``) instead of deleting it;
    the stable install fails, the nightly environment waits there, and the next nightly run
    takes it back: reused, its SDK the pre-release, no install step run."""
    assert runs["nightly_ready"] and not runs["stable_ready"]
    assert runs["previous_ready"]
    again = runs["nightly_again"]
    out = again.stdout + again.stderr
    # provisioned from the environment set aside; then the sample's sources stop it (exit 5)
    assert toolkit_code(again.returncode, again.stderr) == 5, out[-3000:]
    log = runs["nightly_again_log"]
    assert "set aside for this definition is back" in log and "reused" in log, log[-3000:]
    for step in ("create-env", "install-rocm-sdk", "install-torch"):
        assert f"# {step}: skipped: environment up to date" in log
    assert runs["nightly_again_sdk"] == MULTI_ARCH_VERSION
