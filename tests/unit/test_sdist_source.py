"""``--source`` given an sdist: a real sdist (``python -m build --sdist`` of a fixture
project) unpacks into the work folder as the project's files, outside any git checkout even
when the work folder is inside one (git itself says so); hostile archives made by GNU tar and
Python's zipfile (``../`` members, a symlink out, an absolute path) are refused in one line,
exit 2, writing nothing outside."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from toolkit.core.errors import UsageError
from toolkit.env import sdist
from toolkit.env.project import source_changes
from toolkit.env.sdist import source_folder

ROOT = Path(__file__).resolve().parents[2]
PROJECT = ROOT / "tests" / "projects" / "own_pyproject"
TAR = shutil.which("tar")


def _git(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          check=False)


@pytest.fixture(scope="module")
def real_sdist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixture project's sdist, made by pypa/build (setuptools' sdist)."""
    tmp = tmp_path_factory.mktemp("sdist")
    shutil.copytree(PROJECT, tmp / "src")
    res = subprocess.run([sys.executable, "-m", "build", "--sdist", "--no-isolation",
                          "--outdir", str(tmp / "out"), str(tmp / "src")],
                         capture_output=True, text=True, check=False)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    (archive,) = (tmp / "out").glob("*.tar.gz")
    return archive


def test_a_real_sdist_unpacks_to_the_projects_files(real_sdist: Path, tmp_path: Path) -> None:
    folder = Path(source_folder(str(real_sdist), tmp_path) or "")
    assert folder.parents[2] == tmp_path / "build" / "sdist"
    # the sdist's one top folder (name-version, as setuptools names it), per tar's own listing
    listing = subprocess.run(["tar", "-tzf", str(real_sdist)], capture_output=True, text=True,
                             check=True).stdout.split()
    assert folder.name == listing[0].split("/")[0] == "PyProj.Ext-1.4.0rc1"  # pyproject's
    for rel in ("pyproject.toml", "setup.py", "src/pyprojext/__init__.py"):
        assert (folder / rel).read_bytes() == (PROJECT / rel).read_bytes(), rel
    assert sorted(str(p.relative_to(folder.parent)) for p in folder.rglob("*") if p.is_file()) \
        == sorted(n for n in listing if not n.endswith("/"))
    # unpacked once per archive content: the same folder again, not a second copy
    assert source_folder(str(real_sdist), tmp_path) == str(folder)
    assert len(list((tmp_path / "build" / "sdist").iterdir())) == 1
    # a folder is no archive: returned as given
    assert source_folder(str(PROJECT), tmp_path) == str(PROJECT)
    assert source_folder(None, tmp_path) is None


def test_the_unpacked_project_is_no_checkout_inside_a_checkout(real_sdist: Path,
                                                               tmp_path: Path) -> None:
    work = tmp_path / "repo"
    work.mkdir()
    assert _git("init", "-q", cwd=work).returncode == 0
    (work / "f").write_text("x")
    _git("add", "f", cwd=work)
    assert _git("commit", "-qm", "x", cwd=work).returncode == 0
    folder = Path(source_folder(str(real_sdist), work) or "")
    # git finds no commit for it (the enclosing checkout's HEAD would be a wrong name) ...
    assert _git("rev-parse", "--verify", "--quiet", "HEAD^{commit}", cwd=folder).returncode != 0
    assert _git("rev-parse", "--verify", "--quiet", "HEAD^{commit}", cwd=work).returncode == 0
    # ... and its files are no uncommitted changes of the enclosing checkout (not refused)
    assert source_changes(folder) is None
    assert source_changes(work) is not None  # build/ is untracked there: the truth is seen


def _one_line_exit_2(archive: Path, tmp_path: Path, *words: str) -> str:
    res = subprocess.run([sys.executable, "-m", "toolkit", "demo", "--source", str(archive),
                          "--workdir", str(tmp_path / "w"), "--dry-run"],
                         capture_output=True, text=True, cwd=ROOT, timeout=300, check=False)
    assert res.returncode == 2, res.stdout[-2000:] + res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: --source ") and \
        "Traceback" not in res.stderr, res.stderr
    for word in words:
        assert word in lines[0], lines[0]
    assert "valid: a folder holding pyproject.toml or setup.py, or its sdist" in lines[0]
    return lines[0]


