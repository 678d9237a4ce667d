"""A ROCm SDK or torch install from TheRock's stable channel that fails says why it may have
(``toolkit.run.provisioning.on_stable``): the stable channel takes releases only, so a line
that published nothing but nightlies or release candidates has nothing there; its hint names
the channels that do take pre-releases. An install from another channel fails as it is.

The truths: rocm.toml read with tomllib (ROCm 7.13's channels, its default is stable: a released
line) and the real uv the toolkit installs with, run ``--offline`` with an empty cache so it
fails as a real resolution failure (no network asked) into a throwaway venv."""

from __future__ import annotations

import dataclasses
import io
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

from toolkit.core.errors import CommandStepFailed
from toolkit.core.steps import InstallSdk, InstallTorch
from toolkit.data.matrix import data_dir
from toolkit.env.host import HostFacts
from toolkit.plan.layout import Layout
from toolkit.plan.model import Options
from toolkit.plan.planner import plan
from toolkit.plan.recipes import load_matrix
from toolkit.run import provisioning
from toolkit.run.context import Run

BUILD = "apex-1.9.0-cp312-rocm7.13"
UV = Path(sys.executable).parent / "uv"
HANDLERS = {"install-rocm-sdk": provisioning.install_sdk,
            "install-torch": provisioning.install_torch}


def failed_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str,
                   options: Options) -> CommandStepFailed:
    """The plan's own install step, run for real by uv (offline, empty cache): its error."""
    if not UV.exists():
        pytest.skip("no uv beside this interpreter")
    monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "uv-cache"))
    layout = Layout(tmp_path / "work", tmp_path / "cache")
    m = load_matrix()
    b = m.build(BUILD)
    p = plan(m, b, options, HostFacts(cores=2, mem_available_gib=8.0, uv=str(UV)), layout)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(layout.env_dir(b))],
                   check=True, timeout=120)
    step = p.step(name)
    action = step.action
    assert isinstance(action, InstallSdk | InstallTorch)
    offline = dataclasses.replace(action.install, argv=(*action.install.argv, "--offline"))
    step = dataclasses.replace(step, action=dataclasses.replace(action, install=offline))
    run = Run(p, layout, io.StringIO())
    run.values["TOOLS_PATH"] = str(layout.env_dir(b) / "bin")  # what create-env learns
    with pytest.raises(CommandStepFailed) as caught:
        HANDLERS[name](step, run)
    return caught.value


@pytest.mark.parametrize("name", list(HANDLERS))
def test_a_failed_install_from_the_stable_channel_names_the_channels_with_pre_releases(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    channels = tomllib.loads((data_dir() / "rocm.toml").read_text())["releases"]["7.13"]["channels"]
    others = sorted(c for c in channels if c not in ("stable", "evidence"))
    assert others == ["nightly"]
    err = failed_install(tmp_path, monkeypatch, name, Options(gfx=("gfx942",)))
    assert err.exit_code == 5 and err.returncode not in (0, None)
    assert "7.13" in err.message and "stable" in err.message and "pre-release" in err.message
    assert "--offline" in err.message  # the failed command itself stays in the message
    assert err.hint is not None and "--channel nightly" in err.hint and "pre-release" in err.hint


def test_a_failed_install_from_another_channel_is_not_blamed_on_stable(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    err = failed_install(tmp_path, monkeypatch, "install-rocm-sdk",
                         Options(gfx=("gfx942",), channel="nightly"))
    assert err.exit_code == 5 and "--offline" in err.message
    assert "stable" not in err.message and "pre-release" not in err.message
    assert err.hint is None or "--channel" not in err.hint
