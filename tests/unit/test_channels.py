"""TheRock releases install from their channels (issue 28, part 2): a released line from its
stable channel (releases only), ``--channel`` another one, a channel the release lacks refused
in one line (exit 2) naming the valid ones; the channel is part of the plan, the identity and
the manifest; GPU targets follow each release's tag.

The truths are hand-read at the upstream refs (and re-read from the mirrors when
``TOOLKIT_UPSTREAM_DIR`` holds ROCm/TheRock): ``build_tools/setup_venv.py`` at tag
therock-7.14 (418cd5f63) names the stable channel https://repo.amd.com/rocm/whl/, and
``build_tools/github_actions/publish_pytorch_to_release_bucket.py`` there the nightly one,
https://rocm.nightlies.amd.com/whl-multi-arch/; at tag therock-7.13 (6d2136cd1) the
multi-arch channels are stable (setup_venv.py) and nightly (RELEASES.md); version.json says
7.14.0 and 7.13.0 at the tags; cmake/therock_amdgpu_targets.cmake lists gfx1250 at
therock-7.14 and not at therock-7.13. Requirements are worked out by hand from rocm.toml's
header: stable ``>=X.Y.Z,<X.Y+1``, the others ``>=X.Y.Za0,<X.Y+1``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from toolkit.core.errors import UsageError
from toolkit.env.host import HostFacts
from toolkit.plan.layout import Layout
from toolkit.plan.model import Options, Plan, options_json, render
from toolkit.plan.planner import plan
from toolkit.plan.recipes import load_matrix
from toolkit.run.identity import planned_identity
from toolkit.run.manifest import sdk_facts

ROOT = Path(__file__).resolve().parents[2]
LAYOUT = Layout(Path("/w"), Path("/c"))
HOST = HostFacts(cores=8, mem_available_gib=32.0)
BUILD = "apex-1.11.0-cp312-rocm7.14"
STABLE_714 = "https://repo.amd.com/rocm/whl/"  # setup_venv.py at therock-7.14
NIGHTLY_714 = "https://rocm.nightlies.amd.com/whl-multi-arch/"  # publish_pytorch_... there


def _plan(build_id: str = BUILD, **opts: object) -> Plan:
    m = load_matrix()
    return plan(m, m.build(build_id), Options(**opts), HOST, LAYOUT)  # type: ignore[arg-type]


def _argv(p: Plan, step: str) -> tuple[str, ...]:
    return p.step(step).argv


def test_a_released_line_installs_from_its_stable_channel_releases_only() -> None:
    p = _plan(gfx=("gfx942",))
    sdk, torch = _argv(p, "install-rocm-sdk"), _argv(p, "install-torch")
    assert sdk[sdk.index("--index-url") + 1] == STABLE_714
    assert sdk[-1] == "rocm[libraries,devel,device-gfx942]>1.0,>=7.14.0,<7.15"
    assert torch[torch.index("--index") + 1] == STABLE_714  # the SDK's channel, no own index
    for argv in (sdk, torch):
        assert not any(a.startswith("--prerelease") for a in argv), argv  # uv's default
    assert ("install the ROCm 7.14 SDK from TheRock's stable channel "
            f"{STABLE_714} (") in render(p)
    assert p.channel == "stable"


def test_the_nightly_channel_allows_pre_releases_of_the_line() -> None:
    p = _plan(gfx=("gfx942",), channel="nightly")
    sdk, torch = _argv(p, "install-rocm-sdk"), _argv(p, "install-torch")
    assert sdk[sdk.index("--index-url") + 1] == NIGHTLY_714
    assert sdk[-1] == "rocm[libraries,devel,device-gfx942]>1.0,>=7.14.0a0,<7.15"
    assert torch[torch.index("--index") + 1] == NIGHTLY_714
    assert "--prerelease=allow" in sdk and "--prerelease=allow" in torch
    assert f"TheRock's nightly channel {NIGHTLY_714}" in render(p)


def test_the_channel_is_part_of_the_identity_and_the_manifest() -> None:
    stable, nightly = _plan(gfx=("gfx942",)), _plan(gfx=("gfx942",), channel="nightly")
    a, b = planned_identity(stable, LAYOUT), planned_identity(nightly, LAYOUT)
    assert a["plan_sha256"] != b["plan_sha256"]
    assert (options_json(stable.options)["channel"],  # type: ignore[arg-type]
            options_json(nightly.options)["channel"]) == (None, "nightly")  # type: ignore[arg-type]
    facts = sdk_facts(stable.as_json(), {}, stable.channel)
    assert (facts["channel"], facts["index_urls"][0]) == ("stable", STABLE_714)
    assert sdk_facts(nightly.as_json(), {}, nightly.channel)["channel"] == "nightly"


def test_gfx1250_is_built_by_714_and_refused_by_713() -> None:
    p = _plan(gfx=("gfx1250",))
    assert p.targets == ("gfx1250",)
    assert _argv(p, "install-rocm-sdk")[-1].startswith("rocm[libraries,devel,device-gfx1250]")
    with pytest.raises(UsageError, match=r"ROCm 7\.13's compilers do not build gfx1250"):
        _plan("apex-1.11.0-cp312-rocm7.13", gfx=("gfx1250",))


def test_a_channel_the_release_lacks_names_its_channels() -> None:
    with pytest.raises(UsageError) as err:
        _plan("apex-1.11.0-cp312-rocm7.13", channel="dev")
    # what the line must name (not its exact words): the release, the channel asked for, and
    # every channel the data gives that release, as the valid ones
    message = str(err.value)
    channels = load_matrix().build("apex-1.11.0-cp312-rocm7.13").rocm.sdk.channels
    assert "dev" not in channels and channels, channels
    assert "7.13" in message and "'dev'" in message, message
    valid = message.split("valid:", 1)[1]
    assert sorted(v.strip() for v in valid.split(",")) == sorted(channels), message
    assert "\n" not in message and err.value.exit_code == 2


def test_70_is_a_system_rocm_unless_a_channel_picks_theirs() -> None:
    """pytorch/test-infra@e8208cf27 generate_binary_build_matrix.py builds rocm7.0 wheels in
    pytorch/manylinux2_28-builder:rocm7.0 (a system ROCm); TheRock's 7.0.0 pip packages are
    its legacy per-family nightlies (setup_venv.py at de9728b3d: rocm.nightlies.amd.com/v2)."""
    system = _plan("apex-1.10.0-cp312-rocm7.0", gfx=("gfx942",))
    assert _argv(system, "install-rocm-sdk")[-1] == "--version"  # hipconfig: a system install
    assert system.channel is None
    pip = _plan("apex-1.10.0-cp312-rocm7.0", gfx=("gfx942",), channel="nightly")
    sdk = _argv(pip, "install-rocm-sdk")
    assert sdk[sdk.index("--index-url") + 1] == "https://rocm.nightlies.amd.com/v2/gfx94X-dcgpu/"
    assert sdk[-1] == "rocm[libraries,devel]>1.0,>=7.0.0a0,<7.1"
    with pytest.raises(UsageError, match=r"^ROCm 6\.4 has no 'nightly' channel; valid: none"):
        _plan("apex-1.9.0-cp312-rocm6.4", channel="nightly")


def _cli(*argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1"}
    env.pop("TOOLKIT_ROCM_CHANNEL", None)
    return subprocess.run([sys.executable, *argv], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120, check=False)


@pytest.mark.parametrize("front", [("-m", "toolkit", "plan"), ("-m", "invoke", "plan")],
                         ids=["python-m-toolkit", "invoke"])
def test_a_bad_channel_is_one_line_exit_2(front: tuple[str, ...]) -> None:
    res = _cli(*front, "apex-1.11.0-cp312-rocm7.13", "--channel", "dev")
    assert res.returncode == 2, res.stderr
    assert res.stderr.strip() == "error: ROCm 7.13 has no 'dev' channel; valid: stable, nightly"
    assert "Traceback" not in res.stderr and res.stdout == ""
    res = _cli(*front, "apex-1.11.0-cp312-rocm7.14", "--channel", "beta")
    assert res.returncode == 2, res.stderr
    assert res.stderr.strip() == ("error: unknown channel 'beta'; valid: stable, prerelease, "
                                  "nightly, dev")


def test_invoke_plans_714_from_stable_and_takes_gfx1250() -> None:
    res = _cli("-m", "invoke", "plan", "apex-1.11.0-cp312-rocm7.14", "--gfx", "gfx1250")
    assert res.returncode == 0, res.stderr
    assert f"from TheRock's stable channel {STABLE_714}" in res.stdout
    assert "'rocm[libraries,devel,device-gfx1250]>1.0,>=7.14.0,<7.15'" in res.stdout
    res = _cli("-m", "invoke", "plan", "apex-1.11.0-cp312-rocm7.14", "--channel", "nightly")
    assert res.returncode == 0 and f"TheRock's nightly channel {NIGHTLY_714}" in res.stdout


# ----------------------------------------------------------------------------- the mirror
def _therock() -> Path:
    folder = os.environ.get("TOOLKIT_UPSTREAM_DIR")
    repo = Path(folder or "/nonexistent") / "ROCm+TheRock" / "repo"
    if not folder or not repo.is_dir():
        pytest.skip("TOOLKIT_UPSTREAM_DIR holds no ROCm+TheRock mirror")
    return repo


def _show(repo: Path, ref: str, path: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "show", f"{ref}:{path}"], capture_output=True,
                          text=True, check=True, timeout=60).stdout


def test_the_hand_read_values_are_the_tags() -> None:
    repo = _therock()
    venv = _show(repo, "therock-7.14", "build_tools/setup_venv.py")
    assert f'"stable": "{STABLE_714}"' in venv
    bucket = _show(repo, "therock-7.14",
                   "build_tools/github_actions/publish_pytorch_to_release_bucket.py")
    assert f'"nightly": "{NIGHTLY_714}"' in bucket
    assert '"7.14.0"' in _show(repo, "therock-7.14", "version.json")
    targets = {ref: set(re.findall(r"therock_add_amdgpu_target\((gfx[0-9a-z]+)",
                                   _show(repo, ref, "cmake/therock_amdgpu_targets.cmake")))
               for ref in ("therock-7.13", "therock-7.14")}
    assert "gfx1250" in targets["therock-7.14"] and "gfx1250" not in targets["therock-7.13"]
    m = load_matrix()
    for version, ref in (("7.13", "therock-7.13"), ("7.14", "therock-7.14")):
        era = m.rocm[version].era
        assert era is not None and set(era.targets) == targets[ref], version


def test_explain_names_the_channel_torch_and_the_sdk_come_from() -> None:
    """`matrix --explain`: a TheRock torch has no index of its own, it comes from the SDK's
    default channel; the URL is rocm.toml's, read raw (not through the loader)."""
    import tomllib

    from toolkit.cli.commands.matrix import explain
    from toolkit.data.matrix import data_dir

    raw = tomllib.loads((data_dir() / "rocm.toml").read_text())["releases"]["7.14"]
    stable = raw["channels"]["stable"]
    rows = {fact: value for fact, value, _ in explain("apex-1.11.0-cp312-rocm7.14") if fact}
    assert rows["torch"].endswith(f"from the SDK's stable channel {stable}")
    assert f"from its stable channel {stable}" in rows["rocm sdk"]
    system = {fact: value for fact, value, _ in explain("apex-1.8.0-cp312-rocm7.0") if fact}
    assert system["rocm sdk"].startswith("system install of ROCm 7.0 (pip SDK with --channel: ")
