"""Where a known failure's evidence is read again (toolkit/verify/upstream/known.py ``newest``):
a commit of a TheRock release is read at its release line's ref; any other at HEAD when HEAD's
history holds it, else at the most recently committed *branch* that holds it (a tag is no
line). The repositories are made with real git; the expected commits are read back with git.
"""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.unit.upstream_fakes import FakeRepo
from toolkit.data.known import KnownFailure
from toolkit.verify.upstream import known
from toolkit.verify.upstream.model import Context, Fact
from toolkit.verify.upstream.repos import Repo
from toolkit.verify.upstream.therock_lines import Line, release_lines

SLUG = "ROCm/TheRock"


def _dated(r: FakeRepo, when: int, files: dict[str, str], branch: str = "main",
           base: str = "main") -> str:
    os.environ["GIT_COMMITTER_DATE"] = f"{when} +0000"
    try:
        return r.commit(files, branch=branch, base=base)
    finally:
        del os.environ["GIT_COMMITTER_DATE"]


def test_a_commit_on_heads_history_is_read_at_head(tmp_path: Path) -> None:
    r = FakeRepo(tmp_path, SLUG)
    old = _dated(r, 1_600_000_000, {"a": "1\n"})
    head = _dated(r, 1_600_000_100, {"a": "2\n"})
    repo = Repo(SLUG, r.dir / ".git")
    assert known.newest(repo, old, {}) == head
    assert known._ancestor(repo, old, head)
    assert not known._ancestor(repo, head, old)


def test_a_commit_off_head_is_read_at_the_newest_branch_never_a_tag(tmp_path: Path) -> None:
    r = FakeRepo(tmp_path, SLUG)
    _dated(r, 1_600_000_000, {"a": "1\n"})
    cited = _dated(r, 1_600_000_100, {"a": "side\n"}, branch="side")
    older = _dated(r, 1_600_000_200, {"b": "x\n"}, branch="a-older", base="side")
    newer = _dated(r, 1_600_000_300, {"b": "y\n"}, branch="z-newer", base="side")
    # a tag on a still newer commit holding it (its branch deleted): no line to read
    tagged = _dated(r, 1_600_000_900, {"c": "z\n"}, branch="gone", base="side")
    r.git("tag", "t-newest", tagged)
    r.git("branch", "-D", "gone")
    _dated(r, 1_600_000_500, {"a": "main\n"})  # HEAD moves on without it
    repo = Repo(SLUG, r.dir / ".git")
    assert known.newest(repo, cited, {}) == newer
    assert older != newer
    r.git("branch", "-D", "z-newer")
    assert known.newest(repo, cited, {}) == older


def test_a_commit_no_branch_holds_is_read_at_head(tmp_path: Path) -> None:
    r = FakeRepo(tmp_path, SLUG)
    _dated(r, 1_600_000_000, {"a": "1\n"})
    lost = _dated(r, 1_600_000_100, {"a": "x\n"}, branch="lost")
    r.git("branch", "-D", "lost")
    head = r.git("rev-parse", "HEAD")
    assert known.newest(Repo(SLUG, r.dir / ".git"), lost, {}) == head


def test_a_release_commit_is_read_at_its_lines_ref(tmp_path: Path) -> None:
    r = FakeRepo(tmp_path, SLUG)
    cited = _dated(r, 1_600_000_000, {"version.json": '{"rocm-version": "7.1.0"}\n'})
    line = Line("7.1", "released", "therock-7.1", "f" * 40, "7.1.0", "ev")
    repo = Repo(SLUG, r.dir / ".git")
    assert known.newest(repo, cited, {"7.1": line}) == "f" * 40
    assert known.newest(repo, cited, {"7.2": line}) == cited  # no such line: HEAD


FILE = "build_tools/x.py"


def _entry(evidence: str, holds: str = r"gfx90c") -> KnownFailure:
    return KnownFailure("torch-no-gfx90c", "apex", "install-torch", "no device package",
                        evidence, holds=holds)


def _ctx(root: Path, *entries: KnownFailure) -> Context:
    repos = {SLUG: Repo(SLUG, root / "ROCm+TheRock" / "repo" / ".git")}
    return Context(SimpleNamespace(known_failures=entries), root, repos)  # type: ignore[arg-type]


def test_each_fact_of_an_entry_in_full(tmp_path: Path) -> None:
    r = FakeRepo(tmp_path, SLUG)
    cited = r.commit({FILE: "skip gfx90c\n"})
    c = cited[:9]
    said = _entry(f"{SLUG}@{c} {FILE}")
    assert known.check(_ctx(tmp_path, said)) == []
    never = _entry(f"{SLUG}@{c} {FILE}", holds="gfx1250")
    assert known.check(_ctx(tmp_path, never)) == [Fact(
        "drift", "known failure torch-no-gfx90c", f"`gfx1250` in {FILE}",
        f"{FILE} at {c} does not say it: the evidence is wrong", f"{SLUG}@{c} {FILE}")]
    other = _entry(f"pytorch/FBGEMM@abcdef123 {FILE}")
    assert known.check(_ctx(tmp_path, other)) == [Fact(
        "note", "known failure torch-no-gfx90c", f"pytorch/FBGEMM@abcdef123 {FILE}",
        "not mirrored here: check by hand", f"pytorch/FBGEMM@abcdef123 {FILE}")]
    fixed = r.commit({FILE: "all built\n"})
    assert known.check(_ctx(tmp_path, said)) == [Fact(
        "drift", "known failure torch-no-gfx90c", f"`gfx90c` in {FILE} at {c}",
        f"evidence gone at {fixed[:9]}: re-try with --include-known-failures (remove the entry "
        "when it passes)", f"{SLUG}@{fixed[:9]} {FILE}")]


def test_release_lines_are_read_once_per_run(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    r = FakeRepo(tmp_path, SLUG)
    cited = r.commit({FILE: "skip gfx90c\n"})
    calls: list[str] = []
    real = release_lines

    def counting(repo: Repo) -> dict[str, Line]:
        calls.append(repo.slug)
        return real(repo)

    monkeypatch.setattr(known, "release_lines", counting)
    ctx = _ctx(tmp_path, _entry(f"{SLUG}@{cited[:9]} {FILE}"),
               KnownFailure("second", "apex", "install-torch", "w", f"{SLUG}@{cited[:9]} {FILE}",
                            holds="gfx90c"))
    assert known.check(ctx) == []
    assert calls == [SLUG]
    assert set(ctx.derived["release_lines"]) == {SLUG}
