"""What a user reads when the matrix data or recorded options are wrong (survivors of the
seed-4 `nox -s mutants` sample, issue 19).

The truths: ROCm/TheRock docs/packaging/legacy_per_family_releases.md (per-family releases
are the legacy ones), ci.toml's documented trigger rule ("default" refuses --families), the
Options fields, and messages worked out by hand.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fixtures.data import edit
from toolkit.core.errors import DataError, UsageError
from toolkit.data.ci import github_matrix, load_ci
from toolkit.plan.model import options_from_json
from toolkit.plan.recipes import load_matrix
from toolkit.plan.recipes.fbgemm_gpu import tbb_source


def _data_error(data: Path) -> str:
    with pytest.raises(DataError) as info:
        load_ci(load_matrix(data))
    return str(info.value)


def test_a_per_family_sdk_without_legacy_reads_the_whole_rule(data_copy: Path) -> None:
    edit(data_copy / "rocm.toml", 'layout = "per-family", legacy = true,', 'layout = "per-family",')
    assert _data_error(data_copy).endswith(
        "TheRock's per-family releases are legacy and its multi-arch ones are not: per-family "
        "needs legacy = true, multi-arch takes no legacy "
        "(ROCm/TheRock docs/packaging/legacy_per_family_releases.md)")


def test_a_version_whose_pythons_torch_is_not_published_for_is_refused(data_copy: Path) -> None:
    # apex 1.9.0 (versions[5]) pairs torch 2.9 with ROCm 7.13, whose rocm.toml entry is
    # published for Python 3.10-3.14: give the version Python 3.9 only
    edit(data_copy / "apex.toml",
          'python = ["3.10", "3.11", "3.12", "3.13", "3.14", "3.14t"]', 'python = ["3.9"]')
    assert _data_error(data_copy).endswith(
        "apex.toml: versions[5].rocm: ROCm 7.13's torch 2.9 is published for Python "
        "3.10, 3.11, 3.12, 3.13, 3.14 only, none of this version's")


def test_families_refused_when_no_trigger_takes_them(data_copy: Path) -> None:
    ci = data_copy / "ci.toml"
    for trigger in ("schedule", "workflow_dispatch"):
        edit(ci, f'[triggers.{trigger}]\npython = "all"\nfamilies = "all"',
              f'[triggers.{trigger}]\npython = "all"\nfamilies = "default"')
    matrix = load_matrix(data_copy)
    with pytest.raises(UsageError) as info:
        github_matrix(matrix, load_ci(matrix), "push", families="gfx90a")
    assert str(info.value).endswith("--families applies to: no trigger")


def test_recorded_options_never_carry_locks() -> None:
    # locks belong to the running process, not to what a build recorded
    with pytest.raises(UsageError) as info:
        options_from_json({"locks": True})
    msg = str(info.value)
    assert msg.startswith("recorded options: unknown field 'locks'; valid: ")
    assert "locks" not in msg.split("valid: ")[1].split(", ")


def test_allow_rocm_mismatch_reaches_the_sdk_and_torch_install_checks() -> None:
    import dataclasses

    from toolkit.core.steps import InstallSdk, InstallTorch
    from toolkit.env.host import HostFacts
    from toolkit.plan.layout import Layout
    from toolkit.plan.model import Options
    from toolkit.plan.provision import provision_steps

    matrix = load_matrix()
    build = matrix.build("apex-1.11.0-cp312-rocm7.14")  # a TheRock pip SDK and torch
    for allow in (True, False):
        steps, _, _ = provision_steps(matrix, build, dataclasses.replace(
            Options(), allow_rocm_mismatch=allow), HostFacts(), Layout(Path("/w"), Path("/c")))
        actions = {s.name: s.action for s in steps}
        sdk, torch = actions["install-rocm-sdk"], actions["install-torch"]
        assert isinstance(sdk, InstallSdk) and isinstance(torch, InstallTorch)
        assert (sdk.allow_mismatch, torch.allow_mismatch) == (allow, allow)


def test_a_packages_tbb_source_is_read_from_its_toml() -> None:
    import tomllib

    from toolkit.data.matrix import DATA_DIR

    doc = tomllib.loads((Path(DATA_DIR) / "fbgemm_gpu.toml").read_text())
    want = {v["version"]: v.get("tbb") for v in doc["versions"]}
    assert any(want.values())
    got = {pv.version: tbb_source(pv) for pv in load_matrix().packages["fbgemm_gpu"].versions}
    assert set(got) == set(want)
    for version, tbb in want.items():
        g = got[version]
        assert (None if g is None else {"provider": g.provider, "spec": g.spec}) == (
            None if tbb is None else {"provider": tbb["provider"], "spec": tbb.get("spec")})


def test_a_default_family_may_be_named_by_its_alias(data_copy: Path) -> None:
    # gpus.toml: gfx94X-all is an alias of the gfx94X-dcgpu family
    edit(data_copy / "rocm.toml", 'hip = "6.1"\ndefault_family = "gfx94X-dcgpu"',
          'hip = "6.1"\ndefault_family = "gfx94X-all"')
    assert load_matrix(data_copy).rocm["6.1"].default_family == "gfx94X-all"


def test_submodules_are_fetched_into_the_sources_worktree() -> None:
    from toolkit.env.host import HostFacts
    from toolkit.plan.layout import Layout
    from toolkit.plan.model import Options
    from toolkit.plan.planner import plan

    matrix, layout = load_matrix(), Layout(Path("/w"), Path("/c"))
    build = matrix.build("fbgemm_gpu-1.3.0-cp312-rocm6.4")
    steps = {s["name"]: s for s in plan(matrix, build, Options(), HostFacts(), layout).as_json()["steps"]}
    # the submodules go into the very checkout get-sources made
    assert steps["get-submodules"]["action"]["worktree"] == steps["get-sources"]["action"]["worktree"]
    assert steps["get-submodules"]["action"]["worktree"] == str(layout.worktree(build))


def test_the_check_step_asks_a_gpu_wheel_for_every_planned_target() -> None:
    from toolkit.env.host import HostFacts
    from toolkit.plan.layout import Layout
    from toolkit.plan.model import Options
    from toolkit.plan.planner import plan

    matrix = load_matrix()
    p = plan(matrix, matrix.build("fbgemm_gpu-1.3.0-cp312-rocm6.4"), Options(gfx=("gfx90a", "gfx942")),
             HostFacts(), Layout(Path("/w"), Path("/c")))
    steps = {s["name"]: s for s in p.as_json()["steps"]}
    assert tuple(steps["check"]["action"]["gfx"]) == ("gfx90a", "gfx942") == p.targets


def test_a_generic_build_records_a_ref_git_resolves(tmp_path: Path) -> None:
    import subprocess

    from toolkit.plan.recipes.generic import generic_build

    build = generic_build("demo", "demo", "1.0", str(tmp_path), "3.12", load_matrix().rocm["7.1"])
    git = ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "x"], check=True)
    # git names the checked-out commit HEAD, case-sensitively (gitrevisions(7))
    done = subprocess.run([*git, "rev-parse", "--verify", "-q", build.pkg_version.ref],
                          capture_output=True, text=True)
    assert done.returncode == 0 and len(done.stdout.strip()) == 40
