"""ROCm/apex against apex.toml (toolkit/verify/upstream/apex.py), function by function: the
release branches, the torch pairs of apex's README and TheRock's word, the facts of a listed
version (version.txt, its reviewed commit, its torch, ROCm releases, Pythons, ops) and of a
branch the data lacks, with the words, evidence and edits a maintainer sees.

The repositories and data are ``upstream_fakes``' (apex 1.0.0 and 1.1.0 on release/1.0.0 and
release/1.1.0, README pairs 1.1.0 -> 2.5 and 1.0.0 -> 2.4, TheRock's README pairs 2.5 with
apex release/1.1.0); every expectation is written by hand from them."""

from __future__ import annotations

import dataclasses

import pytest

from tests.unit.upstream_fakes import World
from toolkit.plan.recipes import load_matrix, recipe_for
from toolkit.verify.upstream import apex, pytorch
from toolkit.verify.upstream.model import Context, Edit, Fact
from toolkit.verify.upstream.repos import Repo

SLUG, ROCK = "ROCm/apex", "ROCm/TheRock"
DOC = "external-builds/pytorch/README.md"


def _ctx(world: World, *slugs: str) -> Context:
    repos = {s: Repo(s, world.root / s.replace("/", "+") / "repo" / ".git") for s in slugs}
    return Context(load_matrix(world.data), world.data, repos)


def test_release_branches_are_x_y_z_only(world: World) -> None:
    r = world.repo(SLUG)
    r.git("branch", "release/2.0", "main")
    r.git("branch", "release/2.0.0-rc", "main")
    r.git("branch", "feature/3.0.0", "main")
    heads = apex.branches(_ctx(world, SLUG).repos[SLUG])
    assert heads == {v: r.git("rev-parse", f"release/{v}") for v in ("0.9.0", "1.0.0", "1.1.0")}


def test_torch_pairs_from_the_readme_then_therocks_newer_word(world: World) -> None:
    main = world.c["apex_main"][:9]
    readme = f"{SLUG}@{main} README.md"
    assert apex.torch_pairs(_ctx(world, SLUG)) == {"1.1.0": ("2.5", readme),
                                                   "1.0.0": ("2.4", readme)}
    rock = world.repo(ROCK)
    first = rock.git("log", "--format=%H", "-1", "--", DOC)
    newer = rock.commit({DOC: "| 2.6 | ROCm/apex `release/1.1.0` |\n| 2.4 | ROCm/apex "
                              "`release/1.0.0` and ROCm/apex `release/0.9.0` |\n"})
    assert apex.torch_pairs(_ctx(world, SLUG, ROCK)) == {
        "1.1.0": ("2.6", f"{ROCK}@{newer[:9]} {DOC}"), "1.0.0": ("2.4", f"{ROCK}@{newer[:9]} {DOC}"),
        "0.9.0": ("2.4", f"{ROCK}@{newer[:9]} {DOC}")}
    assert first != newer


def test_a_readme_row_whose_branch_is_another_version_pairs_nothing(world: World) -> None:
    world.repo(SLUG).commit({"README.md": "| ``1.3.0`` | release/1.2.0 | ``2.7`` |\n"
                                          "| ``1.4.0`` | release/1.4.0 | ``2.8.1`` |\n"})
    head = world.repo(SLUG).git("rev-parse", "main")[:9]
    assert apex.torch_pairs(_ctx(world, SLUG)) == {"1.4.0": ("2.8", f"{SLUG}@{head} README.md")}


def _up(world: World, ctx: Context, **texts: str | None) -> apex._Branches:
    repo = ctx.repos[SLUG]
    heads = apex.branches(repo)
    stated = {v: f"{v}\n" for v in heads} | {k.replace("_", "."): t for k, t in texts.items()}
    return apex._Branches(repo, heads, stated, apex.torch_pairs(ctx))


def test_a_version_txt_that_says_another_version_is_drift(world: World) -> None:
    ctx = _ctx(world, SLUG)
    v = ctx.matrix.packages["apex"].versions[1]
    head = world.c["apex11"][:9]
    for said, shown in (("1.1.1\n", "1.1.1"), (None, "none"), ("  \n", "none")):
        up = _up(world, ctx, **{"1_1_0": said})
        assert apex._listed_facts(ctx, up, 1, v)[0] == Fact(
            "drift", "apex 1.1.0 version.txt", "1.1.0", shown, f"{SLUG}@{head} version.txt")


