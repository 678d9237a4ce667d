"""An sdist given as ``--source`` is unpacked once per archive content into
``<workdir>/build/sdist/<stem>-<sha8>/files`` (toolkit/env/sdist.py's module text) and its
project folder is returned; each refusal is one line ending in what is valid. Archives are
made with Python's own tarfile/zipfile; hashes with hashlib; expectations hand-written."""

from __future__ import annotations

import hashlib
import io
import stat
import tarfile
import zipfile
from pathlib import Path

import pytest

from toolkit.core.errors import UsageError
from toolkit.env import sdist

VALID = "valid: a folder holding pyproject.toml or setup.py, or its sdist (.tar.gz, .zip)"


def _tar(path: Path, files: dict[str, bytes], mode: str = "w:gz") -> Path:
    with tarfile.open(path, mode) as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def _zip(path: Path, files: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    return path


def _sha8(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:8]


@pytest.mark.parametrize(("name", "stem"), [("demo-1.0.tar.gz", "demo-1.0"), ("Demo-2.0.TGZ", "Demo-2.0"),
                                            ("demo-3.0.Tar.Gz", "demo-3.0")])
def test_a_tar_sdist_unpacks_into_its_stem_and_hash_folder(tmp_path: Path, name: str, stem: str) -> None:
    archive = _tar(tmp_path / name, {f"{stem}/pyproject.toml": b"[project]\n", f"{stem}/m.py": b"x = 1\n"})
    work = tmp_path / "w"
    folder = sdist.source_folder(str(archive), work)
    home = work / "build" / "sdist" / f"{stem}-{_sha8(archive)}"
    assert folder == str(home / "files" / stem)
    assert (home / ".unpacked").read_text(encoding="utf-8") == name + "\n"
    assert (home / "files" / stem / "m.py").read_bytes() == b"x = 1\n"
    assert (home / ".git").is_dir()  # the empty repository above the project


def test_a_zip_holding_the_project_at_its_root_gives_the_root(tmp_path: Path) -> None:
    archive = _zip(tmp_path / "flat-0.1.zip", {"setup.py": b"", "pkg/__init__.py": b""})
    folder = sdist.source_folder(str(archive), tmp_path / "w")
    assert folder == str(tmp_path / "w" / "build" / "sdist" / f"flat-0.1-{_sha8(archive)}" / "files")


def test_an_unpacked_archive_is_not_unpacked_again(tmp_path: Path) -> None:
    archive = _tar(tmp_path / "demo-1.0.tar.gz", {"demo-1.0/setup.cfg": b"[metadata]\n"})
    first = sdist.source_folder(str(archive), tmp_path / "w")
    assert first is not None
    Path(first, "added.txt").write_text("kept")
    assert sdist.source_folder(str(archive), tmp_path / "w") == first
    assert Path(first, "added.txt").read_text() == "kept"


def test_a_folder_or_none_is_returned_as_it_is(tmp_path: Path) -> None:
    assert sdist.source_folder(None, tmp_path) is None
    assert sdist.source_folder(str(tmp_path), tmp_path / "w") == str(tmp_path)
    (tmp_path / "x.tar.gz").mkdir()  # an archive's name, but a folder
    assert sdist.source_folder(str(tmp_path / "x.tar.gz"), tmp_path / "w") == str(tmp_path / "x.tar.gz")
    assert not (tmp_path / "w").exists()


def test_hidden_top_entries_do_not_count_as_a_second_top_folder(tmp_path: Path) -> None:
    archive = _tar(tmp_path / "p-1.tar.gz", {".hidden": b"", "p-1/pyproject.toml": b""})
    folder = sdist.source_folder(str(archive), tmp_path / "w")
    assert folder is not None and folder.endswith("/files/p-1")


@pytest.mark.parametrize("files", [{"a/pyproject.toml": b"", "b/pyproject.toml": b""},
                                   {"a/readme.txt": b""}, {"readme.txt": b""}])
def test_an_archive_without_one_project_names_the_markers(tmp_path: Path, files: dict[str, bytes]) -> None:
    archive = _tar(tmp_path / "x-1.tar.gz", files)
    with pytest.raises(UsageError) as caught:
        sdist.source_folder(str(archive), tmp_path / "w")
    assert str(caught.value) == (
        f"--source '{archive}': the archive holds no Python project (no pyproject.toml, setup.py, "
        f"setup.cfg at its root or in its one top folder); {VALID}")


def test_an_unreadable_archive_is_named_with_its_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad-1.tar.gz"
    bad.write_bytes(b"not gzip at all")
    with pytest.raises(UsageError) as caught:
        sdist.source_folder(str(bad), tmp_path / "w")
    line = str(caught.value)
    assert line.startswith(f"--source '{bad}': not a readable sdist archive (ReadError: ")
    assert line.endswith(f"); {VALID}")
    assert caught.value.exit_code == 2


@pytest.mark.parametrize(("name", "ok"), [
    ("a/b.py", True), ("./a", True), ("", False), ("/etc/passwd", False), ("a/../../x", False),
    ("..", False), ("a\\..\\..\\x", False), ("C:/x", False), ("c:", False), ("a/c:", True)])
def test_member_paths_inside_the_folder(name: str, ok: bool) -> None:
    assert sdist._inside(name) is ok


@pytest.mark.parametrize(("name", "target", "hard", "ok"), [
    ("p/link", "../p/x", False, True), ("p/link", "../../x", False, False), ("link", "..", False, False),
    ("p/link", "/etc/passwd", False, False), ("p/q/link", "../x", False, True),
    ("p/link", "p/x", True, True), ("p/link", "../x", True, False), ("link", "..x", False, True)])
def test_link_targets_inside_the_folder(name: str, target: str, hard: bool, ok: bool) -> None:
    assert sdist._link_inside(name, target, hard) is ok


def test_a_tar_link_out_names_the_member_and_its_target(tmp_path: Path) -> None:
    archive = tmp_path / "l-1.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        info = tarfile.TarInfo("l-1/up")
        info.type, info.linkname = tarfile.SYMTYPE, "../../outside"
        tar.addfile(info)
    with pytest.raises(UsageError) as caught:
        sdist.source_folder(str(archive), tmp_path / "w")
    assert str(caught.value) == (
        f"--source '{archive}': refusing the archive: member 'l-1/up' is a link to '../../outside', "
        f"outside the folder it unpacks into; {VALID}")


def test_a_tar_fifo_is_refused_as_a_special_file(tmp_path: Path) -> None:
    archive = tmp_path / "f-1.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        info = tarfile.TarInfo("f-1/pipe")
        info.type = tarfile.FIFOTYPE
        tar.addfile(info)
    with pytest.raises(UsageError) as caught:
        sdist.source_folder(str(archive), tmp_path / "w")
    assert str(caught.value) == (f"--source '{archive}': refusing the archive: member 'f-1/pipe' is a "
                                 f"device, FIFO or other special file; {VALID}")


def test_a_tar_member_climbing_out_is_named(tmp_path: Path) -> None:
    archive = _tar(tmp_path / "c-1.tar.gz", {"c-1/../../evil": b""})
    with pytest.raises(UsageError) as caught:
        sdist.source_folder(str(archive), tmp_path / "w")
    assert str(caught.value) == (f"--source '{archive}': refusing the archive: member 'c-1/../../evil' "
                                 f"would be written outside the folder it unpacks into; {VALID}")


def test_a_zip_symlink_is_refused(tmp_path: Path) -> None:
    archive = tmp_path / "z-1.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        info = zipfile.ZipInfo("z-1/link")
        info.external_attr = (stat.S_IFLNK | 0o777) << 16
        zf.writestr(info, "target")
    with pytest.raises(UsageError) as caught:
        sdist.source_folder(str(archive), tmp_path / "w")
    assert str(caught.value) == (f"--source '{archive}': refusing the archive: member 'z-1/link' is a "
                                 f"link or special file (a zip sdist holds files and folders only); {VALID}")


def test_zip_members_with_plain_modes_unpack(tmp_path: Path) -> None:
    archive = tmp_path / "z-2.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        plain = zipfile.ZipInfo("z-2/pyproject.toml")
        plain.external_attr = 0  # no mode at all (a zip made on Windows)
        zf.writestr(plain, "")
        regular = zipfile.ZipInfo("z-2/m.py")
        regular.external_attr = (stat.S_IFREG | 0o644) << 16
        zf.writestr(regular, "y = 2\n")
    folder = sdist.source_folder(str(archive), tmp_path / "w")
    assert folder is not None and Path(folder, "m.py").read_text() == "y = 2\n"


def test_the_budget_counts_members_and_declared_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sdist, "MAX_MEMBERS", 2)
    budget = sdist._Budget("s.tar.gz")
    budget.add(-5)  # a negative size counts as none
    budget.add(10)
    assert (budget.count, budget.total) == (2, 10)
    with pytest.raises(UsageError) as caught:
        budget.add(0)
    assert str(caught.value) == f"--source 's.tar.gz': refusing the archive: more than 2 members; {VALID}"
    big = sdist._Budget("b.zip")
    big.add(2 << 30)  # exactly 2 GiB is within
    with pytest.raises(UsageError) as caught:
        big.add(1)
    assert str(caught.value) == (f"--source 'b.zip': refusing the archive: it unpacks to more than 2 GiB; "
                                 f"{VALID}")


