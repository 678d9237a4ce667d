"""Provisioning plans (pure), env stamps, system ROCm discovery and the version checks."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from toolkit.core.errors import EnvironmentProblem, UsageError
from toolkit.core.steps import Step, UseSystemRocm
from toolkit.data.matrix import Build, load_matrix
from toolkit.env import venvs
from toolkit.env.buildenv import RocmPaths
from toolkit.env.host import HostFacts, SystemRocm
from toolkit.env.rocm import check_version, find_system, major_minor
from toolkit.env.torchprobe import check_torch_hip
from toolkit.plan.layout import Layout
from toolkit.plan.locks import LockRef, inputs_hash, lock_name
from toolkit.plan.model import Options
from toolkit.plan.planner import plan
from toolkit.plan.provision import (
    provision_steps,
    sources_for,
    uv_index_args,
)

MATRIX = load_matrix()
LAYOUT = Layout(Path("/work"), Path("/cache"))
HOST = HostFacts()


DEFAULT = Options()


def _build(bid: str = "apex-1.8.0-cp312-rocm7.0") -> Build:
    return MATRIX.build(bid)


def _steps(opts: Options = DEFAULT, bid: str = "apex-1.8.0-cp312-rocm7.0",
           host: HostFacts = HOST) -> tuple[dict[str, Step], RocmPaths, str | None]:
    if opts.rocm_from is None and opts.channel is None:
        # ROCm 7.0's pip SDK: TheRock's legacy per-family nightlies (rocm.toml: its nightly
        # channel; the release's default is a system ROCm 7.0)
        opts = dataclasses.replace(opts, channel="nightly")
    steps, paths, family = provision_steps(MATRIX, _build(bid), opts, host, LAYOUT)
    return {s.name: s for s in steps}, paths, family


def test_per_family_sdk_step() -> None:
    steps, paths, family = _steps()
    sdk = steps["install-rocm-sdk"]
    assert family == "gfx94X-dcgpu"
    assert sdk.env["ROCM_SDK_TARGET_FAMILY"] == "gfx94X-dcgpu"
    assert "--prerelease=allow" in sdk.argv and "--refresh-package" in sdk.argv
    assert "https://rocm.nightlies.amd.com/v2/gfx94X-dcgpu/" in sdk.argv
    assert sdk.argv[-1] == "rocm[libraries,devel]>1.0,>=7.0.0a0,<7.1"
    assert paths.root == "{ROCM_ROOT}"
    assert list(steps) == ["check-env", "probe-indexes", "create-env", "install-rocm-sdk",
                           "pin-torch", "install-torch", "mark-env-ready"]
    assert all(steps[n].reuse_env for n in list(steps) if n != "check-env")
    probes = steps["probe-indexes"].action.probes  # type: ignore[union-attr]
    assert ("https://rocm.nightlies.amd.com/v2/gfx94X-dcgpu/", "rocm") in {
        (p.url, p.project) for p in probes}


def test_interpreter_placeholder_and_discovered_path() -> None:
    steps, _, _ = _steps()
    assert steps["check-env"].action.interpreter == "python3.12"  # type: ignore[union-attr]
    assert "{INTERPRETER}" in steps["create-env"].argv
    host = dataclasses.replace(HOST, interpreters={"3.12": "/opt/python/cp312-cp312/bin/python"})
    steps, _, _ = _steps(host=host)
    check = steps["check-env"].action
    assert check.interpreter == "/opt/python/cp312-cp312/bin/python"  # type: ignore[union-attr]
    # the environment's definition covers what is installed: another index, another digest
    other, _, _ = _steps(Options(index_url="http://mirror.example/", allow_insecure_index=True),
                         host=host)
    assert other["check-env"].action.definition != check.definition  # type: ignore[union-attr]


def test_family_from_gfx_prefers_narrowest() -> None:
    _, _, family = _steps(Options(gfx=("gfx1101",)))  # the 7.0-era families (rocm.toml)
    assert family == "gfx110X-dgpu"
    b = dataclasses.replace(_build(), rocm=dataclasses.replace(_build().rocm, families={}))
    _, _, family = provision_steps(MATRIX, b, Options(gfx=("gfx90a",), channel="nightly"), HOST,
                                   LAYOUT)
    assert family == "gfx90a"  # gpus.toml's families when a release lists none


def test_multi_arch_extras() -> None:
    m = dataclasses.replace(MATRIX.rocm["7.0"].sdk, provider="pip", layout="multi-arch",
                            legacy=False,
                            channels={"nightly": "https://rocm.nightlies.amd.com/whl-multi-arch/"})
    b = _build()
    torch = {k: dataclasses.replace(v, per_family=False) for k, v in b.rocm.torch.items()}
    b2 = dataclasses.replace(b, rocm=dataclasses.replace(b.rocm, sdk=m, torch=torch))
    steps, _, family = provision_steps(MATRIX, b2, Options(gfx=("gfx942", "gfx90a")), HOST, LAYOUT)
    sdk = {s.name: s for s in steps}["install-rocm-sdk"]
    assert family is None and "ROCM_SDK_TARGET_FAMILY" not in sdk.env
    assert sdk.argv[-1].startswith("rocm[libraries,devel,device-gfx942,device-gfx90a]>1.0")


def test_torch_index_keeps_therock_before_pypi() -> None:
    b = _build()
    therock = dataclasses.replace(b.rocm.torch["2.8"], kind="therock", find_links=None,
                                  index_url=None, per_family=True)
    b = dataclasses.replace(b, rocm=dataclasses.replace(b.rocm, torch={"2.8": therock}))
    # TheRock's torch installs from the SDK's channel (7.0: its nightly channel, per family)
    steps = {s.name: s for s in provision_steps(MATRIX, b, Options(channel="nightly"), HOST,
                                                LAYOUT)[0]}
    argv = steps["install-torch"].argv
    assert argv[argv.index("--index") + 1] == "https://rocm.nightlies.amd.com/v2/gfx94X-dcgpu/"
    assert argv[argv.index("--default-index") + 1] == "https://pypi.org/simple/"
    assert uv_index_args(["--index-url", "A", "--extra-index-url", "B"]) == ("--index", "A", "--index", "B")


def test_unknown_provider_is_usage_error() -> None:
    with pytest.raises(UsageError, match="unknown ROCm SDK provider 'conda'; valid: pip, system"):
        _steps(Options(rocm_from="conda"))


def test_insecure_index_refused_unless_allowed() -> None:
    with pytest.raises(UsageError, match=r"http://\*\*\*@mirror.example/"):
        _steps(Options(index_url="http://me:pw@mirror.example/"))
    steps, _, _ = _steps(Options(index_url="http://mirror.example/", allow_insecure_index=True))
    assert "http://mirror.example/gfx94X-dcgpu/" in steps["install-rocm-sdk"].argv


def test_system_provider_uses_the_discovered_root() -> None:
    steps, paths, _ = _steps(Options(rocm_from="system", allow_rocm_mismatch=True))
    sdk = steps["install-rocm-sdk"]
    assert sdk.argv == ("/opt/rocm/bin/hipconfig", "--version")
    assert isinstance(sdk.action, UseSystemRocm) and sdk.action.allow_mismatch
    assert "TOOLKIT_ALLOW_ROCM_MISMATCH" not in sdk.env  # no flags through the environment
    assert paths.root == "/opt/rocm"
    host = dataclasses.replace(HOST, system_rocm=SystemRocm("/usr", "5.2"))
    steps, paths, _ = _steps(Options(rocm_from="system"), host=host)
    assert steps["install-rocm-sdk"].argv == ("/usr/bin/hipconfig", "--version")
    action = steps["install-rocm-sdk"].action
    assert paths.root == "/usr" and isinstance(action, UseSystemRocm)
    assert not action.allow_mismatch


def test_rocm_sdk_test_step() -> None:
    steps, _, _ = _steps(Options(rocm_sdk_test=True))
    assert steps["rocm-sdk-test"].argv[-3:] == ("-m", "rocm_sdk", "test")


def test_lock_current_stale_and_opt_out() -> None:
    b = _build()
    name = lock_name(MATRIX, b)
    good = inputs_hash(b, sources_for(MATRIX, b, Options(channel="nightly")))
    ref = LockRef(name, f"/work/locks/{name}", good)
    steps, _, _ = _steps(Options(locks=(ref,)))
    for step in ("install-rocm-sdk", "install-torch"):
        argv = steps[step].argv
        assert "--require-hashes" in argv and argv[argv.index("-r") + 1] == ref.path
    stale = dataclasses.replace(ref, inputs="0" * 64)
    with pytest.raises(UsageError, match="is stale") as err:
        _steps(Options(locks=(stale,)))
    assert "nox -s lock-3.12-rocm7.0" in str(err.value)
    steps, _, _ = _steps(Options(locks=(stale,), no_lock=True))
    assert "-r" not in steps["install-torch"].argv


def test_plan_renders_credentials_masked() -> None:
    from toolkit.plan.model import render

    p1 = plan(MATRIX, _build(), Options(index_url="https://tok:secret@idx.example/v2/",
                                        channel="nightly"), HOST, LAYOUT)
    shown = render(p1)
    assert "secret" not in shown and "secret" not in p1.to_json()
    assert "https://***@idx.example/v2/" in shown


# ------------------------------------------------------------------ torch / version checks
def test_torch_hip_checks() -> None:
    assert check_torch_hip("2.8.0+rocm7.0", "7.0.51830", "7.0", "7.0", False) is None
    with pytest.raises(EnvironmentProblem) as err:
        check_torch_hip("2.7.0+rocm6.4", "6.4.43482", "7.0", "7.0", False)
    assert "HIP 6.4.43482 (6.4)" in str(err.value) and "needs HIP 7.0" in str(err.value)
    with pytest.raises(EnvironmentProblem, match=r"torch.version.hip is None"):
        check_torch_hip("2.13.0+cpu", None, "7.0", "7.0", False)
    warning = check_torch_hip("2.13.0+cpu", None, "7.0", "7.0", True)
    assert warning and warning.endswith("continuing because of --allow-rocm-mismatch")


def test_check_version_names_both() -> None:
    assert major_minor("7.0.0a20260101") == "7.0"
    assert check_version(what="x", found="6.4.3", session="6.4", allow=False) is None
    with pytest.raises(EnvironmentProblem, match=r"version 5.2 but .* ROCm 7.0 \(5.2 != 7.0\)"):
        check_version(what="the system ROCm", found="5.2", session="7.0", allow=False)


def test_find_system_version_sources(tmp_path: Path) -> None:
    opt = tmp_path / "opt"
    (opt / "rocm-6.4.3/.info").mkdir(parents=True)
    (opt / "rocm-6.4.3/bin").mkdir()
    (opt / "rocm-6.4.3/.info/version").write_text("6.4.3-127\n")
    (opt / "rocm-6.3.4/include/hip").mkdir(parents=True)
    (opt / "rocm-6.3.4/include/hip/hip_version.h").write_text(
        "#define HIP_VERSION_MAJOR 6\n#define HIP_VERSION_MINOR 3\n")
    env = {"PATH": ""}
    assert find_system(env, opt=opt).version == "6.4.3"
    got = find_system(env, opt=opt, want="6.3")
    assert (got.root, got.version) == (str(opt / "rocm-6.3.4"), "6.3")
    env2 = {"PATH": "", "ROCM_PATH": str(opt / "rocm-6.3.4")}
    assert find_system(env2, opt=opt).root == str(opt / "rocm-6.3.4")
    with pytest.raises(EnvironmentProblem, match="no system ROCm install found"):
        find_system({"PATH": ""}, opt=tmp_path / "empty")


# ------------------------------------------------------------------ stamps
def test_stamp_digest_inputs() -> None:
    steps = [("create-env", ("uv", "venv"), {}, ())]
    a = venvs.digest(steps, interpreter="/p 3.12.1", lock_text=None)
    assert a == venvs.digest(steps, interpreter="/p 3.12.1", lock_text=None)
    assert a != venvs.digest(steps, interpreter="/p 3.12.2", lock_text=None)
    assert a != venvs.digest(steps, interpreter="/p 3.12.1", lock_text="x==1")
    assert a != venvs.digest(steps, interpreter="/p 3.12.1", lock_text=None, toolkit_version="9")
    assert a != venvs.digest([("create-env", ("uv", "venv", "--seed"), {}, ())],
                             interpreter="/p 3.12.1", lock_text=None)


def test_stamp_ready_only_after_mark(tmp_path: Path) -> None:
    env = tmp_path / "env"
    (env / "bin").mkdir(parents=True)
    py = env / "bin" / "python"
    py.write_text("#!/bin/sh\n")
    py.chmod(0o755)
    assert venvs.is_ready(env, "d1") is None
    venvs.mark_ready(env, "d1", values={"ROCM_ROOT": "/r", "URL": "https://u:pw@h/"},
                     described={"argv": ["--index-url", "https://u:pw@h/"]})
    stamp = venvs.is_ready(env, "d1")
    assert stamp and stamp["values"]["ROCM_ROOT"] == "/r"
    assert "pw" not in (env / venvs.STAMP).read_text()
    assert venvs.is_ready(env, "d2") is None
    assert [p.name for p in env.iterdir() if p.name.startswith(".stamp-")] == []
    venvs.invalidate(env)
    assert venvs.is_ready(env, "d1") is None
    json.dumps(stamp)
