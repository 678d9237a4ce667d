"""``toolkit.verify.upstream.repos``: what a ``Repo`` reads from a real git repository, the
folder and cache sources and their one-line errors (README: a bad folder exits 2, no git exits
4, an unreachable upstream names ``invoke upstream --dir DIR``).

Every expectation is written by hand from the commits these tests make with real git, or read
back with git itself (``git rev-parse``, ``git cat-file``) as the independent truth."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.unit.upstream_fakes import FakeRepo
from toolkit.core.errors import EnvironmentProblem, SourceUnreachable, UsageError
from toolkit.core.proc import run as proc_run
from toolkit.verify.upstream import repos as mod
from toolkit.verify.upstream.repos import Repo, _parse_batch, from_cache, from_folder, remote_url

SLUG = "ROCm/apex"


def _make(root: Path) -> FakeRepo:
    r = FakeRepo(root, SLUG)
    r.commit({"version.txt": "1.0.0\n", "a.py": "A = 1\n"})
    r.commit({"version.txt": "1.1.0\n"}, branch="release/1.1.0")
    r.commit({"b.py": "B = 2\n"})
    r.git("tag", "v1.0.0", "main~1")
    r.git("tag", "-a", "-m", "annotated", "v2.0.0", "main")
    return r


@pytest.fixture(scope="module")
def fake(tmp_path_factory: pytest.TempPathFactory) -> FakeRepo:
    """One repository the read-only tests share (none of them writes to it)."""
    return _make(tmp_path_factory.mktemp("apex"))


def _repo(fake: FakeRepo, partial: bool = False) -> Repo:
    return Repo(SLUG, fake.dir / ".git", partial=partial)


def test_refs_name_each_branch_and_tag_by_its_short_name_and_commit(fake: FakeRepo) -> None:
    repo = _repo(fake)
    assert repo.refs("refs/heads/") == {"main": fake.git("rev-parse", "main"),
                                        "release/1.1.0": fake.git("rev-parse", "release/1.1.0")}
    assert repo.refs("refs/heads/release/") == {
        "release/1.1.0": fake.git("rev-parse", "release/1.1.0")}
    # an annotated tag is its commit, never the tag object
    assert repo.refs("refs/tags/") == {"v1.0.0": fake.git("rev-parse", "main~1"),
                                       "v2.0.0": fake.git("rev-parse", "main")}
    assert fake.git("rev-parse", "v2.0.0") != fake.git("rev-parse", "main")


def test_commit_log_short_and_evidence(fake: FakeRepo) -> None:
    repo = _repo(fake)
    main = fake.git("rev-parse", "main")
    assert repo.commit("main") == main
    assert repo.commit("v2.0.0") == main  # a tag is peeled to its commit
    assert repo.commit("no-such-ref") is None
    first, second = fake.git("rev-parse", "main~1"), main
    assert repo.log("main", "b.py") == [second]
    assert repo.log("main", "version.txt") == [first]
    assert repo.log("release/1.1.0", "version.txt") == [
        first, fake.git("rev-parse", "release/1.1.0")]  # oldest first
    assert repo.short(main) == main[:9]
    assert repo.evidence(main, "a.py", "b.py") == f"ROCm/apex@{main[:9]} a.py, b.py"


def test_git_with_check_false_gives_empty_text_on_failure(fake: FakeRepo) -> None:
    repo = _repo(fake)
    assert repo.git("rev-parse", "--verify", "nothing-here", check=False) == ""
    assert repo.git("cat-file", "-p", "main:a.py") == "A = 1\n"


def test_read_many_reads_each_file_and_none_for_a_missing_one(fake: FakeRepo) -> None:
    repo = _repo(fake)
    main = fake.git("rev-parse", "main")
    rel = fake.git("rev-parse", "release/1.1.0")
    got = repo.read_many([(main, "a.py"), (rel, "version.txt"), (main, "nope.txt"),
                          (main, "a.py")])
    assert got == ["A = 1\n", "1.1.0\n", None, "A = 1\n"]
    assert repo.show(main, "b.py") == "B = 2\n"
    assert repo.show(main, "missing/x.py") is None
    assert repo.read_many([]) == []


def test_read_many_falls_back_to_one_file_at_a_time_for_bytes_that_are_not_utf8(
        tmp_path: Path) -> None:
    fake = _make(tmp_path)
    (fake.dir / "bin.dat").write_bytes(b"\xff\xfe\x00raw")
    fake.git("add", "bin.dat")
    fake.git("commit", "--quiet", "-m", "binary")
    repo = _repo(fake)
    head = fake.git("rev-parse", "HEAD")
    out = repo.read_many([(head, "a.py"), (head, "bin.dat"), (head, "gone.txt")])
    assert out[0] == "A = 1\n"
    assert out[2] is None
    assert out[1] is not None and out[1].endswith("raw")


def test_parse_batch_reads_sizes_in_bytes() -> None:
    keys = [("c", "a"), ("c", "b"), ("c", "x")]
    text = "e1 blob 4\nhé!\nc:b missing\ne2 blob 2\nok\n"
    assert _parse_batch(text, keys) == {("c", "a"): "hé!", ("c", "b"): None, ("c", "x"): "ok"}
    assert _parse_batch("c:a ambiguous\n", [("c", "a")]) == {("c", "a"): None}
    with pytest.raises(ValueError, match="misaligned batch output"):
        _parse_batch("e1 blob 2\nabcd\n", [("c", "a")])


def _partial_clone(fake: FakeRepo, dest: Path) -> Repo:
    subprocess.run(["git", "clone", "--quiet", "--bare", "--filter=blob:none",
                    f"file://{fake.dir}", str(dest)], check=True, capture_output=True)
    return Repo(SLUG, dest, partial=True)


def _has_blob(git_dir: Path, oid: str) -> bool:
    res = subprocess.run(["git", "--git-dir", str(git_dir), "cat-file", "-e", oid],
                         capture_output=True, env={"GIT_NO_LAZY_FETCH": "1", "PATH": "/usr/bin:/bin"})
    return res.returncode == 0


def test_prefetch_fetches_the_blobs_a_partial_clone_lacks_in_one_batch(
        fake: FakeRepo, tmp_path: Path) -> None:
    repo = _partial_clone(fake, tmp_path / "clone.git")
    main = fake.git("rev-parse", "main")
    a_oid, b_oid = fake.git("rev-parse", "main:a.py"), fake.git("rev-parse", "main:b.py")
    assert not _has_blob(repo.git_dir, a_oid) and not _has_blob(repo.git_dir, b_oid)
    # a path that does not exist makes the names come from ls-tree: the others still come
    repo.prefetch([(main, "a.py"), (main, "no/such.py"), (main, "b.py")])
    assert _has_blob(repo.git_dir, a_oid) and _has_blob(repo.git_dir, b_oid)
    assert repo.read_many([(main, "a.py"), (main, "b.py"), (main, "no/such.py")]) == [
        "A = 1\n", "B = 2\n", None]


def test_a_full_repository_is_never_fetched_into(fake: FakeRepo) -> None:
    repo = _repo(fake)
    repo.prefetch([("0" * 40, "a.py")])  # would fail as a fetch: nothing is run
    assert repo._local is None


def test_names_reads_blob_names_in_trees_even_when_a_path_is_missing(fake: FakeRepo) -> None:
    repo = _repo(fake)
    main = fake.git("rev-parse", "main")
    rel = fake.git("rev-parse", "release/1.1.0")
    a_oid, v_oid = fake.git("rev-parse", "main:a.py"), fake.git("rev-parse", "release/1.1.0:version.txt")
    assert repo._names([(main, "a.py"), (rel, "version.txt")]) == [a_oid, v_oid]
    assert sorted(repo._names([(main, "a.py"), (main, "gone"), (rel, "version.txt")])) == sorted(
        [a_oid, v_oid])
    assert repo._names([(main, "gone")]) == []


def test_require_git_names_the_package_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    assert mod.require_git().endswith("git")
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(EnvironmentProblem) as exc:
        mod.require_git()
    assert exc.value.message == ("git is not installed: `upstream` reads the upstream "
                                 "repositories with git")
    assert exc.value.hint == "apt-get install git"
    assert exc.value.exit_code == 4


def test_from_folder_finds_owner_name_repo_or_owner_name_itself(tmp_path: Path) -> None:
    nested = FakeRepo(tmp_path, "ROCm/apex")
    bare = tmp_path / "pytorch+FBGEMM"
    subprocess.run(["git", "clone", "--quiet", "--bare", str(nested.dir), str(bare)],
                   check=True, capture_output=True)
    got = from_folder(tmp_path, ["ROCm/apex", "pytorch/FBGEMM"])
    assert got["ROCm/apex"].git_dir == nested.dir / ".git"
    assert got["pytorch/FBGEMM"].git_dir == bare
    assert got["ROCm/apex"].slug == "ROCm/apex" and not got["ROCm/apex"].partial


def test_from_folder_errors_name_what_is_wrong_and_what_is_valid(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as exc:
        from_folder(tmp_path / "nope", ["ROCm/apex", "pytorch/FBGEMM"])
    assert exc.value.message == (f"{tmp_path / 'nope'}: no such folder; valid: a folder holding "
                                 "the upstream repositories as OWNER+NAME/repo (ROCm/apex, "
                                 "pytorch/FBGEMM)")
    assert exc.value.exit_code == 2
    with pytest.raises(UsageError) as exc:
        from_folder(tmp_path, ["ROCm/apex", "pytorch/FBGEMM"])
    assert exc.value.message == (f"{tmp_path} lacks the repository ROCm/apex; valid: a folder "
                                 "holding ROCm+apex/repo, pytorch+FBGEMM/repo")
    (tmp_path / "ROCm+apex" / "repo").mkdir(parents=True)
    with pytest.raises(UsageError) as exc:
        from_folder(tmp_path, ["ROCm/apex"])
    assert exc.value.message == (f"{tmp_path / 'ROCm+apex' / 'repo'} is not a git repository "
                                 "(no HEAD and objects/); valid: a clone or mirror of ROCm/apex")


def test_a_folder_with_head_but_no_objects_is_no_repository(tmp_path: Path) -> None:
    d = tmp_path / "ROCm+apex"
    d.mkdir()
    (d / "HEAD").write_text("ref: refs/heads/main\n")
    with pytest.raises(UsageError, match="is not a git repository"):
        from_folder(tmp_path, ["ROCm/apex"])
    (d / "objects").mkdir()
    assert from_folder(tmp_path, ["ROCm/apex"])["ROCm/apex"].git_dir == d


def test_remote_url_is_github_or_the_mirror_layout(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TOOLKIT_UPSTREAM_REMOTE", raising=False)
    assert remote_url("ROCm/apex") == "https://github.com/ROCm/apex.git"
    monkeypatch.setenv("TOOLKIT_UPSTREAM_REMOTE", "")
    assert remote_url("ROCm/apex") == "https://github.com/ROCm/apex.git"
    monkeypatch.setenv("TOOLKIT_UPSTREAM_REMOTE", "file:///srv/mirrors/")
    assert remote_url("ROCm/apex") == "file:///srv/mirrors/ROCm+apex/repo"
    monkeypatch.setenv("TOOLKIT_UPSTREAM_REMOTE", "https://github.com/")
    assert remote_url("pytorch/FBGEMM") == "https://github.com/pytorch/FBGEMM.git"


def test_from_cache_clones_then_fetches_into_bare_partial_clones(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeRepo(tmp_path / "mirrors", SLUG)
    first = fake.commit({"version.txt": "1.0.0\n"})
    monkeypatch.setenv("TOOLKIT_UPSTREAM_REMOTE", str(tmp_path / "mirrors"))
    cache = tmp_path / "cache"
    got = from_cache(cache, [SLUG])[SLUG]
    dest = cache / "upstream" / "ROCm+apex.git"
    assert got.git_dir == dest and got.partial and got.slug == SLUG
    assert not (cache / "upstream" / "ROCm+apex.git.part").exists()
    cfg = subprocess.run(["git", "--git-dir", str(dest), "config", "--get",
                          "remote.origin.partialclonefilter"], capture_output=True, text=True)
    assert cfg.stdout.strip() == "blob:none"
    assert got.commit("main") == first
    fake.git("tag", "v1")
    second = fake.commit({"version.txt": "1.1.0\n"})
    fake.commit({"x": "1\n"}, branch="gone")
    again = from_cache(cache, [SLUG])[SLUG]
    assert again.commit("main") == second and again.commit("v1") == first
    fake.git("branch", "-D", "gone")
    assert from_cache(cache, [SLUG])[SLUG].commit("refs/heads/gone") is None  # pruned


def test_from_cache_unreachable_names_the_url_and_the_way_out(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLKIT_UPSTREAM_REMOTE", str(tmp_path / "none"))
    with pytest.raises(SourceUnreachable) as exc:
        from_cache(tmp_path / "cache", [SLUG])
    url = f"{tmp_path / 'none'}/ROCm+apex/repo"
    assert exc.value.message.startswith(f"cannot fetch ROCm/apex from {url}: ")
    assert "\n" not in exc.value.message
    assert exc.value.hint == "give a folder of mirrors: invoke upstream --dir DIR"


def test_names_are_those_of_the_paths_asked_for_only(tmp_path: Path) -> None:
    """Whatever else the tree holds (here files named like git's own arguments), only the
    asked paths' blobs are named: a prefetch fetches nothing more."""
    r = FakeRepo(tmp_path, SLUG)
    head = r.commit({"a.py": "A\n", "XX--XX": "x\n", "b/--": "y\n"})
    repo = Repo(SLUG, r.dir / ".git")
    assert repo._names([(head, "a.py"), (head, "gone")]) == [r.git("rev-parse", "HEAD:a.py")]


def test_the_git_commands_a_partial_clone_runs_to_read_files(
        fake: FakeRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each argument given to git (the real one runs), in order: the blob names from the
    trees, what is local once, one fetch of the missing ones by name on stdin (no tags, no
    FETCH_HEAD, no submodules), then one ``cat-file --batch``; files read once are not read
    again."""
    repo = _partial_clone(fake, tmp_path / "clone.git")
    calls: list[tuple[list[str], str | None]] = []
    real = proc_run

    def recording(argv: list[str], **kw: object) -> object:
        calls.append((list(argv), kw.get("input")))  # type: ignore[arg-type]
        assert kw.get("timeout") == mod.GIT_TIMEOUT_S
        return real(argv, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(mod, "run", recording)
    main = fake.git("rev-parse", "main")
    a_oid = fake.git("rev-parse", "main:a.py")
    git = ["git", "--git-dir", str(repo.git_dir)]
    assert repo.read_many([(main, "a.py")]) == ["A = 1\n"]
    assert calls == [
        ([*git, "rev-parse", f"{main}:a.py"], None),
        ([*git, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)"], None),
        ([*git, "-c", "fetch.negotiationAlgorithm=noop", "fetch", "--no-tags",
          "--no-write-fetch-head", "--recurse-submodules=no", "--filter=blob:none", "--stdin",
          "origin"], f"{a_oid}\n"),
        ([*git, "cat-file", "--batch"], f"{main}:a.py\n")]
    assert not (repo.git_dir / "FETCH_HEAD").exists()
    calls.clear()
    assert repo.read_many([(main, "a.py")]) == ["A = 1\n"] and calls == []
    # what is local is read once: the next prefetch asks only for the names
    repo.prefetch([(main, "b.py")])
    assert [c[0][3:5] for c in calls] == [["rev-parse", f"{main}:b.py"],
                                          ["-c", "fetch.negotiationAlgorithm=noop"]]
    calls.clear()
    repo.prefetch([(main, "b.py")])  # fetched, but not read yet: local now, nothing to fetch
    assert [c[0][3] for c in calls] == ["rev-parse"]


def test_from_cache_clones_a_second_repository_beside_the_first(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cache's upstream/ folder the first clone made is reused for the second."""
    monkeypatch.setenv("TOOLKIT_UPSTREAM_REMOTE", str(tmp_path / "mirrors"))
    heads = {slug: FakeRepo(tmp_path / "mirrors", slug).commit({"version.txt": "1.0.0\n"})
             for slug in (SLUG, "ROCm/TheRock")}
    got = from_cache(tmp_path / "cache", list(heads))
    assert {slug: repo.commit("main") for slug, repo in got.items()} == heads
    assert sorted(p.name for p in (tmp_path / "cache" / "upstream").iterdir()) == [
        "ROCm+TheRock.git", "ROCm+apex.git"]
