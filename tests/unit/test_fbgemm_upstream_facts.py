"""pytorch/FBGEMM against fbgemm_gpu.toml (toolkit/verify/upstream/fbgemm.py), function by
function: its release tags, its torch table, its CI's Python x ROCm lists, and the facts of a
listed version and of a tag the data lacks (a patch note, a version recorded as waiting, a
version that needs a recipe review), each with the words, evidence and edits a maintainer sees.

The repositories and data are ``upstream_fakes``' (fbgemm_gpu 1.0.0 at tag v1.0.0, torch 2.5,
CI: Python 3.12 on ROCm 6.1 and 6.0; rocm.toml has torch 2.5 on 6.1 only); every expectation is
written by hand from them."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from tests.unit.upstream_fakes import World
from toolkit.data.matrix import PackageVersion
from toolkit.plan.recipes import load_matrix
from toolkit.verify.upstream import fbgemm
from toolkit.verify.upstream.model import Context, Edit, Fact
from toolkit.verify.upstream.repos import Repo

SLUG = "pytorch/FBGEMM"
CI = ".github/workflows/fbgemm_gpu_ci_rocm.yml"
INIT = "fbgemm_gpu/fbgemm_gpu/__init__.py"
CI_61 = ('jobs:\n  build_artifact:\n    strategy:\n      matrix:\n'
         '        python-version: [ "3.12", "3.13" ]\n        rocm-version: [ "6.1" ]\n')


def _ctx(world: World) -> Context:
    repo = Repo(SLUG, world.root / "pytorch+FBGEMM" / "repo" / ".git")
    return Context(load_matrix(world.data), world.data, {SLUG: repo})


def _tag(world: World, name: str, files: dict[str, str]) -> str:
    fb = world.repo(SLUG)
    commit = fb.commit(files)
    fb.git("tag", name, commit)
    return commit


def test_only_vx_y_z_tags_are_releases(world: World) -> None:
    fb = world.repo(SLUG)
    fb.git("tag", "v2.0", "main")
    fb.git("tag", "x1.2.3", "main")
    fb.git("tag", "v1.2.3.4", "main")
    got = fbgemm.tags(_ctx(world).repos[SLUG])
    assert got == {"1.0.0": world.c["fb10"], "1.0.1": fb.git("rev-parse", "v1.0.1")}


def test_compat_table_reads_the_assignment_plain_or_annotated() -> None:
    assert fbgemm.compat_table('x = 1\n_fbgemm_torch_compat_table = {"1.0": "2.5", 1.1: 2.6}\n') \
        == {"1.0": "2.5", "1.1": "2.6"}
    assert fbgemm.compat_table('_fbgemm_torch_compat_table: dict = {"1.2": "2.7"}\n') == {
        "1.2": "2.7"}
    assert fbgemm.compat_table("_fbgemm_torch_compat_table: dict\nother = {'1': '2'}\n") == {}
    assert fbgemm.compat_table("a = b = {'1': '2'}\n") == {}


def test_ci_matrix_reads_the_first_lists_of_the_build_job() -> None:
    text = ('  build:\n    python-version: [ "3.11", "3.12" ]\n    rocm-version: ["6.3"]\n'
            '  test:\n    python-version: [ "3.9" ]\n    rocm-version: [ "5.0" ]\n')
    assert fbgemm.ci_matrix(text) == (("3.11", "3.12"), ("6.3",))
    assert fbgemm.ci_matrix("python-version: 3.12\n") == ((), ())


def test_no_release_tag_at_all_is_drift_naming_the_data_versions(world: World) -> None:
    fb = world.repo(SLUG)
    for t in ("v1.0.0", "v1.0.1", "v1.1.0-rc1"):
        fb.git("tag", "-d", t)
    assert fbgemm.check(_ctx(world)) == [Fact("drift", "fbgemm_gpu versions", "1.0.0",
                                              "no release tag", f"{SLUG} refs/tags/v*")]


def test_no_release_tag_names_every_data_version_comma_separated(world: World) -> None:
    """Two versions in the data (1.0.0 and, added here, 1.1.0), no tag: the fact's data side
    lists both, in the data's order, as ``1.0.0, 1.1.0``."""
    fb = world.repo(SLUG)
    for t in ("v1.0.0", "v1.0.1", "v1.1.0-rc1"):
        fb.git("tag", "-d", t)
    ctx = _ctx(world)
    package = ctx.matrix.packages["fbgemm_gpu"]
    (v,) = package.versions
    two = dataclasses.replace(package, versions=(v, dataclasses.replace(v, version="1.1.0")))
    ctx.matrix = dataclasses.replace(ctx.matrix, packages={**ctx.matrix.packages,
                                                           "fbgemm_gpu": two})
    (fact,) = fbgemm.check(ctx)
    assert (fact.what, fact.data, fact.upstream) == ("fbgemm_gpu versions", "1.0.0, 1.1.0",
                                                     "no release tag")


