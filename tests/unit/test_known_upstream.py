"""`invoke upstream`'s known-failure rule (toolkit/verify/upstream/known.py) against a hand-made
git repository: evidence that still holds at the newest commit is quiet, evidence removed
since is drift saying to re-try, a wrong commit or a file that never said it is drift, an
issue is a note naming it (never a pass). Every expected line is written by hand."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.unit.upstream_fakes import FakeRepo
from toolkit.data.known import KnownFailure
from toolkit.verify.upstream import known as rule
from toolkit.verify.upstream.model import Context
from toolkit.verify.upstream.repos import Repo

SLUG = "ROCm/TheRock"
FILE = "build_tools/github_actions/configure_pytorch_release_matrix.py"
EXCLUDES = 'UNSUPPORTED = {\n    "release/2.13": {"gfx125X-dcgpu", "gfx90c"},\n}\n'
FIXED = 'UNSUPPORTED = {\n    "release/2.13": {"gfx125X-dcgpu"},\n}\n'
HOLDS = r'"release/2\.13": \{[^}]*"gfx90c"'


def _entry(evidence: str, holds: str = HOLDS) -> KnownFailure:
    return KnownFailure("torch-no-gfx90c", "apex", "install-torch", "no device package",
                        evidence, holds=holds)


def _check(root: Path, *entries: KnownFailure) -> list[str]:
    repos = {SLUG: Repo(SLUG, root / "ROCm+TheRock" / "repo" / ".git")}
    ctx = Context(SimpleNamespace(known_failures=entries), root, repos)  # type: ignore[arg-type]
    return [f.line() for f in rule.check(ctx)]


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Path, str, FakeRepo]:
    r = FakeRepo(tmp_path, SLUG)
    cited = r.commit({FILE: EXCLUDES})
    return tmp_path, cited, r


def test_evidence_still_there_is_quiet(repo: tuple[Path, str, FakeRepo]) -> None:
    root, cited, r = repo
    r.commit({"README.md": "unrelated\n"})  # newer commits that keep the line
    assert _check(root, _entry(f"{SLUG}@{cited[:9]} {FILE}")) == []


def test_evidence_removed_upstream_is_drift_saying_to_retry(repo: tuple[Path, str, FakeRepo]) -> None:
    root, cited, r = repo
    newest = r.commit({FILE: FIXED})
    lines = _check(root, _entry(f"{SLUG}@{cited[:9]} {FILE}"))
    assert len(lines) == 1
    assert lines[0].startswith("drift: known failure torch-no-gfx90c: ")
    assert (f"evidence gone at {newest[:9]}: re-try with --include-known-failures"
            in lines[0])


def test_a_commit_upstream_lacks_is_drift(repo: tuple[Path, str, FakeRepo]) -> None:
    root, _, _ = repo
    lines = _check(root, _entry(f"{SLUG}@0123456789abc {FILE}"))
    assert lines == [f"drift: known failure torch-no-gfx90c: data {SLUG}@0123456789abc {FILE}; "
                     f"upstream no commit 0123456789abc in {SLUG}: the evidence is wrong "
                     f"[{SLUG} history]"]


def test_a_file_that_never_said_it_is_drift(repo: tuple[Path, str, FakeRepo]) -> None:
    root, cited, _ = repo
    lines = _check(root, _entry(f"{SLUG}@{cited[:9]} {FILE}", holds=r'"release/2\.14"'))
    assert len(lines) == 1 and "does not say it: the evidence is wrong" in lines[0]


def test_an_issue_is_a_note_naming_it_never_a_pass(repo: tuple[Path, str, FakeRepo]) -> None:
    root, _, _ = repo
    lines = _check(root, _entry("ROCm/TheRock#5833", holds=""))
    assert lines == ["note: known failure torch-no-gfx90c: data ROCm/TheRock#5833; upstream an "
                     "issue cannot be read offline: check by hand whether it is closed "
                     "[https://github.com/ROCm/TheRock/issues/5833]"]


def test_an_unmirrored_repository_is_a_note(repo: tuple[Path, str, FakeRepo]) -> None:
    root, _, _ = repo
    lines = _check(root, _entry(f"pytorch/FBGEMM@c03986990 {FILE}"))
    assert len(lines) == 1 and lines[0].startswith("note: ") and "check by hand" in lines[0]


def test_a_release_branch_is_read_on_its_own_line(repo: tuple[Path, str, FakeRepo]) -> None:
    """A published release's branch keeps the exclusion while main lifts it: evidence cited on
    the release branch holds; once the release branch lifts it too, it is gone there."""
    root, _, r = repo
    cited = r.commit({"version.json": '{"rocm-version": "10.0.0"}\n'},
                     branch="release/therock-10.0")
    r.commit({FILE: FIXED})  # main moves on
    assert _check(root, _entry(f"{SLUG}@{cited[:9]} {FILE}")) == []
    lifted = r.commit({FILE: FIXED}, branch="release/therock-10.0")
    lines = _check(root, _entry(f"{SLUG}@{cited[:9]} {FILE}"))
    assert len(lines) == 1 and f"evidence gone at {lifted[:9]}: re-try" in lines[0]


def test_a_release_is_read_at_the_ref_rocm_toml_reads_it(repo: tuple[Path, str, FakeRepo]) -> None:
    """A commit of main at 10.1 is read where `upstream` reads the 10.1 release: its BKC branch
    (no tag, no release/therock-10.1), not main's HEAD (which keeps the exclusion)."""
    root, _, r = repo
    cited = r.commit({"version.json": '{"rocm-version": "10.1.0"}\n'})
    r.git("branch", "release/bkc/therock-10.1-20260811", cited)
    r.commit({"README.md": "main moves on\n"})  # main keeps the exclusion
    assert _check(root, _entry(f"{SLUG}@{cited[:9]} {FILE}")) == []
    lifted = r.commit({FILE: FIXED}, branch="release/bkc/therock-10.1-20260811")
    lines = _check(root, _entry(f"{SLUG}@{cited[:9]} {FILE}"))
    assert len(lines) == 1 and f"evidence gone at {lifted[:9]}: re-try" in lines[0]
    # a tag therock-10.1 (on main, before the BKC branch lifted it) wins over the BKC branch
    r.git("tag", "therock-10.1", cited)
    assert _check(root, _entry(f"{SLUG}@{cited[:9]} {FILE}")) == []
