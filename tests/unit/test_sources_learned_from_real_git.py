"""get-sources against real git (``toolkit.run.sources``): what a copied checkout teaches the
build (SHA, SHA8, SOURCE_DATE_EPOCH, TREE), what is left out of the copy, the shared mirror
(cloned once, fetched when a ref is missing, a missing ref refused), gitlinks, and submodule
URLs relative to their superproject.

The truths: ``git rev-parse HEAD`` and the commit's own committer date (set by hand through
``GIT_COMMITTER_DATE``), git's mode 160000 for a gitlink (gitmodules(5), git-update-index(1)),
git-submodule(1) on relative URLs ("../" is relative to the superproject's URL), the README's
exit codes (2 bad input, 5 a build step failed), POSIX signal names.
"""

from __future__ import annotations

import io
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from toolkit.core.errors import StepFailed, UsageError
from toolkit.core.steps import CopySources, FetchSubmodules, Step, Submodule
from toolkit.plan.layout import Layout
from toolkit.plan.model import Options, Plan
from toolkit.plan.recipes import load_matrix
from toolkit.run import sources
from toolkit.run.context import Run

EPOCH = 1_700_000_000


@pytest.fixture(autouse=True)
def git_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{key}_NAME", "t")
        monkeypatch.setenv(f"GIT_{key}_EMAIL", "t@example.invalid")
        monkeypatch.setenv(f"GIT_{key}_DATE", f"@{EPOCH} +0000")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")


def sh_git(*args: str, cwd: Path | None = None) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout.strip()


def repo_with(path: Path, files: dict[str, str]) -> str:
    path.mkdir(parents=True)
    sh_git("init", "-q", "-b", "main", str(path))
    for name, text in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    sh_git("-C", str(path), "add", "-A")
    sh_git("-C", str(path), "commit", "-q", "-m", "one")
    return sh_git("-C", str(path), "rev-parse", "HEAD")


@pytest.fixture
def run(tmp_path: Path) -> Iterator[Run]:
    m = load_matrix()
    plan = Plan(m.builds[0], ("gfx942",), None, (), options=Options(allow_dirty=True))
    yield Run(plan, Layout(tmp_path / "work", tmp_path / "cache"), io.StringIO())


def copy_step(src: Path, dest: Path) -> Step:
    return Step("get-sources", "copy", CopySources(str(src), str(dest)))


def test_a_copied_checkout_teaches_its_commit_and_commit_time(tmp_path: Path, run: Run) -> None:
    src = tmp_path / "src"
    sha = repo_with(src, {"setup.py": "x = 1\n"})
    sources.copy_sources(copy_step(src, tmp_path / "wt"), run)
    assert run.values["SHA"] == sha
    assert run.values["SHA8"] == sha[:8] and len(run.values["SHA8"]) == 8
    assert run.values["SOURCE_DATE_EPOCH"] == str(EPOCH)
    assert "DIFF" not in run.values  # a clean checkout


def test_a_plain_folder_has_no_commit_and_its_tree_names_it(tmp_path: Path, run: Run) -> None:
    src = tmp_path / "plain"
    src.mkdir()
    (src / "setup.py").write_text("x = 1\n")
    sources.copy_sources(copy_step(src, tmp_path / "wt"), run)
    assert run.values["SHA"] == "0" * 40
    assert run.values["SOURCE_DATE_EPOCH"] == "0"
    tree = run.values["TREE"]
    assert len(tree) == 64 and run.values["SHA8"] == tree[:8]


def test_what_the_copy_leaves_out_and_what_changes_the_tree(tmp_path: Path, run: Run) -> None:
    src = tmp_path / "plain"
    (src / "pkg").mkdir(parents=True)
    (src / "pkg" / "a.py").write_text("a = 1\n")
    for junk in ("build/x.o", "dist/old.whl", "pkg.egg-info/PKG-INFO", "pkg/__pycache__/a.pyc",
                 ".nox/x", ".git/HEAD"):
        (src / junk).parent.mkdir(parents=True, exist_ok=True)
        (src / junk).write_text("junk\n")
    wt = tmp_path / "wt"
    sources.copy_sources(copy_step(src, wt), run)
    copied = sorted(str(p.relative_to(wt)) for p in wt.rglob("*") if p.is_file())
    assert copied == ["pkg/a.py"]
    first = run.values["TREE"]
    sources.copy_sources(copy_step(src, wt), run)
    assert run.values["TREE"] == first  # the same bytes: the same tree
    (src / "pkg" / "a.py").write_text("a = 2\n")
    sources.copy_sources(copy_step(src, wt), run)
    assert run.values["TREE"] != first