@pytest.mark.parametrize(("name", "expected"), [("a.tar.gz", True), ("a.TGZ", True), ("a.Zip", True),
                                                ("a.tar", False), ("a.tar.bz2", False),
                                                ("missing.zip", False)])
def test_is_archive_needs_an_sdist_suffix_and_a_file(tmp_path: Path, name: str, expected: bool) -> None:
    if name != "missing.zip":
        (tmp_path / name).write_bytes(b"")
    assert sdist.is_archive(str(tmp_path / name)) is expected


def test_repro_unpacks_an_sdist_source_in_its_work_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """``repro MANIFEST --source SDIST --workdir W`` unpacks the archive under W (README:
    build/sdist/<stem>-<hash>), never in the current folder, before the manifest is read."""
    from toolkit.cli.main import main

    archive = _tar(tmp_path / "demo-1.0.tar.gz", {"demo-1.0/pyproject.toml": b"[project]\n"})
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    work = tmp_path / "w"
    assert main(["repro", str(tmp_path / "no-manifest.json"), "--source", str(archive),
                 "--workdir", str(work)]) == 2
    assert "no-manifest.json" in capsys.readouterr().err
    home = work / "build" / "sdist" / f"demo-1.0-{_sha8(archive)}"
    assert (home / "files" / "demo-1.0" / "pyproject.toml").is_file()
    assert list(here.iterdir()) == []