@pytest.mark.skipif(TAR is None, reason="GNU tar makes the hostile archives")
def test_a_member_climbing_out_is_refused_in_one_line(tmp_path: Path) -> None:
    inner = tmp_path / "a" / "b"
    inner.mkdir(parents=True)
    (tmp_path / "a" / "evil.txt").write_text("pwned\n")
    (inner / "setup.py").write_text("")
    archive = tmp_path / "evil-1.0.tar.gz"
    # -P keeps the leading ../ (GNU tar strips it otherwise)
    subprocess.run(["tar", "-czPf", str(archive), "setup.py", "../evil.txt"], cwd=inner,
                   check=True)
    assert "../evil.txt" in subprocess.run(["tar", "-tzPf", str(archive)], capture_output=True,
                                           text=True, check=True).stdout
    _one_line_exit_2(archive, tmp_path, "member '../evil.txt'", "outside the folder")
    assert not list(tmp_path.glob("w/build/sdist/evil.txt"))
    assert not (tmp_path / "w" / "build" / "evil.txt").exists()


@pytest.mark.skipif(TAR is None, reason="GNU tar makes the hostile archives")
def test_a_symlink_out_is_refused_in_one_line(tmp_path: Path) -> None:
    proj = tmp_path / "p" / "evil-1.0"
    proj.mkdir(parents=True)
    (proj / "setup.py").write_text("")
    (proj / "up").symlink_to("../../../../../etc")
    (proj / "passwd").symlink_to("/etc/passwd")
    archive = tmp_path / "evil-1.0.tar.gz"
    subprocess.run(["tar", "-czf", str(archive), "evil-1.0/setup.py", "evil-1.0/up"],
                   cwd=proj.parent, check=True)
    _one_line_exit_2(archive, tmp_path, "member 'evil-1.0/up'", "is a link to", "outside")
    archive.unlink()
    subprocess.run(["tar", "-czf", str(archive), "evil-1.0/setup.py", "evil-1.0/passwd"],
                   cwd=proj.parent, check=True)
    _one_line_exit_2(archive, tmp_path, "member 'evil-1.0/passwd'", "'/etc/passwd'")
    assert not (tmp_path / "w" / "build" / "sdist").exists() or \
        not any(p.is_symlink() for p in (tmp_path / "w" / "build" / "sdist").rglob("*"))


def test_a_zip_with_an_absolute_or_climbing_member_is_refused(tmp_path: Path) -> None:
    for name in ("../evil.py", "/tmp/evil.py"):
        archive = tmp_path / "evil-1.0.zip"
        with zipfile.ZipFile(archive, "w") as zf:
            zf.writestr("evil-1.0/setup.py", "")
            zf.writestr(name, "pwned")
        with pytest.raises(UsageError, match="outside the folder it unpacks into"):
            source_folder(str(archive), tmp_path / "w")
    assert not (tmp_path / "evil.py").exists()


def test_too_many_members_or_bytes_are_refused_before_unpacking(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    archive = tmp_path / "big-1.0.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for i in range(4):
            f = tmp_path / f"f{i}"
            f.write_bytes(b"x" * 100)
            tar.add(f, f"big-1.0/f{i}")
    monkeypatch.setattr(sdist, "MAX_MEMBERS", 3)
    with pytest.raises(UsageError, match="more than 3 members"):
        source_folder(str(archive), tmp_path / "w")
    monkeypatch.setattr(sdist, "MAX_MEMBERS", 100)
    monkeypatch.setattr(sdist, "MAX_BYTES", 399)
    with pytest.raises(UsageError, match="refusing the archive: it unpacks to more than"):
        source_folder(str(archive), tmp_path / "w")
    assert not any((tmp_path / "w" / "build" / "sdist").rglob("f0"))


def test_an_archive_holding_no_project_or_no_archive_at_all(tmp_path: Path) -> None:
    archive = tmp_path / "x-1.0.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        readme = tmp_path / "README"
        readme.write_text("x")
        tar.add(readme, "x-1.0/README")
    with pytest.raises(UsageError, match="the archive holds no Python project"):
        source_folder(str(archive), tmp_path / "w")
    fake = tmp_path / "y-1.0.tar.gz"
    fake.write_text("not a tar")
    with pytest.raises(UsageError, match="not a readable sdist archive"):
        source_folder(str(fake), tmp_path / "w")
