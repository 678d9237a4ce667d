"""Issue 29, honest names: a checkout with uncommitted changes is refused (exit 12) unless
``--allow-dirty``; then its wheel carries the PEP 440 local segment ``dirty``, never replaces
the clean commit's wheel, and its changes' sha256 is what repro compares. And a work folder
inside a work folder's ``dist/`` or ``artifacts/`` is refused (exit 2).

Every repository here is a real one (``git init`` in a temporary folder); the truths are
git's own output hashed here, packaging's and pip's parsers, and the README's words."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from packaging.utils import parse_wheel_filename
from packaging.version import Version

from tests.unit.test_publish_compare import staged_run
from toolkit.core.errors import DirtySource
from toolkit.core.steps import Publish, Step
from toolkit.env.project import source_changes
from toolkit.run.building import publish
from toolkit.run.wheels import name_wheel
from toolkit.verify.repro import _dirty_difference

ROOT = Path(__file__).resolve().parents[2]
BUILD_ID = "apex-1.8.0-cp312-rocm7.0"
GIT = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
       "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}


def git(repo: Path, *args: str) -> str:
    res = subprocess.run(["git", *args], cwd=repo, env={**os.environ, **GIT},
                         capture_output=True, check=True)
    return res.stdout.decode()


def git_bytes(repo: Path, *args: str) -> bytes:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, check=True).stdout


def a_checkout(tmp: Path) -> Path:
    """A committed project: setup.py, src/mod.c, a .gitignore naming *.log."""
    repo = tmp / "proj"
    (repo / "src").mkdir(parents=True)
    (repo / "setup.py").write_text("from setuptools import setup\nsetup()\n")
    (repo / "src" / "mod.c").write_text("int f(void) { return 1; }\n")
    (repo / ".gitignore").write_text("*.log\n")
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "one")
    return repo


def cli(*argv: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "toolkit", *argv], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


# ------------------------------------------------------------------ what counts as dirty
def test_a_clean_checkout_and_a_plain_folder_have_no_changes(tmp_path: Path) -> None:
    repo = a_checkout(tmp_path)
    (repo / "build.log").write_text("ignored by .gitignore")
    assert source_changes(repo) is None
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "setup.py").write_text("")
    assert source_changes(plain) is None  # no commit: named by its tree hash instead


def test_the_diff_hash_is_the_sha256_of_git_diff_head(tmp_path: Path) -> None:
    repo = a_checkout(tmp_path)
    (repo / "src" / "mod.c").write_text("int f(void) { return 2; }\n")
    (repo / "setup.py").unlink()
    changes = source_changes(repo)
    assert changes is not None
    assert sorted(changes.files) == ["setup.py", "src/mod.c"]
    # the README's command; full blob ids (an abbreviation depends on the repository and
    # core.abbrev), no rename detection (diff.renames)
    truth = hashlib.sha256(git_bytes(repo, "diff", "HEAD", "--binary", "--full-index",
                                     "--no-renames")).hexdigest()
    assert changes.diff_sha256 == truth
    # staged or not, the same changes: the same hash
    git(repo, "add", "-A")
    again = source_changes(repo)
    assert again is not None and again.diff_sha256 == truth


def test_untracked_files_count_and_change_the_hash_ignored_ones_do_not(tmp_path: Path) -> None:
    repo = a_checkout(tmp_path)
    (repo / "src" / "mod.c").write_text("int f(void) { return 2; }\n")
    only_diff = source_changes(repo)
    (repo / "notes.log").write_text("ignored")
    assert source_changes(repo) == only_diff
    (repo / "src" / "extra.c").write_text("int g(void) { return 3; }\n")
    with_new = source_changes(repo)
    assert with_new is not None and only_diff is not None
    assert with_new.files == ("src/mod.c", "src/extra.c")
    assert with_new.diff_sha256 != only_diff.diff_sha256
    (repo / "src" / "extra.c").write_text("int g(void) { return 4; }\n")
    other = source_changes(repo)
    assert other is not None and other.diff_sha256 != with_new.diff_sha256


def test_only_changes_under_the_source_folder_count(tmp_path: Path) -> None:
    """The bundled sample lives inside the toolkit's own checkout: a change elsewhere in it
    is not the sample's."""
    repo = a_checkout(tmp_path)
    (repo / "setup.py").write_text("# elsewhere\n")
    assert source_changes(repo / "src") is None
    (repo / "src" / "mod.c").write_text("int f(void) { return 5; }\n")
    changes = source_changes(repo / "src")
    assert changes is not None and changes.files == ("mod.c",)