def test_a_link_escaping_through_an_earlier_link_is_named_by_the_data_filter(tmp_path: Path) -> None:
    """Each link alone stays inside when read as text ('s-1/d/up' -> '..' is 's-1';
    's-1/out' -> 'd/up/../..' is 's-1'), but once 's-1/d/up' exists on disk, 's-1/out'
    really points at the parent of the folder it unpacks into: tarfile's data filter (which
    resolves the links already unpacked, os.path.realpath) refuses it, and the one line
    names that member."""
    archive = tmp_path / "s-1.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for name, kind, target in (("s-1", tarfile.DIRTYPE, ""), ("s-1/d", tarfile.DIRTYPE, ""),
                                   ("s-1/d/up", tarfile.SYMTYPE, ".."),
                                   ("s-1/out", tarfile.SYMTYPE, "d/up/../..")):
            info = tarfile.TarInfo(name)
            info.type, info.linkname = kind, target
            tar.addfile(info)
        info = tarfile.TarInfo("s-1/setup.py")
        tar.addfile(info, io.BytesIO(b""))
    with pytest.raises(UsageError) as caught:
        sdist.source_folder(str(archive), tmp_path / "w")
    line = str(caught.value)
    assert "\n" not in line and line.startswith(f"--source '{archive}': refusing the archive: ")
    assert "member 's-1/out' " in line and "data filter" in line and line.endswith(VALID)
    # the refusal names the filter and its error class (Python's tarfile docs: the data
    # filter raises LinkOutsideDestinationError for a link whose target leaves the folder)
    assert ("member 's-1/out' is refused by tarfile's data filter "
            f"({tarfile.LinkOutsideDestinationError.__name__}); ") in line