def test_a_version_without_its_tag_is_drift_with_a_review(world: World) -> None:
    world.repo(SLUG).git("tag", "-d", "v1.0.0")
    facts = fbgemm.check(_ctx(world))
    assert facts[0] == Fact("drift", "fbgemm_gpu 1.0.0", "v1.0.0", "no such tag",
                            f"{SLUG} refs/tags/v*",
                            review="the data names a tag upstream lacks")


def test_a_listed_version_whose_torch_and_python_moved(world: World) -> None:
    new = _tag(world, "v1.0.0-moved", {CI: CI_61, INIT: '_fbgemm_torch_compat_table = {"1.0": "2.4"}\n'})
    fb = world.repo(SLUG)
    fb.git("tag", "-f", "v1.0.0", new)
    fb.git("tag", "v1.0.2", new)  # the newest tag: its table is the one read
    facts = fbgemm.check(_ctx(world))
    ci_ev = f"{SLUG}@{new[:9]} {CI}"
    table_ev = f"{SLUG}@{new[:9]} {INIT}"
    assert [f for f in facts if f.what.startswith("fbgemm_gpu 1.0.0")] == [
        Fact("review", "fbgemm_gpu 1.0.0 source", f"@{world.c['fb10'][:9]}", f"@{new[:9]}", ci_ev,
             review=f"{SLUG}@{world.c['fb10'][:9]}..{new[:9]} fbgemm_gpu/"),
        Fact("drift", "fbgemm_gpu 1.0.0 torch", "2.5", "2.4", table_ev,
             (Edit("fbgemm_gpu.toml", ("versions", 0, "torch"), "2.4"),)),
        Fact("drift", "fbgemm_gpu 1.0.0 Python", "3.12", "3.12, 3.13", ci_ev,
             (Edit("fbgemm_gpu.toml", ("versions", 0, "python"), ["3.12", "3.13"]),)),
    ]


def test_rocm_facts_of_a_listed_version() -> None:
    v = _version("1.0.0", rocm=("6.0",))
    assert fbgemm._rocm_facts(0, v, "2.5", ("6.1",), ["5.7"], "CIEV") == [
        Fact("drift", "fbgemm_gpu 1.0.0 ROCm releases", "6.0", "6.1", "CIEV",
             (Edit("fbgemm_gpu.toml", ("versions", 0, "rocm"), ["6.1"]),)),
        Fact("note", "fbgemm_gpu 1.0.0 on ROCm 5.7", "none",
             "CI builds it, but rocm.toml has no torch 2.5 for ROCm 5.7", "CIEV")]
    waiting = _version("1.1.0", rocm=(), waiting="awaits torch 2.6")
    assert fbgemm._rocm_facts(3, waiting, "2.6", ("6.1",), [], "E") == [
        Fact("drift", "fbgemm_gpu 1.1.0 ROCm releases", "none (awaits torch 2.6)", "6.1", "E",
             (Edit("fbgemm_gpu.toml", ("versions", 3, "rocm"), ["6.1"]),
              Edit("fbgemm_gpu.toml", ("versions", 3, "waiting"))))]
    assert fbgemm._rocm_facts(3, waiting, "2.6", (), ["6.0", "6.1"], "E")[0] == Fact(
        "note", "fbgemm_gpu 1.1.0", "waiting (awaits torch 2.6)",
        "no ROCm release of the matrix that its CI builds (6.0, 6.1) has torch 2.6", "E")
    assert fbgemm._rocm_facts(3, waiting, None, (), [], "E") == [Fact(
        "note", "fbgemm_gpu 1.1.0", "waiting (awaits torch 2.6)",
        "no ROCm release of the matrix that its CI builds (none) has torch 2.6", "E")]
    assert fbgemm._rocm_facts(0, _version("1.0.0", rocm=("6.1",)), "2.5", ("6.1",), [], "E") == []


