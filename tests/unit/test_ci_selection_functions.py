"""``github_matrix`` (toolkit.data.ci) pinned whole (issue 19, part 8): every branch of the
selection, on builds named by hand, with the entries worked out from the data files (apex.toml's
versions and Pythons, gpus.toml's families and eras, ci.toml's runner classes)."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolkit.core.errors import UsageError
from toolkit.data.ci import CiConfig, github_matrix, load_ci
from toolkit.data.matrix import Build, Matrix, load_matrix


@pytest.fixture(scope="module")
def loaded() -> tuple[Matrix, CiConfig]:
    m = load_matrix()
    return m, load_ci(m)


def _rows(entries: list) -> list[tuple[str, str, tuple[str, ...], str, str, str]]:  # type: ignore[type-arg]
    return [(e.build.id, e.family, e.gfx, e.runner, e.test_runner.label, e.known_failure)
            for e in entries]


def _builds(m: Matrix, *ids: str) -> list[Build]:
    return [m.build(i) for i in ids]


CPU = "linux-x86_64-cpu"  # ci.toml runners.build
Loaded = tuple[Matrix, CiConfig]


def test_a_requested_family_outside_one_releases_era_skips_only_that_family(loaded: Loaded) -> None:
    """gfx950 is no target of the rocm-6 era, gfx942 is (gpus.toml); ROCm 7.0's era
    (therock-7.0) has both, and gfx1201 of gfx120X-all but not gfx1200."""
    m, config = loaded
    builds = _builds(m, "apex-1.7.0-cp312-rocm6.4", "apex-1.8.0-cp312-rocm7.0")
    got = github_matrix(m, config, "workflow_dispatch", builds=builds,
                        families="gfx950-dcgpu,gfx120X-all;gfx94X-dcgpu")
    assert _rows(got) == [
        ("apex-1.7.0-cp312-rocm6.4", "gfx94X-dcgpu", ("gfx942",), CPU, "linux-mi300-gpu", ""),
        ("apex-1.8.0-cp312-rocm7.0", "gfx950-dcgpu", ("gfx950",), CPU, "linux-mi355-gpu", ""),
        ("apex-1.8.0-cp312-rocm7.0", "gfx120X-all", ("gfx1201",), CPU, "linux-rx9070-gpu", ""),
        ("apex-1.8.0-cp312-rocm7.0", "gfx94X-dcgpu", ("gfx942",), CPU, "linux-mi300-gpu", ""),
    ]


def test_requested_families_are_split_trimmed_and_taken_once_in_order(loaded: Loaded) -> None:
    m, config = loaded
    builds = _builds(m, "apex-1.7.0-cp312-rocm6.4")
    got = github_matrix(m, config, "schedule", builds=builds,
                        families=[" gfx90a ; gfx94X-dcgpu", "gfx90a,,gfx94X-dcgpu"])
    assert [(e.family, e.gfx, e.test_runner.name) for e in got] == [
        ("gfx90a", ("gfx90a",), "mi250"), ("gfx94X-dcgpu", ("gfx942",), "mi300")]


def test_without_families_each_build_gets_its_releases_default(loaded: Loaded) -> None:
    m, config = loaded
    builds = _builds(m, "apex-1.4.0-cp38-rocm6.0", "apex-1.4.0-cp38-rocm6.1")
    got = github_matrix(m, config, "push", builds=builds)
    # rocm.toml: 6.0's default family is gfx90X-dcgpu (gfx906, gfx908, gfx90a), 6.1's gfx94X-dcgpu
    assert _rows(got) == [
        ("apex-1.4.0-cp38-rocm6.0", "gfx90X-dcgpu", ("gfx906", "gfx908", "gfx90a"), CPU,
         "linux-mi250-gpu", ""),
        ("apex-1.4.0-cp38-rocm6.1", "gfx94X-dcgpu", ("gfx942",), CPU, "linux-mi300-gpu", ""),
    ]


def test_a_pull_request_takes_the_newest_version_and_its_newest_plain_python(loaded: Loaded) -> None:
    """Newest by version, not by text: apex 1.10.0 over 1.9.0, Python 3.13 over 3.9 and over
    the free-threaded 3.13t; each build style (recipe path) keeps its own newest."""
    m, config = loaded
    pool = [b for b in m.builds if b.package.name == "apex" and b.rocm.version in ("6.1", "7.13")
            and b.version in ("1.6.0", "1.5.0", "1.9.0", "1.10.0")]
    got = github_matrix(m, config, "pull_request", builds=pool)
    # apex.toml: 1.5.0 and 1.6.0 (ext-flags) on 6.1, 1.9.0 and 1.10.0 (jit-prebuild) on 7.13;
    # 1.6.0's Pythons end 3.12, 3.13, 3.13t; 1.10.0's on 7.13 end 3.13, 3.13t, 3.14, 3.14t, and
    # TheRock's torch 2.10 there serves 3.10-3.14 (rocm.toml)
    assert [e.build.id for e in got] == ["apex-1.6.0-cp313-rocm6.1", "apex-1.10.0-cp314-rocm7.13"]
    assert {e.family for e in got} == {"gfx94X-dcgpu"}


def test_push_keeps_every_version_and_python(loaded: Loaded) -> None:
    m, config = loaded
    pool = [b for b in m.builds if b.package.name == "apex" and b.rocm.version == "6.1"]
    got = github_matrix(m, config, "push", builds=pool)
    assert [e.build for e in got] == pool  # in matrix order
    assert len(pool) == 5 + 4 + 6  # apex 1.4.0, 1.5.0, 1.6.0 on ROCm 6.1 (apex.toml)


def test_refusals_name_what_was_wrong_and_what_is_valid(loaded: Loaded) -> None:
    m, config = loaded
    with pytest.raises(UsageError) as err:
        github_matrix(m, config, "nightly")
    assert str(err.value) == ("unknown trigger 'nightly'; valid: pull_request, push, schedule, "
                              "workflow_dispatch")
    with pytest.raises(UsageError) as err:
        github_matrix(m, config, "push", families="gfx90a")
    assert str(err.value) == (
        "trigger 'push' builds each ROCm release's default family only (ci.toml: "
        "triggers.push.families = 'default'); --families applies to: schedule, workflow_dispatch")
    with pytest.raises(UsageError) as err:
        github_matrix(m, config, "schedule", families="gfx94X-dcgpu,gfx90c")
    assert str(err.value) == ("unknown GPU family for CI 'gfx90c'; valid: " + ", ".join(config.families))
    # ci.toml's runner classes: mi300, mi355, mi250, mi100, rx7900, rx9070
    assert config.families == ["gfx110X-all", "gfx110X-dgpu", "gfx120X-all", "gfx908",
                               "gfx90X-dcgpu", "gfx90a", "gfx94X-dcgpu", "gfx950-dcgpu"]
    with pytest.raises(UsageError) as err:
        github_matrix(m, config, "push", include_known_failures=True)
    assert "not 'push'" in str(err.value)


KNOWN = """
[failures.demo-one]
package = "apex"
versions = "==1.7.0"
rocm = "==6.4"
python = ["3.12"]
fails = "build-wheel"
reason = "a demo"
evidence = "ROCm/apex#1"