def test_a_source_that_is_no_folder_is_bad_input(tmp_path: Path, run: Run) -> None:
    with pytest.raises(UsageError) as caught:
        sources.copy_sources(copy_step(tmp_path / "nowhere", tmp_path / "wt"), run)
    assert caught.value.exit_code == 2
    assert str(caught.value).startswith(f"--source {tmp_path / 'nowhere'} is not a folder")


def test_a_copy_that_cannot_be_made_names_both_folders_and_the_os_reason(
        tmp_path: Path, run: Run) -> None:
    src = tmp_path / "src"
    repo_with(src, {"setup.py": "x = 1\n"})
    (tmp_path / "afile").write_text("a file, not a folder\n")
    wt = tmp_path / "afile" / "wt"  # its parent is a file: ENOTDIR (POSIX)
    with pytest.raises(StepFailed) as caught:
        sources.copy_sources(copy_step(src, wt), run)
    assert caught.value.exit_code == 5
    assert str(caught.value).startswith(f"cannot copy {src} to {wt}: ")
    assert "Not a directory" in str(caught.value)


def test_a_failing_git_command_names_itself_masked_with_its_status(tmp_path: Path) -> None:
    with pytest.raises(StepFailed) as caught:
        sources.git("clone", "--quiet", "https://user:s3cret@127.0.0.1:1/x.git",
                    str(tmp_path / "x"))
    message = str(caught.value)
    assert caught.value.exit_code == 5
    assert message.startswith("git clone --quiet https://")
    assert "s3cret" not in message and f"{tmp_path / 'x'} failed (exit 128): " in message
    assert sources.git("-C", str(tmp_path), "rev-parse", "HEAD", check=False) == ""


def test_the_mirror_is_cloned_once_fetched_for_a_new_ref_and_refuses_a_missing_one(
        tmp_path: Path, run: Run) -> None:
    origin = tmp_path / "origin"
    first = repo_with(origin, {"a": "1\n"})
    mirror = tmp_path / "cache" / "mirrors" / "origin.git"
    sources.ensure_mirror(str(origin), mirror, first, run)
    assert (mirror / "HEAD").exists() and not mirror.with_name("origin.git.partial").exists()
    assert sh_git("--git-dir", str(mirror), "rev-parse", "main") == first
    (origin / "b").write_text("2\n")
    sh_git("-C", str(origin), "add", "b")
    sh_git("-C", str(origin), "commit", "-q", "-m", "two")
    second = sh_git("-C", str(origin), "rev-parse", "HEAD")
    sources.ensure_mirror(str(origin), mirror, second, run)  # missing here: fetched
    assert sh_git("--git-dir", str(mirror), "rev-parse", "main") == second
    with pytest.raises(UsageError) as caught:
        sources.ensure_mirror(str(origin), mirror, "no-such-ref", run)
    assert f"ref 'no-such-ref' does not exist in {origin}" in str(caught.value)
    # the fetch for the missing ref is in the build log as the git command it ran
    assert f"$ git -C {mirror} fetch --quiet --prune origin\n" in run.log.getvalue()  # type: ignore[attr-defined]


def test_a_gitlink_is_the_recorded_commit_and_a_file_is_none(tmp_path: Path) -> None:
    repo = tmp_path / "super"
    repo_with(repo, {"file.txt": "x\n"})
    sub_sha = "1234567890abcdef1234567890abcdef12345678"
    sh_git("-C", str(repo), "update-index", "--add", "--cacheinfo", f"160000,{sub_sha},third/lib")
    sh_git("-C", str(repo), "commit", "-q", "-m", "gitlink")
    assert sources.recorded_commit(repo, "third/lib") == sub_sha
    assert sources.recorded_commit(repo, "file.txt") is None
    assert sources.recorded_commit(repo, "absent") is None


