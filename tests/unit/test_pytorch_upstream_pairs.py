"""Upstream PyTorch's torch -> ROCm pairs read in pytorch/test-infra
(toolkit/verify/upstream/pytorch.py): each stable release at its first ``X.Y.0`` commit, the
candidate note, and the facts against rocm.toml (a missing pair, another build, evidence at
another commit, a pair never published, a ROCm release the data lacks), with their words and
edits. The repository is ``upstream_fakes``' test-infra (2.4.0: rocm 6.0, 6.1; a later 2.4.1
edit adding 6.9; 2.5.0: rocm 6.1; then candidate 2.6.0 testing 6.1, 6.2); every expectation
is written by hand from it."""

from __future__ import annotations

import pytest

from tests.unit.upstream_fakes import SCRIPT, World, _matrix_script
from toolkit.data.releases import TorchSource
from toolkit.plan.recipes import load_matrix
from toolkit.verify.upstream import pytorch
from toolkit.verify.upstream.model import Context, Edit, Fact
from toolkit.verify.upstream.repos import Repo

SLUG = "pytorch/test-infra"


def _repo(world: World) -> Repo:
    return Repo(SLUG, world.root / "pytorch+test-infra" / "repo" / ".git")


def test_each_stable_release_at_its_first_commit_and_the_candidate(world_template: World) -> None:
    found, note = pytorch.releases(_repo(world_template), "2.4")
    ti24, ti25, ti26 = (world_template.c[k] for k in ("ti24", "ti25", "ti26"))
    assert found == [
        pytorch.Release("2.4", ("6.0", "6.1"), ("3.11", "3.12"), ti24,
                        f"{SLUG}@{ti24[:9]} {SCRIPT} (2.4.0: rocm 6.0, 6.1)"),
        pytorch.Release("2.5", ("6.1",), ("3.11", "3.12"), ti25,
                        f"{SLUG}@{ti25[:9]} {SCRIPT} (2.5.0: rocm 6.1)")]
    assert note == Fact("note", "torch 2.6 (candidate)", "none", "test channel: rocm 6.1, 6.2",
                        f"{SLUG}@{ti26[:9]} {SCRIPT}")
    newer, _ = pytorch.releases(_repo(world_template), "2.5")
    assert [r.torch for r in newer] == ["2.5"]
    # versions compare by number: 2.10 is after 2.5
    assert pytorch.releases(_repo(world_template), "2.10")[0] == []


def test_a_candidate_already_released_is_no_note(world: World) -> None:
    world.repo(SLUG).commit({SCRIPT: _matrix_script("2.6.0", ["6.2"])})
    found, note = pytorch.releases(_repo(world), "2.4")
    assert [r.torch for r in found] == ["2.4", "2.5", "2.6"] and note is None


def test_a_release_without_rocm_is_no_release(world: World) -> None:
    world.repo(SLUG).commit({SCRIPT: 'CURRENT_STABLE_VERSION = "2.7.0"\nROCM_ARCHES_DICT = {}\n'
                                     'PYTHON_ARCHES_DICT = "x"\n'})
    found, note = pytorch.releases(_repo(world), "2.4")
    assert [r.torch for r in found] == ["2.4", "2.5"] and note is None


def test_the_source_of_a_published_pair() -> None:
    rel = pytorch.Release("2.5", ("6.1",), (), "c", "EV")
    assert rel.source("6.1") == {"kind": "pytorch",
                                 "index_url": "https://download.pytorch.org/whl/rocm6.1/",
                                 "spec": "torch==2.5.0+rocm6.1", "evidence": "EV"}


def test_assignments_and_rocm_lists() -> None:
    values = pytorch._assignments('A = 1\nB = f(x)\nC: int = 2\nD, E = 1, 2\n'
                                  'ROCM_ARCHES_DICT = {"release": ["6.1", 6.2], "nightly": "x"}\n')
    assert values == {"A": 1, "ROCM_ARCHES_DICT": {"release": ["6.1", 6.2], "nightly": "x"}}
    assert pytorch._rocm(values, "release") == ("6.1", "6.2")
    assert pytorch._rocm(values, "nightly") == ()
    assert pytorch._rocm(values, "test") == ()
    assert pytorch._rocm({"ROCM_ARCHES_DICT": ["6.1"]}, "release") == ()


def _src(kind: str = "pytorch", spec: str = "torch==2.5.0+rocm6.1",
         url: str | None = "https://download.pytorch.org/whl/rocm6.1/",
         evidence: str = "pytorch/test-infra@abcdef123 x") -> TorchSource:
    return TorchSource("2.5", "6.1", kind, spec, index_url=url, evidence=evidence)