[failures.demo-two]
package = "apex"
versions = ">=1.7"
rocm = "==6.4"
families = ["gfx94X-dcgpu"]
fails = "smoke"
reason = "another demo"
evidence = "ROCm/apex#2"
"""


def test_known_failures_leave_or_carry_every_entry_that_selects_them(data_copy: Path) -> None:
    with (data_copy / "known_failures.toml").open("a") as fh:
        fh.write(KNOWN)
    m = load_matrix(data_copy)
    config = load_ci(m)
    builds = _builds(m, "apex-1.7.0-cp312-rocm6.4", "apex-1.7.0-cp311-rocm6.4")
    # demo-two selects both builds for gfx94X-dcgpu only; demo-one the cp312 build for any target
    assert github_matrix(m, config, "schedule", builds=builds, families="gfx90a,gfx94X-dcgpu") == \
        github_matrix(m, config, "schedule", builds=builds[1:], families="gfx90a")
    assert [e.build.id for e in github_matrix(m, config, "schedule", builds=builds,
                                              families="gfx90a")] == ["apex-1.7.0-cp311-rocm6.4"]
    got = github_matrix(m, config, "workflow_dispatch", builds=builds, families="gfx90a,gfx94X-dcgpu",
                        include_known_failures=True)
    assert [(e.build.id, e.family, e.known_failure) for e in got] == [
        ("apex-1.7.0-cp312-rocm6.4", "gfx90a", "demo-one"),
        ("apex-1.7.0-cp312-rocm6.4", "gfx94X-dcgpu", "demo-one,demo-two"),
        ("apex-1.7.0-cp311-rocm6.4", "gfx90a", ""),
        ("apex-1.7.0-cp311-rocm6.4", "gfx94X-dcgpu", "demo-two"),
    ]


# ----------------------------------------------------------------------------- load_ci
def _ci_error(data: Path) -> str:
    from toolkit.core.errors import DataError

    with pytest.raises(DataError) as err:
        load_ci(load_matrix(data))
    assert err.value.exit_code == 3
    return str(err.value)


def test_ci_toml_is_read_whole(data_copy: Path) -> None:
    import tomllib

    ci = data_copy / "ci.toml"
    raw = tomllib.loads(ci.read_text())
    config = load_ci(load_matrix(data_copy), ci)  # an explicit path: the same file
    assert config.source == ci and config.build_runner == raw["runners"]["build"] == CPU
    assert {e: (r.event, r.python, r.families, r.versions) for e, r in config.triggers.items()} == {
        e: (e, r["python"], r["families"], r.get("versions", "all")) for e, r in raw["triggers"].items()}
    assert [(r.name, r.label, r.gfx, r.families) for r in config.test_runners] == [
        (n, r["label"], r["gfx"], tuple(r["families"])) for n, r in raw["runners"]["test"].items()]
    assert load_ci(load_matrix(data_copy)).source == ci  # by default: beside the matrix data


def test_a_family_in_two_runner_classes_names_both(data_copy: Path) -> None:
    ci = data_copy / "ci.toml"
    from tests.fixtures.data import edit

    edit(ci, 'families = ["gfx908"]', 'families = ["gfx908", "gfx90a"]')
    assert _ci_error(data_copy) == (f'{ci}: runners.test."mi100".families: \'gfx90a\' is already '
                                    "tested by runner class 'mi250'; a family belongs to one class")


def test_a_runners_gfx_outside_one_of_its_families_names_that_familys_targets(data_copy: Path) -> None:
    ci = data_copy / "ci.toml"
    from tests.fixtures.data import edit

    # gfx90a is a member of gfx90X-dcgpu (gfx906, gfx908, gfx90a) and of gfx90a: add gfx908
    edit(ci, 'families = ["gfx908"]', 'families = ["gfx908-dcgpu"]')  # gfx908's alias, moved
    edit(ci, 'families = ["gfx90X-dcgpu", "gfx90a"]', 'families = ["gfx90X-dcgpu", "gfx90a", "gfx908"]')
    assert _ci_error(data_copy) == (f'{ci}: runners.test."mi250".gfx: \'gfx90a\' is not a target of '
                                    "family 'gfx908'; valid: gfx908")


# ----------------------------------------------------------------------------- entries as JSON
def test_only_a_per_family_sdk_gets_a_family_argument(loaded: Loaded) -> None:
    """rocm.toml: 7.0's default is a system install (TheRock's per-family index is only its
    nightly channel), 7.13's SDK multi-arch, 6.4's a system install: none takes --family; a
    release whose default is a per-family pip index does (7.0 made one here)."""
    import dataclasses

    m, config = loaded
    builds = _builds(m, "apex-1.8.0-cp312-rocm7.0", "apex-1.9.0-cp312-rocm7.13", "apex-1.8.0-cp312-rocm6.4")
    got = [e.as_json() for e in github_matrix(m, config, "push", builds=builds)]
    pip70 = dataclasses.replace(builds[0].rocm, sdk=dataclasses.replace(builds[0].rocm.sdk,
                                                                        provider="pip"))
    [pip] = github_matrix(m, config, "push", builds=[dataclasses.replace(builds[0], rocm=pip70)])
    assert pip.as_json()["sdk_family"] == "gfx94X-dcgpu"
    assert [(e["artifact"], e["sdk_family"]) for e in got] == [
        ("apex-1.8.0-cp312-rocm7.0-gfx94X-dcgpu", ""),
        ("apex-1.9.0-cp312-rocm7.13-gfx94X-dcgpu", ""),
        ("apex-1.8.0-cp312-rocm6.4-gfx94X-dcgpu", "")]
    assert got[1] == {
        "id": "apex-1.9.0-cp312-rocm7.13", "artifact": "apex-1.9.0-cp312-rocm7.13-gfx94X-dcgpu",
        "package": "apex", "version": "1.9.0", "python": "3.12", "rocm": "7.13", "torch": "2.9",
        "session": "build-3.12-rocm7.13", "family": "gfx94X-dcgpu", "families": "gfx94X-dcgpu",
        "sdk_family": "", "gfx": "gfx942", "runner": CPU, "test_runner": "linux-mi300-gpu",
        "test_gfx": "gfx942", "known_failure": "", "variants": ""}


def test_shards_of_a_given_size_and_a_size_below_one(loaded: Loaded) -> None:
    from toolkit.data.ci import github_shards

    m, config = loaded
    entries = github_matrix(m, config, "push", builds=_builds(
        m, *(f"apex-1.4.0-cp{v}-rocm6.0" for v in ("38", "39", "310", "311", "312"))))
    ids = [e.build.id for e in entries]
    shards = github_shards(entries, 2)  # 5 entries: 3 shards, 2 + 2 + 1
    assert [[e["id"] for e in s["include"]] for s in shards] == [ids[0:2], ids[2:4], ids[4:]]
    assert [[e["id"] for e in s["include"]] for s in github_shards(entries, 5)] == [ids]
    assert len(github_shards(entries, 1)) == 5
    with pytest.raises(UsageError) as err:
        github_shards(entries, 0)
    assert str(err.value) == "bad shard size 0: expected 1 or more"


def test_the_newest_version_is_newest_by_pep_440_and_keeps_each_spelling(loaded: Loaded) -> None:
    """PEP 440: 1.7 and 1.7.0 are one version, newer than 1.6.0; a pull request keeps the
    builds of both spellings (hand-made: the loader refuses both in one package file)."""
    import dataclasses

    m, config = loaded
    b170 = m.build("apex-1.7.0-cp312-rocm6.4")
    b17 = dataclasses.replace(b170, pkg_version=dataclasses.replace(b170.pkg_version, version="1.7"))
    b160 = m.build("apex-1.6.0-cp312-rocm6.1")
    for pool in ([b160, b170, b17], [b17, b160, b170], [b170, b17, b160]):
        got = github_matrix(m, config, "pull_request", builds=pool)
        assert [e.build for e in got] == [b for b in pool if b is not b160]