# -------------------------------------------------------------------------- the command line
def test_plan_refuses_a_dirty_source_with_exit_12_naming_the_files(tmp_path: Path) -> None:
    repo = a_checkout(tmp_path)
    for name in ("a.c", "b.c", "c.c", "d.c"):
        (repo / "src" / name).write_text("x\n")
    res = cli("plan", BUILD_ID, "--source", str(repo), "--workdir", str(tmp_path / "w"))
    assert res.returncode == 12, res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in res.stderr
    assert lines[0].startswith(f"error: the source {repo} has uncommitted changes (4 files: "
                               "src/a.c, src/b.c, src/c.c and 1 more)")
    assert "--allow-dirty" in lines[0]
    assert res.stdout == ""


def test_plan_with_allow_dirty_names_the_wheel_dirty(tmp_path: Path) -> None:
    repo = a_checkout(tmp_path)
    clean = cli("plan", BUILD_ID, "--source", str(repo), "--workdir", str(tmp_path / "w"))
    assert clean.returncode == 0, clean.stderr
    assert "name the wheel apex-1.8.0+rocm7.0git{SHA8}-... " in clean.stdout
    (repo / "src" / "mod.c").write_text("changed\n")
    dirty = cli("plan", BUILD_ID, "--source", str(repo), "--allow-dirty",
                "--workdir", str(tmp_path / "w"))
    assert dirty.returncode == 0, dirty.stderr
    assert "name the wheel apex-1.8.0+rocm7.0git{SHA8}.dirty-... " in dirty.stdout


def test_the_readme_documents_exit_12() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    row = next(line for line in readme.splitlines() if line.startswith("| 12 |"))
    assert "uncommitted changes" in row and "--allow-dirty" in row
    assert DirtySource.exit_code == 12


# -------------------------------------------------------------------------------- the name
def a_wheel(folder: Path, version: str = "1.8.0") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    wheel = folder / f"demo_pkg-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("demo_pkg/__init__.py", "X = 1\n")
        zf.writestr(f"demo_pkg-{version}.dist-info/METADATA",
                    f"Metadata-Version: 2.1\nName: demo-pkg\nVersion: {version}\n")
        zf.writestr(f"demo_pkg-{version}.dist-info/WHEEL",
                    "Wheel-Version: 1.0\nGenerator: t\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        zf.writestr(f"demo_pkg-{version}.dist-info/RECORD", "")
    return wheel


@pytest.mark.parametrize(("label", "upstream", "want"), [
    ("rocm7.0git8d873bb6", "1.8.0", "1.8.0+rocm7.0git8d873bb6.dirty"),
    (None, "1.8.0", "1.8.0+dirty"),
    (None, "1.8.0+rocm7.0.git8d873bb6", "1.8.0+rocm7.0.git8d873bb6.dirty"),
])
def test_a_dirty_name_is_pep440_and_pip_installs_it(tmp_path: Path, label: str | None,
                                                    upstream: str, want: str) -> None:
    a_wheel(tmp_path / "house", upstream)
    named = name_wheel(tmp_path / "house", tmp_path / "out", label=label, dirty=True)
    assert named.name == f"demo_pkg-{want}-py3-none-any.whl"
    _name, version, _b, _t = parse_wheel_filename(named.name)
    assert version == Version(want) and version.local is not None
    assert version.local.split(".")[-1] == "dirty"
    # pip's own wheel-name parser and installer take it, and the version inside agrees
    target = tmp_path / "target"
    res = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index",
                          "--disable-pip-version-check", "--target", str(target), str(named)],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    meta = (target / f"demo_pkg-{want}.dist-info" / "METADATA").read_text()
    assert f"Version: {want}\n" in meta