def _version(version: str, rocm: tuple[str, ...], waiting: str = "", evidence: str = "",
             torch: str = "2.6") -> PackageVersion:
    return PackageVersion("fbgemm_gpu", version, f"v{version}", torch, rocm, ("3.12",),
                                 "build-variant", evidence=evidence, waiting=waiting)


def test_a_new_minor_whose_torch_a_ci_rocm_has_needs_a_review(world: World) -> None:
    new = _tag(world, "v1.1.0", {CI: CI_61, INIT: '_fbgemm_torch_compat_table = {"1.1": "2.5"}\n'})
    facts = fbgemm.check(_ctx(world))
    fb10, n = world.c["fb10"][:9], new[:9]
    assert facts[-1] == Fact(
        "review", "fbgemm_gpu 1.1.0", "none",
        f"v1.1.0 @{n} (torch 2.5, python 3.12, 3.13, rocm 6.1)",
        f"{SLUG}@{n} {CI}; torch: {SLUG}@{n} {INIT}",
        review=f"{SLUG}@{fb10}..{n} fbgemm_gpu/setup.py, .github/scripts/fbgemm_gpu_build.bash, "
               ".gitmodules (build style, default targets, submodules, tbb)")


def test_a_new_minor_with_no_python_or_torch_is_a_review_naming_none_usable(world: World) -> None:
    new = _tag(world, "v1.2.0", {CI: "jobs: {}\n", INIT: "_fbgemm_torch_compat_table = {}\n"})
    n = new[:9]
    assert fbgemm.check(_ctx(world))[-1] == Fact(
        "review", "fbgemm_gpu 1.2.0", "none", f"v1.2.0 @{n} (torch None, python , rocm none usable)",
        f"{SLUG}@{n} {CI}; torch: {SLUG}@{n} {INIT}",
        review=f"{SLUG}@{world.c['fb10'][:9]}..{n} fbgemm_gpu/setup.py, "
               ".github/scripts/fbgemm_gpu_build.bash, .gitmodules (build style, default "
               "targets, submodules, tbb)")


def test_older_tags_than_the_data_are_left_out_and_patches_are_notes(world: World) -> None:
    old = _tag(world, "v0.9.0", {"x": "1\n"})
    facts = fbgemm.check(_ctx(world))
    assert not [f for f in facts if "0.9.0" in f.what + f.upstream]
    patch = world.repo(SLUG).git("rev-parse", "v1.0.1")
    assert [f for f in facts if f.what == "fbgemm_gpu 1.0.1"] == [Fact(
        "note", "fbgemm_gpu 1.0.1", "v1.0.0", "patch release v1.0.1 of 1.0",
        f"{SLUG}@{patch[:9]} {CI}")]
    assert old