@pytest.mark.parametrize(("url", "expected"), [
    ("../hipify.git", "https://github.com/ROCm/hipify.git"),
    ("./sub.git", "https://github.com/ROCm/apex.git/sub.git"),
    ("https://gitlab.example/x.git", "https://gitlab.example/x.git"),
])
def test_submodule_urls_relative_to_the_superproject(url: str, expected: str) -> None:
    assert sources._resolve_url(url, "https://github.com/ROCm/apex.git") == expected
    assert sources._resolve_url(url, "https://github.com/ROCm/apex.git/") == expected


def _submodules_step(worktree: Path, tmp_path: Path, *subs: Submodule) -> Step:
    return Step("fetch-submodules", "subs",
                FetchSubmodules(str(worktree), subs, str(tmp_path / "mirrors")))


def test_a_submodule_the_checkout_does_not_declare_is_named_with_what_it_lists(
        tmp_path: Path, run: Run) -> None:
    wt = tmp_path / "wt"
    wt.mkdir()
    (wt / ".gitmodules").write_text('[submodule "a"]\n\tpath = third/a\n\turl = ../a.git\n')
    sub = Submodule("third/b", "https://x.example/b.git", str(tmp_path / "m" / "b.git"))
    with pytest.raises(StepFailed) as caught:
        sources.fetch_submodules(_submodules_step(wt, tmp_path, sub), run)
    assert "third/b" in str(caught.value) and "it lists: third/a" in str(caught.value)
    (wt / ".gitmodules").write_text("")
    with pytest.raises(StepFailed) as caught:
        sources.fetch_submodules(_submodules_step(wt, tmp_path, sub), run)
    assert "it lists: none" in str(caught.value)


def test_a_submodule_url_other_than_the_matrix_names_both(tmp_path: Path, run: Run) -> None:
    wt = tmp_path / "wt"
    wt.mkdir()
    (wt / ".gitmodules").write_text('[submodule "a"]\n\tpath = third/a\n\turl = https://y/a.git\n')
    sub = Submodule("third/a", "https://x.example/a.git", str(tmp_path / "m" / "a.git"))
    with pytest.raises(StepFailed) as caught:
        sources.fetch_submodules(_submodules_step(wt, tmp_path, sub), run)
    assert "https://y/a.git" in str(caught.value) and "https://x.example/a.git" in str(caught.value)


def test_a_declared_submodule_without_a_gitlink_is_refused(tmp_path: Path, run: Run) -> None:
    wt = tmp_path / "wt"
    repo_with(wt, {".gitmodules": '[submodule "a"]\n\tpath = third/a\n\turl = https://x/a.git\n'})
    sub = Submodule("third/a", "https://x/a.git", str(tmp_path / "m" / "a.git"))
    with pytest.raises(StepFailed) as caught:
        sources.fetch_submodules(_submodules_step(wt, tmp_path, sub), run)
    assert "third/a is not a submodule at HEAD" in str(caught.value)


def test_a_submodule_is_checked_out_at_its_recorded_commit(tmp_path: Path, run: Run) -> None:
    lib = tmp_path / "lib"
    first = repo_with(lib, {"lib.h": "int one;\n"})
    (lib / "lib.h").write_text("int two;\n")
    sh_git("-C", str(lib), "commit", "-q", "-am", "two")  # the superproject records the first
    wt = tmp_path / "wt"
    url = str(lib)
    repo_with(wt, {".gitmodules": f'[submodule "lib"]\n\tpath = third/lib\n\turl = {url}\n'})
    sh_git("-C", str(wt), "update-index", "--add", "--cacheinfo", f"160000,{first},third/lib")
    sh_git("-C", str(wt), "commit", "-q", "-m", "gitlink")
    sub = Submodule("third/lib", url, str(tmp_path / "mirrors" / "lib.git"))
    sources.fetch_submodules(_submodules_step(wt, tmp_path, sub), run)
    assert (wt / "third" / "lib" / "lib.h").read_text() == "int one;\n"
    assert sh_git("-C", str(wt / "third" / "lib"), "rev-parse", "HEAD") == first
    # the build log shows the git commands that put it there, as one would type them
    log = run.log.getvalue()  # type: ignore[attr-defined]
    assert (f"$ git clone --no-checkout {tmp_path / 'mirrors' / 'lib.git'} {wt / 'third' / 'lib'}"
            f"; git checkout --detach {first}\n") in log