def test_a_dirty_wheel_never_replaces_the_clean_one(tmp_path: Path) -> None:
    dest = tmp_path / "dist" / "b"
    dest.mkdir(parents=True)
    clean = "x-1.0+rocm7.0git8d873bb6-py3-none-any.whl"
    (dest / clean).write_bytes(b"clean")
    (dest / "x-1.0+rocm7.0git11111111.dirty-py3-none-any.whl").write_bytes(b"older dirty")
    run, staged = staged_run(tmp_path)
    dirty = staged.with_name("x-1.0+rocm7.0git8d873bb6.dirty-py3-none-any.whl")
    staged.rename(dirty)
    run.values["WHEEL"] = str(dirty)
    publish(Step("publish", "", Publish("{WHEEL}", str(dest))), run)
    assert sorted(p.name for p in dest.iterdir()) == sorted([dirty.name, clean])
    assert (dest / clean).read_bytes() == b"clean"


def test_a_clean_wheel_replaces_earlier_clean_and_dirty_ones(tmp_path: Path) -> None:
    dest = tmp_path / "dist" / "b"
    dest.mkdir(parents=True)
    (dest / "x-0.9+rocm7.0git8d873bb6-py3-none-any.whl").write_bytes(b"old")
    (dest / "x-0.9+rocm7.0git8d873bb6.dirty-py3-none-any.whl").write_bytes(b"old dirty")
    run, staged = staged_run(tmp_path)
    publish(Step("publish", "", Publish("{WHEEL}", str(dest))), run)
    assert [p.name for p in dest.iterdir()] == [staged.name]


# ---------------------------------------------------------------------------------- repro
def test_repro_says_which_way_a_dirty_build_and_this_tree_differ() -> None:
    a, b = "a" * 64, "b" * 64
    assert _dirty_difference(None, None) == []
    assert _dirty_difference(a, a) == []
    assert _dirty_difference(a, None) == [
        "the manifest records a build of uncommitted changes (diff aaaaaaaaaaaa); this "
        "checkout has none"]
    assert _dirty_difference(None, b) == [
        "this checkout has uncommitted changes (diff bbbbbbbbbbbb); the recorded build had none"]
    assert _dirty_difference(a, b) == [
        "other uncommitted changes: diff bbbbbbbbbbbb, recorded aaaaaaaaaaaa"]


# ------------------------------------------------------------------------ nested work folders
def test_a_work_folder_inside_a_work_folders_dist_is_refused(tmp_path: Path) -> None:
    outer = tmp_path / "outer"
    (outer / "artifacts" / "b").mkdir(parents=True)
    (outer / "artifacts" / "b" / "manifest.json").write_text("{}")  # a build ran here
    for inner in ("dist/inner", "artifacts/b/deeper", "dist"):
        res = cli("plan", BUILD_ID, "--workdir", str(outer / inner))
        assert res.returncode == 2, (inner, res.stderr)
        top = inner.split("/")[0]
        assert res.stderr.strip().splitlines() == [
            f"error: work folder {outer / inner}: it lies inside {outer / top}/, the {top}/ of "
            f"the work folder {outer}; give a work folder outside every work folder's dist/ "
            "and artifacts/"]
    # beside them, or in a folder named dist that is no work folder's: fine
    assert cli("plan", BUILD_ID, "--workdir", str(outer / "beside")).returncode == 0
    assert cli("plan", BUILD_ID, "--workdir", str(tmp_path / "dist" / "w")).returncode == 0


def test_a_work_folder_inside_the_current_folders_dist_is_refused(tmp_path: Path) -> None:
    """The current folder is the work folder of every run without --workdir."""
    res = cli("plan", BUILD_ID, "--workdir", "dist/x", cwd=tmp_path)
    assert res.returncode == 2, res.stderr
    assert f"it lies inside {tmp_path / 'dist'}/" in res.stderr
    assert not (tmp_path / "dist").exists()
