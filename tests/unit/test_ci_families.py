"""Which GPU families each trigger builds (seed 002, "Build and Test PyTorch Python Packages in
CI", its per-trigger table): scheduled runs build "all non-broken families", a manual run
"defaults to all non-broken families", pull requests and pushes "gfx94x only".

Expectations come from the seed's words and from the data files read raw (tomllib), never from
the selection code; no ROCm release is enumerated, so a new release needs no test edit."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest
import tomllib

from tests.fixtures.data import edit
from toolkit.core.errors import UsageError
from toolkit.data.ci import github_matrix, load_ci
from toolkit.data.matrix import data_dir, load_matrix
from toolkit.data.matrix import load_matrix as load_data_matrix
from toolkit.plan.recipes import load_matrix as load_checked_matrix


def _raw(name: str, folder: Path | None = None) -> dict:  # type: ignore[type-arg]
    """A data file read raw, from the folder the loader reads (TOOLKIT_DATA_DIR honoured)."""
    with ((folder or data_dir()) / name).open("rb") as fh:
        return tomllib.load(fh)


def _families_per_build(trigger: str, **kw: object) -> dict[str, set[str]]:
    m = load_matrix()
    out: dict[str, set[str]] = defaultdict(set)
    for e in github_matrix(m, load_ci(m), trigger, **kw):  # type: ignore[arg-type]
        out[e.build.id].add(e.family)
    return out


def _expected_all(rocm: str) -> set[str]:
    """The stated rule, from the raw files: per runner class (ci.toml order), the first of its
    families with a member the release's era builds (gpus.toml), and, where the release's
    per-family index lists what it served (rocm.toml), one it served."""
    gpus, rel = _raw("gpus.toml"), _raw("rocm.toml")["releases"][rocm]
    era = set(gpus["eras"][rel["gpus"]]["targets"])
    served = rel.get("families", {}).get("served")
    out = set()
    for runner in _raw("ci.toml")["runners"]["test"].values():
        for fam in runner["families"]:
            members = gpus["families"].get(fam, {}).get("targets", [])
            if set(members) & era and (served is None or fam in served):
                out.add(fam)
                break
    return out


def test_schedule_builds_every_family_ci_can_test_per_build() -> None:
    m = load_matrix()
    got = _families_per_build("schedule")
    assert set(got) == {b.id for b in m.builds}
    for b in m.builds:
        assert got[b.id] == _expected_all(b.rocm.version), b.id
        assert b.rocm.default_family in got[b.id], "the default family is one of them"
    assert any(len(f) > 1 for f in got.values()), "more than the default family"


def test_a_manual_run_defaults_to_every_family_and_takes_families_given() -> None:
    assert _families_per_build("workflow_dispatch") == _families_per_build("schedule")
    narrowed = _families_per_build("workflow_dispatch", families="gfx94X-dcgpu")
    assert set().union(*narrowed.values()) == {"gfx94X-dcgpu"}


@pytest.mark.parametrize("trigger", ["pull_request", "push"])
def test_pull_requests_and_pushes_build_gfx94x_only(trigger: str) -> None:
    """Seed 002: "gfx94x only": one family per build, its release's default (rocm.toml, read
    raw): gfx94X-dcgpu, except where a release names another (6.0's gfx90X-dcgpu, which only
    pushes reach: pull requests build the newest versions, on newer releases)."""
    m = load_matrix()
    defaults = {v: r["default_family"] for v, r in _raw("rocm.toml")["releases"].items()}
    got = _families_per_build(trigger)
    assert got and all(f == {defaults[m.build(i).rocm.version]} for i, f in got.items())
    if trigger == "pull_request":
        assert {f for fams in got.values() for f in fams} == {"gfx94X-dcgpu"}


def test_the_legacy_70_index_builds_the_families_it_served() -> None:
    """ROCm 7.0's per-family index served gfx94X-dcgpu, gfx950-dcgpu, gfx110X-dgpu, gfx1151 and
    gfx120X-all (rocm.toml, from TheRock's family matrix of the time); CI has a runner class
    for all but gfx1151, and none for the gfx90X families the index never served."""
    got = _families_per_build("schedule")
    assert got["apex-1.8.0-cp312-rocm7.0"] == {"gfx94X-dcgpu", "gfx950-dcgpu", "gfx110X-dgpu",
                                               "gfx120X-all"}


KNOWN = """
[failures.demo-gfx950]
package = "apex"
families = ["gfx950-dcgpu"]
fails = "build-wheel"
reason = "a hand-made failure of every apex build for gfx950"
evidence = "ROCm/apex#1"
"""


def test_a_family_known_to_fail_is_left_out_of_the_schedule_and_retried_on_request(
        data_copy: Path) -> None:
    with (data_copy / "known_failures.toml").open("a") as fh:
        fh.write(KNOWN)
    m = load_matrix(data_copy)
    config = load_ci(m)
    entries = github_matrix(m, config, "schedule")
    apex = [e for e in entries if e.build.package.name == "apex"]
    assert apex and not [e for e in apex if e.family == "gfx950-dcgpu"]
    assert [e for e in entries if e.build.package.name == "fbgemm_gpu" and e.family == "gfx950-dcgpu"]
    retried = github_matrix(m, config, "schedule", include_known_failures=True)
    back = {e.artifact for e in retried} - {e.artifact for e in entries}
    assert back and all(a.endswith("-gfx950-dcgpu") and a.startswith("apex-") for a in back)
    assert {e.known_failure for e in retried if e.artifact in back} == {"demo-gfx950"}


CI_TOML = Path(__file__).resolve().parents[2] / "toolkit" / "data" / "ci.toml"


def test_every_family_of_a_test_class_runs_on_that_class_as_ci_toml_says() -> None:
    raw = tomllib.loads(CI_TOML.read_text())["runners"]["test"]
    config = load_ci(load_data_matrix())
    families = sorted(f for cls in raw.values() for f in cls["families"])
    assert config.families == families
    for name, cls in raw.items():
        for fam in cls["families"]:
            runner = config.runner_for(fam)
            assert (runner.name, runner.label, runner.gfx) == (name, cls["label"], cls["gfx"])
            assert runner.families == tuple(cls["families"])


def test_a_family_no_test_class_carries_is_refused_by_name_with_the_valid_ones() -> None:
    config = load_ci(load_data_matrix())
    with pytest.raises(UsageError) as err:
        config.runner_for("gfx9000")
    assert str(err.value) == ("unknown GPU family for CI 'gfx9000'; valid: "
                              + ", ".join(config.families))
    assert err.value.exit_code == 2


def test_families_refused_when_no_trigger_takes_them(data_copy: Path) -> None:
    ci = data_copy / "ci.toml"
    for trigger in ("schedule", "workflow_dispatch"):
        edit(ci, f'[triggers.{trigger}]\npython = "all"\nfamilies = "all"',
              f'[triggers.{trigger}]\npython = "all"\nfamilies = "default"')
    matrix = load_checked_matrix(data_copy)
    with pytest.raises(UsageError) as info:
        github_matrix(matrix, load_ci(matrix), "push", families="gfx90a")
    assert str(info.value).endswith("--families applies to: no trigger")
