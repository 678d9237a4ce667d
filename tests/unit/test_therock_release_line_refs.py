"""Which ref states a TheRock release (toolkit/verify/upstream/therock_lines.py): the newest
``therock-X.Y[.Z]`` tag by number, a ``release/therock-X.Y`` branch, the newest BKC branch,
main's last commit at the version; and whether a data file's evidence cites a commit of that
line (therock_releases ``_on_line``). Repositories made with real git; the expected refs and
commits are written by hand from the commits made."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.upstream_fakes import FakeRepo, World
from toolkit.plan.recipes import load_matrix
from toolkit.verify.upstream import therock_lines as tl
from toolkit.verify.upstream import therock_releases as tr
from toolkit.verify.upstream.model import Context, Edit
from toolkit.verify.upstream.repos import Repo

SLUG = "ROCm/TheRock"


def _v(version: str) -> dict[str, str]:
    return {"version.json": f'{{"rocm-version": "{version}"}}\n'}


@pytest.fixture(scope="module")
def rock(tmp_path_factory: pytest.TempPathFactory) -> tuple[FakeRepo, dict[str, str]]:
    """main: 7.1.0, 7.1.1, 7.2.0, 7.3.0; tags therock-7.1, -7.1.9, -7.1.10 (on one
    commit each), a 7.2 release branch, two 7.3 BKC branches and a 7.3 release branch's lookalike."""
    r = FakeRepo(tmp_path_factory.mktemp("lines"), SLUG)
    c = {"71": r.commit(_v("7.1.0")), "711": r.commit(_v("7.1.1")),
         "71x": r.commit({"x": "last 7.1\n"}), "72": r.commit(_v("7.2.0")),
         "73": r.commit(_v("7.3.0"))}
    c["t71"] = r.commit({"a": "1\n"}, branch="b71", base=c["71"])
    c["t719"] = r.commit({"a": "9\n"}, branch="b71")
    c["t7110"] = r.commit({"a": "10\n"}, branch="b71")
    r.git("tag", "therock-7.1", c["t71"])
    r.git("tag", "therock-7.1.10", c["t7110"])
    r.git("tag", "therock-7.1.9", c["t719"])
    r.git("tag", "therock-7.1-rc1", c["t719"])
    c["b72"] = r.commit({"a": "72\n"}, branch="release/therock-7.2", base=c["72"])
    c["bkc1"] = r.commit({"a": "bkc1\n"}, branch="release/bkc/therock-7.3-20260901", base=c["73"])
    c["bkc2"] = r.commit({"a": "bkc2\n"}, branch="release/bkc/therock-7.3-20260915", base=c["73"])
    r.commit({"a": "no\n"}, branch="release/therock-7.3-hotfix", base=c["73"])
    return r, c


def _repo(rock: tuple[FakeRepo, dict[str, str]]) -> Repo:
    return Repo(SLUG, rock[0].dir / ".git")


def test_each_version_at_its_strongest_ref(rock: tuple[FakeRepo, dict[str, str]]) -> None:
    c = rock[1]
    lines = tl.release_lines(_repo(rock))
    assert list(lines) == ["7.1", "7.2", "7.3"]
    assert [(ln.status, ln.ref, ln.commit, ln.version) for ln in lines.values()] == [
        ("released", "therock-7.1.10", c["t7110"], "7.1.0"),  # the tag is off 7.1.0
        ("branch", "release/therock-7.2", c["b72"], "7.2.0"),
        ("bkc", "release/bkc/therock-7.3-20260915", c["bkc2"], "7.3.0")]
    assert lines["7.2"].evidence == f"{SLUG}@{c['b72'][:9]} version.json"


def test_main_versions_end_at_the_commit_before_the_next(rock: tuple[FakeRepo, dict[str, str]]
                                                         ) -> None:
    c = rock[1]
    assert tl.main_versions(_repo(rock)) == {"7.1": c["71x"], "7.2": c["72"], "7.3": c["73"]}


def test_line_of_a_commit_is_the_line_of_its_version(rock: tuple[FakeRepo, dict[str, str]]) -> None:
    c, repo = rock[1], _repo(rock)
    line = tl.line_of(repo, c["711"])
    assert line is not None and line.ref == "therock-7.1.10"
    assert tl.line_of(repo, c["bkc1"], {}) is None  # no such line among those given
    only = {"7.3": tl.Line("7.3", "x", "r", "c", None, "e")}
    assert tl.line_of(repo, c["bkc1"], only) == only["7.3"]


def test_a_commit_without_a_version_is_on_no_line(tmp_path: Path) -> None:
    r = FakeRepo(tmp_path, SLUG)
    c = r.commit({"README.md": "x\n"})
    assert tl.line_of(Repo(SLUG, r.dir / ".git"), c) is None


def test_evidence_on_the_line_cites_a_commit_of_it_holding_the_same_file(world: World) -> None:
    rock = world.repo(SLUG)
    repo = Repo(SLUG, rock.dir / ".git")
    c70 = world.c["rock70"]
    later = rock.commit({"README.md": "later\n"})
    changed = rock.commit({"version.json": '{"rocm-version": "7.0.1"}\n'})
    line = tl.Line("7.0", "released", "therock-7.0", changed, "7.0.1", "e")
    at_later = tl.Line("7.0", "released", "therock-7.0", later, "7.0.0", "e")
    assert tr._on_line(repo, f"{SLUG}@{later[:9]} version.json", "version.json", line) is False
    assert tr._on_line(repo, f"{SLUG}@{c70[:9]} version.json", "version.json", at_later) is True
    assert tr._on_line(repo, f"{SLUG}@{later[:9]} version.json", "version.json", at_later) is True
    assert tr._on_line(repo, f"{SLUG}@{changed[:9]} version.json", "version.json", at_later) is False
    assert tr._on_line(repo, f"{SLUG}@{c70[:9]} other.json", "version.json", at_later) is False
    assert tr._on_line(repo, f"{SLUG}@abcdef1 version.json", "version.json", at_later) is False
    assert tr._on_line(repo, f"ROCm/apex@{c70[:9]} version.json", "version.json", at_later) is False
    # the path is the one cited, among several the evidence names
    two = f"{SLUG}@{changed[:9]} a.py, {SLUG}@{c70[:9]} version.json"
    assert tr._on_line(repo, two, "version.json", at_later) is True


def test_a_dropped_torch_unpairs_the_versions_on_it(world: World) -> None:
    ctx = Context(load_matrix(world.data), world.data, {})
    assert tr._unpair(ctx, "6.1", "2.5") == [Edit("apex.toml", ("versions", 1, "rocm"), []),
                                             Edit("fbgemm_gpu.toml", ("versions", 0, "rocm"), [])]
    assert tr._unpair(ctx, "6.0", "2.4") == [Edit("apex.toml", ("versions", 0, "rocm"), [])]
    assert tr._unpair(ctx, "6.1", "2.9") == []


def test_no_multi_arch_release_in_the_data_compares_nothing(world: World) -> None:
    rocm = world.data / "rocm.toml"
    rocm.write_text(rocm.read_text().replace('layout = "multi-arch"', 'layout = "per-family", legacy = true'))
    from toolkit.data.matrix import forget_loaded

    forget_loaded()
    repo = Repo(SLUG, world.repo(SLUG).dir / ".git")
    ctx = Context(load_matrix(world.data), world.data, {SLUG: repo})
    forget_loaded()
    assert tr.release_facts(ctx, repo) == []