def test_a_moved_branch_needs_a_source_review_of_its_range(world: World) -> None:
    ctx = _ctx(world, SLUG)
    moved = world.repo(SLUG).commit({"setup.py": "# 1.1 fix\n"}, branch="release/1.1.0")
    v = ctx.matrix.packages["apex"].versions[1]
    facts = apex._listed_facts(ctx, _up(world, ctx), 1, v)
    old, new = world.c["apex11"][:9], moved[:9]
    assert facts[0] == Fact("review", "apex 1.1.0 source", f"@{old}", f"@{new}",
                            f"{SLUG}@{new} version.txt",
                            review=f"{SLUG}@{old}..{new} setup.py op_builder")


def test_a_torch_pair_upstream_changed_is_drift_with_its_edit(world: World) -> None:
    world.repo(SLUG).commit({"README.md": "| ``1.1.0`` | release/1.1.0 | ``2.6`` |\n"})
    ctx = _ctx(world, SLUG)
    head = world.repo(SLUG).git("rev-parse", "main")[:9]
    v = ctx.matrix.packages["apex"].versions[1]
    facts = apex._listed_facts(ctx, _up(world, ctx), 1, v)
    assert facts[0] == Fact("drift", "apex 1.1.0 torch", "2.5", "2.6", f"{SLUG}@{head} README.md",
                            (Edit("apex.toml", ("versions", 1, "torch"), "2.6"),))


def test_a_branch_the_data_names_that_upstream_lacks(world: World) -> None:
    world.repo(SLUG).git("branch", "-D", "release/1.0.0")
    facts = apex.check(_ctx(world, SLUG))
    assert facts[0] == Fact("drift", "apex 1.0.0", "release/1.0.0", "no such branch",
                            f"{SLUG} refs/heads/release/*",
                            review="the data names a branch upstream lacks")


def test_an_unlisted_branch_names_its_torch_and_rocm_and_the_range_to_review(
        world: World) -> None:
    r = world.repo(SLUG)
    new = r.commit({"version.txt": "1.10.0\n"}, branch="release/1.10.0", base="release/1.1.0")
    r.commit({"README.md": "| ``1.10.0`` | release/1.10.0 | ``2.5`` |\n"})
    ctx = _ctx(world, SLUG)
    ctx.derived["pytorch"] = {"2.5": pytorch.Release("2.5", ("6.1", "6.9"), (), "c", "PT")}
    head = r.git("rev-parse", "main")[:9]
    facts = apex.check(ctx)
    n, since = new[:9], world.c["apex11"][:9]
    assert facts[-1] == Fact(
        "review", "apex 1.10.0", "none", f"release/1.10.0 @{n} (torch 2.5, rocm 6.1)",
        f"{SLUG}@{n} version.txt; torch: {SLUG}@{head} README.md",
        review=f"{SLUG}@{since}..{n} setup.py op_builder (build style, ops, switches)")
    assert not [f for f in facts if "0.9.0" in f.what]  # older than the data: outside
    up = _up(world, ctx)
    listed = {v.version: (i, v) for i, v in enumerate(ctx.matrix.packages["apex"].versions)}
    unknown = apex._unlisted_facts(ctx, dataclasses.replace(up, pairs={}), listed)
    assert unknown[-1].upstream == f"release/1.10.0 @{n} (torch unknown)"
    assert unknown[-1].evidence == f"{SLUG}@{n} version.txt; torch: {SLUG} README.md"
    # the newest listed version by number (1.10.0 after 1.9.0) names the reviewed commit
    v = listed["1.1.0"][1]
    by_number = {"1.9.0": (0, dataclasses.replace(v, version="1.9.0", evidence=f"{SLUG}@aaaaaaa")),
                 "1.10.1": (1, dataclasses.replace(v, version="1.10.1", evidence=f"{SLUG}@bbbbbbb"))}
    up12 = dataclasses.replace(up, heads={**up.heads, "1.12.0": new})
    (fact,) = [f for f in apex._unlisted_facts(ctx, up12, by_number) if f.what == "apex 1.12.0"]
    assert fact.review.startswith(f"{SLUG}@bbbbbbb..{n} ")
    no_commit = {"1.9.0": (0, dataclasses.replace(v, version="1.9.0", evidence="x"))}
    (fact,) = [f for f in apex._unlisted_facts(ctx, up12, no_commit) if f.what == "apex 1.12.0"]
    assert fact.review.startswith(f"{SLUG}@1.9.0..{n} ")