def test_nesting_deeper_than_eight_levels_is_refused(tmp_path: Path, run: Run) -> None:
    with pytest.raises(StepFailed) as caught:
        sources._nested(tmp_path, "https://x/a.git", tmp_path / "m", run, 9)
    assert str(caught.value).startswith(f"{tmp_path}: submodules nested deeper than 8 levels")
    sources._nested(tmp_path, "https://x/a.git", tmp_path / "m", run, 8)  # no .gitmodules: fine


def test_a_fetched_worktree_is_at_the_ref_and_a_second_fetch_replaces_it(
        tmp_path: Path, run: Run) -> None:
    from toolkit.core.steps import FetchSources

    origin = tmp_path / "origin"
    first = repo_with(origin, {"setup.py": "v = 1\n"})
    sh_git("-C", str(origin), "tag", "v1")
    (origin / "setup.py").write_text("v = 2\n")
    sh_git("-C", str(origin), "commit", "-q", "-am", "two")
    mirror, wt = tmp_path / "cache" / "mirrors" / "origin.git", tmp_path / "work" / "src"
    action = FetchSources(str(origin), "v1", str(mirror), str(wt))
    wt.mkdir(parents=True)  # a plain folder (no git worktree) in its place: replaced
    (wt / "old.txt").write_text("not from git\n")
    result = sources.fetch_sources(Step("get-sources", "fetch", action), run)
    assert result.returncode == 0 and result.argv == list(action.command().argv)
    assert (wt / "setup.py").read_text() == "v = 1\n" and not (wt / "old.txt").exists()
    assert run.values["SHA"] == first and run.values["SHA8"] == first[:8]
    assert run.values["SOURCE_DATE_EPOCH"] == str(EPOCH)
    (wt / "stray.o").write_text("left by an earlier build\n")
    sources.fetch_sources(Step("get-sources", "fetch", FetchSources(str(origin), "main",
                                                                     str(mirror), str(wt))), run)
    assert (wt / "setup.py").read_text() == "v = 2\n" and not (wt / "stray.o").exists()
    assert run.values["SHA"] == sh_git("-C", str(origin), "rev-parse", "main")
    log = run.log.getvalue()  # type: ignore[attr-defined]
    assert f"$ git clone --mirror --quiet {origin}" in log  # cloned once ...
    assert log.count("git clone --mirror") == 1


def test_nested_submodules_are_checked_out_recursively(tmp_path: Path, run: Run) -> None:
    inner = tmp_path / "inner"
    inner_sha = repo_with(inner, {"inner.h": "int inner;\n"})
    outer = tmp_path / "outer"
    repo_with(outer, {".gitmodules": '[submodule "in"]\n\tpath = deps/in\n\turl = ../inner\n',
                      "outer.h": "int outer;\n"})
    sh_git("-C", str(outer), "update-index", "--add", "--cacheinfo", f"160000,{inner_sha},deps/in")
    sh_git("-C", str(outer), "commit", "-q", "-m", "gitlink")
    outer_sha = sh_git("-C", str(outer), "rev-parse", "HEAD")
    wt = tmp_path / "wt"
    repo_with(wt, {".gitmodules": f'[submodule "o"]\n\tpath = third/outer\n\turl = {outer}\n'})
    sh_git("-C", str(wt), "update-index", "--add", "--cacheinfo", f"160000,{outer_sha},third/outer")
    sh_git("-C", str(wt), "commit", "-q", "-m", "gitlink")
    sub = Submodule("third/outer", str(outer), str(tmp_path / "mirrors" / "outer.git"))
    sources.fetch_submodules(_submodules_step(wt, tmp_path, sub), run)
    assert (wt / "third" / "outer" / "outer.h").exists()
    # "../inner" relative to the outer repository's URL (git-submodule(1))
    assert (wt / "third" / "outer" / "deps" / "in" / "inner.h").read_text() == "int inner;\n"
    assert sh_git("-C", str(wt / "third" / "outer" / "deps" / "in"), "rev-parse", "HEAD") == inner_sha
    mirrors = sorted(p.name for p in (tmp_path / "mirrors").iterdir() if p.suffix != ".lock"
                     and not p.name.endswith(".holder"))
    assert len(mirrors) == 2  # each repository mirrored once, the nested one in the mirrors folder
