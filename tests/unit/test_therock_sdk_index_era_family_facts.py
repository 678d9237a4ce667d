"""ROCm/TheRock against rocm.toml and gpus.toml (toolkit/verify/upstream/therock.py): the SDK
stream of version.json, an SDK release's evidence, the index URLs its documentation names, an
era's targets and a family's members, each fact with its words, evidence and edits.

The repository and data are ``upstream_fakes``' (TheRock's version.json said 6.4.0 then 7.0.0;
its target list: gfx90a in gfx90a-dcgpu, gfx942 in gfx94X-dcgpu; the data's 7.0 is a pip
multi-arch release on rocm.example.amd.com); every expectation is written by hand from it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.upstream_fakes import CMAKE, FakeRepo, World
from toolkit.data.matrix import forget_loaded
from toolkit.plan.recipes import load_matrix
from toolkit.verify.upstream import therock
from toolkit.verify.upstream.model import Context, Edit, Fact
from toolkit.verify.upstream.repos import Repo

SLUG = "ROCm/TheRock"


def _ctx(world: World) -> Context:
    forget_loaded()  # the tests change the data in place
    repo = Repo(SLUG, world.root / "ROCm+TheRock" / "repo" / ".git")
    return Context(load_matrix(world.data), world.data, {SLUG: repo})


def _head(world: World) -> str:
    return world.repo(SLUG).git("rev-parse", "HEAD")


def test_the_sdk_stream_is_each_versions_first_commit(world: World) -> None:
    rock = world.repo(SLUG)
    first64 = rock.git("rev-parse", "HEAD~1")
    rock.commit({"version.json": '{"rocm-version": "7.0.1"}\n'})
    rock.commit({"version.json": "broken\n"})
    assert therock.sdk_stream(_ctx(world).repos[SLUG]) == {"6.4": first64,
                                                           "7.0": world.c["rock70"]}


@pytest.mark.parametrize(("evidence", "cited"), [
    ("ROCm/TheRock@abcdef1 version.json", "abcdef1"),
    ("ROCm/TheRock@abcdef1 a.py, version.json", "abcdef1"),
    ("ROCm/TheRock@abcdef1 a.py; version.json", None),
    ("ROCm/TheRock@abc version.json", None), ("ROCm/apex@abcdef1 version.json", None),
    ("ROCm/TheRock@abcdef1 other.json", None)])
def test_cited_is_the_commit_the_evidence_names_for_the_file(evidence: str,
                                                             cited: str | None) -> None:
    assert therock._cited(evidence, "version.json") == cited


def test_sdk_evidence_citing_another_version_is_drift(world: World) -> None:
    rocm = world.data / "rocm.toml"
    first64 = world.repo(SLUG).git("rev-parse", "HEAD~1")[:9]
    c70 = world.c["rock70"][:9]
    rocm.write_text(rocm.read_text().replace(
        f'version = "7.0.0", evidence = "ROCm/TheRock@{c70} version.json"',
        f'version = "7.0.0", evidence = "ROCm/TheRock@{first64} version.json"'))
    assert f"ROCm/TheRock@{first64} version.json" in rocm.read_text()
    ctx = _ctx(world)
    assert therock._sdk_facts(ctx, ctx.repos[SLUG]) == [Fact(
        "drift", "ROCm 7.0 SDK evidence", f"ROCm/TheRock@{first64} version.json",
        f"version.json 7.0 from {c70}", f"{SLUG}@{c70} version.json")]


def test_the_sdk_evidence_is_read_where_the_release_line_cites_it(world: World) -> None:
    ctx = _ctx(world)
    assert therock._sdk_facts(ctx, ctx.repos[SLUG]) == []


def test_an_index_no_document_names_is_drift(world: World) -> None:
    ctx = _ctx(world)
    repo = ctx.repos[SLUG]
    assert therock._index_facts(ctx, repo) == []
    world.repo(SLUG).commit({"RELEASES.md": "moved\n",
                             "build_tools/setup_venv.py": "URL = 'https://rocm.example.amd.com/"
                                                          "whl-multi-arch/'\n"})
    head = _head(world)[:9]
    got = therock._index_facts(_ctx(world), repo)
    url = "https://nightly.example.amd.com/whl-multi-arch/"  # 7.0's default channel
    assert got == [Fact("drift", f"SDK index {url}", url, "not named anywhere",
                        f"{SLUG}@{head} *.md, build_tools/*.py",
                        review="neither TheRock's documentation nor its install tools "
                               "(build_tools/setup_venv.py ...) name this index")]
    # named without its trailing slash, in a nested document: named
    world.repo(SLUG).commit({"docs/deep/x.md": "see https://nightly.example.amd.com/whl-multi-arch\n"})
    assert therock._index_facts(_ctx(world), repo) == []


def test_an_index_named_only_outside_docs_and_build_tools_is_not_named(world: World) -> None:
    world.repo(SLUG).commit({"RELEASES.md": "moved\n", "build_tools/setup_venv.py": "x = 1\n",
                             "src/x.py": "https://nightly.example.amd.com/whl-multi-arch/\n",
                             "build_tools/sub/y.py": "https://nightly.example.amd.com/whl-multi-arch/\n",
                             "notes.txt": "https://nightly.example.amd.com/whl-multi-arch/\n"})
    assert len(therock._index_facts(_ctx(world), _ctx(world).repos[SLUG])) == 1


def test_an_era_whose_cited_list_differs_is_drift_with_the_list(world: World) -> None:
    gpus = world.data / "gpus.toml"
    gpus.write_text(gpus.read_text().replace('targets = ["gfx90a", "gfx942"]',
                                             'targets = ["gfx90a", "gfx942", "gfx1100"]'))
    ctx = _ctx(world)
    c = world.c["rock70"][:9]
    assert therock._era_facts(ctx, ctx.repos[SLUG]) == [Fact(
        "drift", "era fake targets", "gfx90a, gfx942, gfx1100", "gfx90a, gfx942",
        f"{SLUG}@{c} {CMAKE}", (Edit("gpus.toml", ("eras", "fake", "targets"),
                                     ["gfx90a", "gfx942"]),))]
    # a target the evidence credits to another source by name is no difference
    gpus.write_text(gpus.read_text().replace(f"{CMAKE}\"", f"{CMAKE}; gfx1100: pytorch/FBGEMM@x\""))
    ctx = _ctx(world)
    assert therock._era_facts(ctx, ctx.repos[SLUG]) == []


def test_an_era_citing_no_target_list_is_not_read(world: World) -> None:
    gpus = world.data / "gpus.toml"
    gpus.write_text(gpus.read_text().replace(f"{CMAKE}\"", "other.cmake\""))
    ctx = _ctx(world)
    assert therock._era_facts(ctx, ctx.repos[SLUG]) == []


def test_an_era_citing_a_commit_without_targets_says_none(world: World) -> None:
    first = world.repo(SLUG).git("rev-parse", "HEAD~1")[:9]
    gpus = world.data / "gpus.toml"
    gpus.write_text(gpus.read_text().replace(world.c["rock70"][:9], first))
    ctx = _ctx(world)
    (fact,) = therock._era_facts(ctx, ctx.repos[SLUG])
    assert (fact.upstream, fact.edits[0].value) == ("none", [])


def test_family_members_against_the_newest_target_list(world: World) -> None:
    gpus = world.data / "gpus.toml"
    text = gpus.read_text()
    gpus.write_text(text.replace('[families.gfx90a]\ntargets = ["gfx90a"]',
                                 '[families.gfx90a]\ntargets = ["gfx90a", "gfx942"]\n'
                                 'aliases = ["gfx90a-dcgpu"]\n\n'
                                 '[families.gfx1100]\ntargets = ["gfx1100"]'))
    ctx = _ctx(world)
    head = _head(world)[:9]
    ev = f"{SLUG}@{head} {CMAKE}"
    assert therock._family_facts(ctx, ctx.repos[SLUG]) == [
        Fact("drift", "family gfx90a", "gfx90a, gfx942", "gfx90a", ev,
             (Edit("gpus.toml", ("families", "gfx90a", "targets"), ["gfx90a"]),)),
        Fact("drift", "family gfx90a-dcgpu", "gfx90a, gfx942", "gfx90a", ev),
        Fact("note", "family gfx1100", "gfx1100", "not in the newest target list", ev)]
    gpus.write_text(text.replace('targets = ["gfx942"]', 'targets = ["gfx942", "gfx90a"]'))
    ctx = _ctx(world)
    assert therock._family_facts(ctx, ctx.repos[SLUG]) == [Fact(
        "drift", "family gfx94X-dcgpu", "gfx942, gfx90a", "gfx942", ev,
        (Edit("gpus.toml", ("families", "gfx94X-dcgpu", "targets"), ["gfx942"]),))]


def test_family_members_are_ordered_as_the_target_list(world: World) -> None:
    world.repo(SLUG).commit({CMAKE: (
        'therock_add_amdgpu_target(gfx950 "x" FAMILY gfx94X-dcgpu)\n'
        'therock_add_amdgpu_target(gfx90a "MI210" FAMILY gfx90a-dcgpu)\n'
        'therock_add_amdgpu_target(gfx942 "x" FAMILY gfx94X-dcgpu)\n')})
    ctx = _ctx(world)
    (fact,) = therock._family_facts(ctx, ctx.repos[SLUG])
    assert fact.upstream == "gfx950, gfx942"
    assert fact.edits[0].value == ["gfx950", "gfx942"]


def test_check_runs_every_part(world: World) -> None:
    ctx = _ctx(world)
    assert [f.what for f in therock.check(ctx)] == ["TheRock legacy releases"]


def test_families_against_a_repository_without_commits_are_notes_at_head(
        world_template: World, tmp_path: Path) -> None:
    """No commit to read the target list at: every family is a note, its evidence naming
    HEAD (the ref read), never a made-up commit."""
    empty = FakeRepo(tmp_path, SLUG)
    ctx = Context(load_matrix(world_template.data), world_template.data, {})
    facts = therock._family_facts(ctx, Repo(SLUG, empty.dir / ".git"))
    assert facts == [
        Fact("note", "family gfx94X-dcgpu", "gfx942", "not in the newest target list",
             f"{SLUG}@HEAD {CMAKE}"),
        Fact("note", "family gfx90a", "gfx90a", "not in the newest target list",
             f"{SLUG}@HEAD {CMAKE}")]