def test_the_therock_part_of_an_evidence() -> None:
    ev = "ROCm/apex@abc (release/1.1.0) version.txt; TheRock: ROCm/TheRock@1111111 (7.0) doc"
    assert apex._therock_part(ev) == "ROCm/TheRock@1111111 (7.0) doc"
    assert apex._therock_part("ROCm/apex@abc version.txt") == ""
    assert apex._with_therock(ev, "") == ev
    assert apex._with_therock(ev, "ROCm/TheRock@1111111 (7.0) other words") == ev
    assert apex._with_therock(ev, "ROCm/TheRock@2222222 (7.0) doc") == (
        "ROCm/apex@abc (release/1.1.0) version.txt; TheRock: ROCm/TheRock@2222222 (7.0) doc")
    assert apex._with_therock("ROCm/apex@abc v", "ROCm/TheRock@2222222 (7.0)") == (
        "ROCm/apex@abc v; TheRock: ROCm/TheRock@2222222 (7.0)")


def _pt(world: World, ctx: Context) -> None:
    ctx.derived["pytorch"] = {"2.5": pytorch.Release("2.5", ("6.1", "6.9"), ("3.10", "3.12", "3.99"),
                                                     "c", "PT25")}


def test_release_and_python_facts_from_the_torch_upstream_published(world: World) -> None:
    ctx = _ctx(world, SLUG)
    _pt(world, ctx)
    v = ctx.matrix.packages["apex"].versions[1]  # torch 2.5, rocm 6.1, python 3.11, 3.12
    assert apex._pair_facts(ctx, 1, v, "2.5") == [
        Fact("drift", "apex 1.1.0 Python", "3.11, 3.12", "3.10, 3.12", "PT25",
             (Edit("apex.toml", ("versions", 1, "python"), ["3.10", "3.12"]),))]
    v0 = dataclasses.replace(v, rocm=("6.0",), python=("3.10", "3.12"))
    assert apex._pair_facts(ctx, 1, v0, "2.5") == [
        Fact("drift", "apex 1.1.0 ROCm releases", "6.0", "6.1", "PT25",
             (Edit("apex.toml", ("versions", 1, "rocm"), ["6.1"]),))]
    waiting = dataclasses.replace(v0, rocm=(), waiting="awaits torch 2.5")
    assert apex._pair_facts(ctx, 1, waiting, "2.5") == [
        Fact("drift", "apex 1.1.0 ROCm releases", "none (awaits torch 2.5)", "6.1", "PT25",
             (Edit("apex.toml", ("versions", 1, "rocm"), ["6.1"]),
              Edit("apex.toml", ("versions", 1, "waiting"))))]
    assert apex._pair_facts(ctx, 1, waiting, "2.9") == [Fact(
        "note", "apex 1.1.0", "waiting (awaits torch 2.5)",
        "no ROCm release of the matrix has torch 2.9 for it",
        f"{SLUG} README.md; {ROCK} {DOC}")]
    assert apex._pair_facts(ctx, 1, v0, "2.9") == []