def test_the_newest_listed_version_is_the_newest_by_number(world: World, tmp_path: Path) -> None:
    """Data 1.9.0 and 1.10.0 (1.10.0 is newer, though "1.9.0" sorts after it as text): a new
    tag is reviewed from 1.10.0's commit and a waiting one takes 1.10.0's recipe."""
    ctx = _ctx(world)
    base = ctx.matrix.packages["fbgemm_gpu"]
    v19 = dataclasses.replace(base.versions[0], version="1.9.0", ref="v1.9.0",
                              evidence=f"{SLUG}@aaaaaaa1 (v1.9.0)", build_style="build-variant")
    v110 = dataclasses.replace(base.versions[0], version="1.10.0", ref="v1.10.0",
                               evidence=f"{SLUG}@bbbbbbb2 (v1.10.0)", build_style="build-variant",
                               recipe_data={"tbb": {"provider": "pypi", "spec": "tbb==2021.*"}})
    package = dataclasses.replace(base, versions=(v19, v110))
    fb = world.repo(SLUG)
    c111 = _tag(world, "v1.11.0", {CI: CI_61, INIT: '_fbgemm_torch_compat_table = {"1.11": "2.9"}\n'})
    c112 = _tag(world, "v1.12.0", {CI: CI_61, INIT: '_fbgemm_torch_compat_table = {"1.12": "2.5", '
                                                    '"1.11": "2.9"}\n'})
    c113 = _tag(world, "v1.13.0", {"x": "13\n"})
    found = {"1.9.0": world.c["fb10"], "1.10.0": world.c["fb10"], "1.11.0": c111, "1.12.0": c112,
             "1.13.0": c113}
    repo = ctx.repos[SLUG]
    rule = fbgemm._Rule(ctx, repo, package, found, {"1.11": "2.9", "1.12": "2.5", "1.13": "2.9"},
                        "TABLE", {"1.11.0": CI_61, "1.12.0": CI_61, "1.13.0": CI_61})
    waiting, review, second = fbgemm._new(rule)
    # each version recorded as waiting is one more entry after the last
    assert [e.path for e in second.edits] == [("versions", 3)]
    assert review.review.startswith(f"{SLUG}@bbbbbbb2..{c112[:9]} ")
    (edit,) = waiting.edits
    assert edit.path == ("versions", 2)
    assert edit.value == {
        "version": "1.11.0", "ref": "v1.11.0", "torch": "2.9", "rocm": [],
        "waiting": "awaits torch 2.9 on a ROCm of the matrix that its CI builds (6.1)",
        "python": ["3.12", "3.13"],
        "evidence": f"recipe as reviewed at {SLUG}@bbbbbbb2 (v1.10.0), {SLUG}@bbbbbbb2.."
                    f"{c111[:9]} not yet; v1.11.0: {SLUG}@{c111[:9]} {CI}; torch pair: TABLE",
        "build_style": "build-variant", "tbb": {"provider": "pypi", "spec": "tbb==2021.*"}}
    assert waiting == Fact(
        "drift", "fbgemm_gpu 1.11.0", "none",
        f"v1.11.0 @{c111[:9]} (torch 2.9: awaits torch 2.9 on a ROCm of the matrix that its CI "
        "builds (6.1); python 3.12, 3.13)", f"{SLUG}@{c111[:9]} {CI}; torch: TABLE", (edit,))
    assert fb


def test_a_recipe_carries_targets_submodules_and_tbb_as_written() -> None:
    v = dataclasses.replace(_version("1.0.0", ("6.1",)),
                            default_targets={"6.1": ("gfx90a", "gfx942")},
                            submodules={"third_party/x": "https://example.invalid/x.git"},
                            recipe_data={"tbb": {"provider": "system"}})
    assert fbgemm._recipe(v) == {"build_style": "build-variant",
                                 "default_targets": {"6.1": ["gfx90a", "gfx942"]},
                                 "submodules": {"third_party/x": "https://example.invalid/x.git"},
                                 "tbb": {"provider": "system"}}
    assert fbgemm._recipe(_version("1.0.0", ("6.1",))) == {"build_style": "build-variant"}


@pytest.mark.parametrize(("evidence", "seen"), [
    ("pytorch/FBGEMM@abcdef1 (v1.0.0) x", "abcdef1"), ("pytorch/FBGEMM@abc x", None),
    ("pytorch/FBGEMMX@abcdef1", None), ("", None)])
def test_the_reviewed_commit_is_the_one_the_evidence_cites(evidence: str, seen: str | None) -> None:
    assert fbgemm._reviewed_commit(_version("1.0.0", (), evidence=evidence)) == seen