def test_pair_facts_in_words() -> None:
    rel = pytorch.Release("2.5", ("6.1",), (), "abcdef1234567", "EV")
    want = rel.source("6.1")
    edit = Edit("rocm.toml", ("releases", "6.1", "torch", "2.5"), want)
    assert pytorch._pair_facts("6.1", "2.5", rel, None) == [Fact(
        "drift", "ROCm 6.1 torch 2.5", "none",
        "torch==2.5.0+rocm6.1 from https://download.pytorch.org/whl/rocm6.1/", "EV", (edit,))]
    assert pytorch._pair_facts("6.1", "2.5", rel, _src("amd", "torch==2.5.0")) == [Fact(
        "drift", "ROCm 6.1 torch 2.5", "amd torch==2.5.0",
        "pytorch torch==2.5.0+rocm6.1 from https://download.pytorch.org/whl/rocm6.1/", "EV",
        (edit,))]
    for other in (_src(url="https://example.invalid/"), _src(spec="torch==2.5.1+rocm6.1")):
        assert pytorch._pair_facts("6.1", "2.5", rel, other)[0].data == f"pytorch {other.spec}"
    assert pytorch._pair_facts("6.1", "2.5", rel, _src()) == []
    assert pytorch._pair_facts("6.1", "2.5", rel, _src(evidence="pytorch/test-infra@fff x")) == [
        Fact("drift", "ROCm 6.1 torch 2.5 evidence", "pytorch/test-infra@fff x", "EV", "EV",
             (Edit("rocm.toml", ("releases", "6.1", "torch", "2.5", "evidence"), "EV"),))]


@pytest.mark.parametrize(("evidence", "cites"), [
    ("pytorch/test-infra@abcdef1 x.py", True), ("pytorch/test-infra@abcdef1234567 x", True),
    ("pytorch/test-infra@abcdef2 x.py", False), ("ROCm/TheRock@abcdef1 x.py", False),
    ("see pytorch/test-infra@abcdef1 x.py", False)])
def test_cites_names_the_commit_by_a_prefix(evidence: str, cites: bool) -> None:
    assert pytorch._cites(evidence, "abcdef1234567") is cites


def test_a_pair_never_published_and_a_release_the_data_lacks_are_reviews(world_template: World) -> None:
    rel = pytorch.Release("2.4", ("6.0", "6.1"), (), "c", "EV24")
    repo = _repo(world_template)
    assert pytorch._unpublished_fact(repo, "7.0", "2.4", "torch==2.4.0+rocm7.0", rel) == Fact(
        "review", "ROCm 7.0 torch 2.4", "pytorch torch==2.4.0+rocm7.0",
        "no such pair (torch 2.4: rocm 6.0, 6.1)", "EV24",
        review="upstream PyTorch never published it: point it at AMD's or TheRock's build "
               "(with evidence) or drop it")
    head = world_template.c["ti26"][:9]
    fact = pytorch._unpublished_fact(repo, "7.0", "2.9", "torch==2.9.0", None)
    assert (fact.upstream, fact.evidence) == ("no stable torch 2.9", f"{SLUG}@{head} {SCRIPT}")
    rels = [pytorch.Release("2.4", ("6.9",), (), "c", "EV24"),
            pytorch.Release("2.5", ("6.9",), (), "c", "EV25")]
    assert pytorch._missing_release_fact("6.9", rels) == Fact(
        "review", "ROCm 6.9", "none", "torch 2.4, 2.5 published for it", "EV25",
        review='add [releases."6.9"] (hip, default_family, sdk: not upstream PyTorch\'s word) '
               'and an empty [releases."6.9".torch]; `--write` then adds its torch entries')


def test_check_derives_the_releases_for_the_other_rules(world: World) -> None:
    world.repo(SLUG).commit({SCRIPT: _matrix_script("2.6.0", ["6.2", "6.10", "6.1"])})
    ctx = Context(load_matrix(world.data), world.data, {SLUG: _repo(world)})
    facts = pytorch.check(ctx)
    assert sorted(ctx.derived["pytorch"]) == ["2.4", "2.5", "2.6"]
    head = world.repo(SLUG).git("rev-parse", "HEAD")[:9]
    ev = f"{SLUG}@{head} {SCRIPT} (2.6.0: rocm 6.2, 6.10, 6.1)"
    assert [(f.kind, f.what) for f in facts] == [
        ("drift", "ROCm 6.1 torch 2.6"), ("review", "ROCm 6.2"), ("review", "ROCm 6.10")]
    assert facts[0].evidence == ev