def test_therock_releases_that_build_a_version(world: World) -> None:
    rock = world.repo(ROCK)
    wf = ".github/workflows/multi_arch_build_portable_linux_pytorch_wheels.yml"
    cited = rock.commit({wf: "run: ./external-builds/pytorch/pytorch_apex_repo.py checkout\n"})
    rocm = world.data / "rocm.toml"
    rocm.write_text(rocm.read_text().replace(f'ROCm/TheRock@{world.c["rock70"][:9]} build_tools/'
                                             "github_actions/configure_pytorch_release_matrix",
                                             f"ROCm/TheRock@{cited[:9]} build_tools/"
                                             "github_actions/configure_pytorch_release_matrix"))
    ctx = _ctx(world, SLUG, ROCK)
    ev = (f"{ROCK}@{cited[:9]} (7.0) {DOC}, .github/workflows/*linux_pytorch_wheels.yml")
    assert apex.therock_releases(ctx, "1.1.0", "2.5") == (("7.0",), ev)
    assert apex.therock_releases(ctx, "1.0.0", "2.5") == ((), "")
    assert apex.therock_releases(ctx, "1.1.0", "2.4") == ((), "")
    assert apex.therock_releases(_ctx(world, SLUG), "1.1.0", "2.5") == ((), "")
    v = ctx.matrix.packages["apex"].versions[1]
    _pt(world, ctx)
    moved = dataclasses.replace(v, python=("3.10", "3.12"), rocm=("6.1", "7.0"),
                                evidence="ROCm/apex@x v; TheRock: ROCm/TheRock@1234567 (7.0)")
    assert apex._pair_facts(ctx, 1, moved, "2.5") == [Fact(
        "drift", "apex 1.1.0 TheRock evidence", "ROCm/TheRock@1234567 (7.0)", ev, ev,
        (Edit("apex.toml", ("versions", 1, "evidence"), f"ROCm/apex@x v; TheRock: {ev}"),))]
    bare = dataclasses.replace(moved, evidence="ROCm/apex@x v")
    assert apex._pair_facts(ctx, 1, bare, "2.5")[0].data == "none"


def _ops_repo(world: World, names: list[str], branch: str) -> str:
    """A commit (on a new branch off release/1.0.0, which has no op_builder/) whose
    op_builder/ declares ``names``."""
    files = {f"op_builder/{n}.py": f'class B:\n    NAME = "{n}"\n' for n in names}
    return world.repo(SLUG).commit({**files, "op_builder/README": "    NAME = 'not_python'\n"},
                                   branch=branch, base="release/1.0.0")


def test_ops_of_a_jit_prebuild_version_against_the_recipe(world: World) -> None:
    ctx = _ctx(world, SLUG)
    v = dataclasses.replace(ctx.matrix.packages["apex"].versions[1], build_style="jit-prebuild")
    expected = sorted(m.removeprefix("apex.") for m in recipe_for("apex").expected_modules(v))
    repo = ctx.repos[SLUG]
    same = _ops_repo(world, [*expected, "_apex_nccl_allocator"], "ops-same")
    assert apex._ops_facts(repo, same, v) == []
    assert apex._ops_facts(repo, same, dataclasses.replace(v, build_style="ext-flags")) == []
    other = _ops_repo(world, [*expected[1:], "new_op"], "ops-other")
    assert apex._ops_facts(repo, other, v) == [Fact(
        "review", "apex 1.1.0 ops", expected[0], "new_op", f"{SLUG}@{other[:9]} op_builder/",
        review="the recipe's expected modules (plan/recipes/apex.py) differ from op_builder's "
               "NAMEs")]
    fewer = _ops_repo(world, expected[1:], "ops-fewer")
    assert apex._ops_facts(repo, fewer, v)[0].upstream == "-"
    assert apex._ops_facts(repo, world.c["apex10"], v) == []  # no op_builder/: nothing to say


@pytest.mark.parametrize(("evidence", "seen"), [
    ("ROCm/apex@abcdef1 (release/1.1.0) version.txt", "abcdef1"), ("ROCm/apex@abc x", None),
    ("pytorch/FBGEMM@abcdef1", None)])
def test_the_reviewed_commit(evidence: str, seen: str | None, world: World) -> None:
    v = _ctx(world, SLUG).matrix.packages["apex"].versions[1]
    assert apex._reviewed_commit(dataclasses.replace(v, evidence=evidence)) == seen


def test_no_python_fact_when_pytorch_published_no_python_the_toolkit_knows(
        world_template: World) -> None:
    ctx = _ctx(world_template, SLUG)
    ctx.derived["pytorch"] = {"2.5": pytorch.Release("2.5", ("6.1",), ("3.99",), "c", "PT25")}
    v = ctx.matrix.packages["apex"].versions[1]  # rocm 6.1 as published: no ROCm fact either
    assert apex._pair_facts(ctx, 1, v, "2.5") == []
    assert apex._python_for(ctx, "2.5") == ()
    assert apex._python_for(ctx, "2.9") == ()
