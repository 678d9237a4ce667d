"""``matrix --explain ID``: where a build's ROCm comes from and which targets it builds without
``--gfx``, in the README's terms ("ROCm channels"): a released TheRock line installs its pip
SDK from its ``stable`` channel (``rocm[libraries,devel]>1.0,>=X.Y.Z,<X.Y+1``); a release whose
default is a system ROCm (6.x, 7.0) says so, and names the channel ``--channel`` can take
instead (7.0: ``nightly``) or that it has none; the default targets are the release's default
family, with the evidence of the families its index serves where it has such families, else
``gpus.toml``."""

from __future__ import annotations

import pytest

from toolkit.cli.main import main


def _one_build(rocm: str, capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["matrix", "--ids", "--package", "apex", "--rocm", rocm, "--python", "3.12"]) == 0
    return capsys.readouterr().out.splitlines()[0]


def _facts(build_id: str, capsys: pytest.CaptureFixture[str]) -> dict[str, tuple[str, str]]:
    """fact -> (value, the line under it), from the explanation."""
    assert main(["matrix", "--explain", build_id]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == build_id
    out: dict[str, tuple[str, str]] = {}
    for i, line in enumerate(lines[1:], start=1):
        if line[2:3] != " " and line.startswith("  "):
            fact, value = line[2:13].strip(), line[14:]
            below = lines[i + 1].strip() if i + 1 < len(lines) and lines[i + 1][2:3] == " " else ""
            out.setdefault(fact, (value, below))
    return out


def test_a_released_line_installs_its_stable_channel(capsys: pytest.CaptureFixture[str]) -> None:
    facts = _facts(_one_build("7.14", capsys), capsys)
    sdk, evidence = facts["rocm sdk"]
    assert sdk.startswith("TheRock pip SDK rocm[libraries,devel]>1.0,>=7.14.0,<7.15 from its "
                          "stable channel https://")
    assert "; channels: stable https://" in sdk and evidence.startswith("evidence: ")


def test_a_system_release_names_the_channel_it_could_take(capsys: pytest.CaptureFixture[str]) -> None:
    facts = _facts(_one_build("7.0", capsys), capsys)
    assert facts["rocm sdk"][0].startswith("system install of ROCm 7.0 (pip SDK with --channel: "
                                           "nightly https://")
    targets, why = facts["targets"]
    assert targets.endswith(" without --gfx (ROCm 7.0's default family gfx94X-dcgpu)")
    assert why.startswith("evidence: ROCm/TheRock@")
    served, served_why = facts["families"]
    assert served.startswith("served by ROCm 7.0's index: gfx94X-dcgpu (gfx942); ")
    assert served_why == why


def test_a_release_without_a_pip_sdk_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    facts = _facts(_one_build("6.4", capsys), capsys)
    sdk, _ = facts["rocm sdk"]
    assert sdk.startswith("system install of ROCm 6.4") and sdk.endswith(" (no pip SDK)")
    targets, why = facts["targets"]
    assert targets.endswith(" without --gfx (ROCm 6.4's default family gfx94X-dcgpu)")
    assert why == "the release's default family (gpus.toml)"
    assert "families" not in facts


def test_a_version_with_its_own_default_targets_names_them_as_its_own(
        capsys: pytest.CaptureFixture[str]) -> None:
    """fbgemm_gpu 1.3.0's data (toolkit/data/fbgemm_gpu.toml) records ``default_targets =
    { "6" = ["gfx908", "gfx90a", "gfx942"] }`` from its own build script: on ROCm 6.4 those
    are the targets, said to be the version's own, with its evidence."""
    facts = _facts("fbgemm_gpu-1.3.0-cp312-rocm6.4", capsys)
    targets, why = facts["targets"]
    assert targets.startswith("gfx908, gfx90a, gfx942 without --gfx (")
    assert targets.endswith("(fbgemm_gpu 1.3.0's own defaults on ROCm 6.4)")
    assert why.startswith("evidence: pytorch/FBGEMM@")
