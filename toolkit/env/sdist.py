"""``--source`` given an sdist (``NAME-VERSION.tar.gz`` or a legacy ``.zip``): unpacked into
the work folder and built like a folder (cibuildwheel takes an sdist too).

``source_folder(path, workdir)`` is the one door: a folder is returned as it is; an archive is
unpacked (once per archive content: ``<workdir>/build/sdist/<stem>-<sha8>/``) and the folder
of its project is returned -- the archive's one top folder, or the archive's root when it holds
``pyproject.toml``/``setup.py`` itself.

Unpacking refuses, in one line (``UsageError``, exit 2), before anything is written outside a
private temporary folder: a member whose path is absolute or climbs out with ``..``; a link
(symbolic or hard) pointing outside the folder; a device, FIFO or other special member; more
than ``MAX_MEMBERS`` members or ``MAX_BYTES`` unpacked bytes (sizes as the archive declares
them; tar and zip readers never inflate past a member's declared size). tar members are then
extracted through ``tarfile``'s ``data`` filter as well (PEP 706).

The unpacked project is no git checkout: its folder sits under an empty git repository (no
commit), so a work folder inside the contributor's own checkout lends it neither a commit nor
uncommitted changes; the wheel is named by its tree hash, as for any folder outside git.
"""

from __future__ import annotations

import os
import posixpath
import shutil
import stat
import tarfile
import tempfile
import zipfile
from pathlib import Path, PurePosixPath

from toolkit.core.errors import CommandFailed, UsageError
from toolkit.core.files import sha256_file
from toolkit.core.text import quoted

SUFFIXES = (".tar.gz", ".tgz", ".zip")
MAX_MEMBERS = 100_000
MAX_BYTES = 2 << 30  # 2 GiB unpacked
MARKERS = ("pyproject.toml", "setup.py", "setup.cfg")
VALID = "valid: a folder holding pyproject.toml or setup.py, or its sdist (.tar.gz, .zip)"


def is_archive(path: str) -> bool:
    return path.lower().endswith(SUFFIXES) and Path(path).expanduser().is_file()


def source_folder(path: str | None, workdir: Path) -> str | None:
    """``path`` when it is no archive (``None`` stays ``None``); else the project folder of the
    archive unpacked under ``workdir/build/sdist`` (see the module's text)."""
    if path is None or not is_archive(path):
        return path
    archive = Path(path).expanduser().resolve()
    stem = archive.name[: -len(next(s for s in SUFFIXES if archive.name.lower().endswith(s)))]
    try:
        key = sha256_file(archive)[:8]
    except OSError as exc:
        raise UsageError(f"--source {quoted(path)}: not readable ({exc.strerror})") from None
    home = workdir / "build" / "sdist" / f"{stem}-{key}"
    if not (home / ".unpacked").is_file():
        _unpack_fresh(archive, path, home)
    return str(_project_in(home, path))


def _unpack_fresh(archive: Path, given: str, home: Path) -> None:
    home.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".unpacking-", dir=home.parent))
    try:
        files = tmp / "files"
        files.mkdir()
        unpack(archive, files, given)
        _no_checkout(tmp)
        (tmp / ".unpacked").write_text(archive.name + "\n", encoding="utf-8")
        shutil.rmtree(home, ignore_errors=True)
        os.replace(tmp, home)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _no_checkout(folder: Path) -> None:
    """An empty git repository (no commit) above the project: git's search for a checkout
    stops there, so the enclosing work folder's checkout names nothing of it. Without git
    there is no checkout to stop at."""
    from toolkit.core.proc import run

    try:
        run(["git", "init", "--quiet", str(folder)], timeout=60, check=False)
    except CommandFailed:
        pass


def _project_in(home: Path, given: str) -> Path:
    files = home / "files"
    if any((files / m).is_file() for m in MARKERS):
        return files
    tops = [p for p in files.iterdir() if not p.name.startswith(".")]
    if len(tops) == 1 and tops[0].is_dir() and not tops[0].is_symlink() \
            and any((tops[0] / m).is_file() for m in MARKERS):
        return tops[0]
    raise UsageError(f"--source {quoted(given)}: the archive holds no Python project (no "
                     f"{', '.join(MARKERS)} at its root or in its one top folder); {VALID}")


def unpack(archive: Path, dest: Path, given: str) -> None:
    """``archive`` (tar, possibly compressed, or zip) into the empty folder ``dest``, or a
    one-line ``UsageError`` naming the first member refused and why."""
    try:
        if zipfile.is_zipfile(archive):
            _unzip(archive, dest, given)
        else:
            _untar(archive, dest, given)
    except (tarfile.TarError, zipfile.BadZipFile, EOFError, OSError, ValueError) as exc:
        raise UsageError(f"--source {quoted(given)}: not a readable sdist archive "
                         f"({type(exc).__name__}: {quoted(str(exc), 200)}); {VALID}") from None


def _refuse(given: str, member: str, why: str) -> UsageError:
    return UsageError(f"--source {quoted(given)}: refusing the archive: member {quoted(member)} "
                      f"{why}; {VALID}")


def _inside(name: str) -> bool:
    """A relative member path that stays inside the folder it is unpacked into."""
    p = PurePosixPath(name.replace("\\", "/"))
    return bool(name) and not p.is_absolute() and ".." not in p.parts and ":" not in p.parts[0]


def _link_inside(name: str, target: str, hard: bool) -> bool:
    """A link's target stays inside: a hard link names a member path; a symbolic one is
    relative to the link's own folder."""
    if hard or PurePosixPath(target).is_absolute():
        return _inside(target)
    where = posixpath.normpath(posixpath.join(posixpath.dirname(name), target))
    return where != ".." and not where.startswith("../") and not where.startswith("/")


class _Budget:
    """Members and declared bytes so far; past a limit, the one-line refusal."""

    def __init__(self, given: str) -> None:
        self.given, self.count, self.total = given, 0, 0

    def add(self, size: int) -> None:
        self.count += 1
        self.total += max(size, 0)
        if self.count > MAX_MEMBERS:
            raise UsageError(f"--source {quoted(self.given)}: refusing the archive: more than "
                             f"{MAX_MEMBERS} members; {VALID}")
        if self.total > MAX_BYTES:
            raise UsageError(f"--source {quoted(self.given)}: refusing the archive: it unpacks "
                             f"to more than {MAX_BYTES >> 30} GiB; {VALID}")


def _untar(archive: Path, dest: Path, given: str) -> None:
    budget = _Budget(given)
    with tarfile.open(archive, "r:*") as tar:
        members: list[tarfile.TarInfo] = []
        for m in tar:  # one member at a time: a bomb is refused before it is all read
            budget.add(m.size)
            _check_tar_member(m, given)
            members.append(m)
        try:
            tar.extractall(dest, members=members, filter="data")
        except tarfile.FilterError as exc:
            name = exc.tarinfo.name if exc.tarinfo is not None else "?"
            raise _refuse(given, name, "is refused by tarfile's data filter "
                          f"({type(exc).__name__})") from None


def _check_tar_member(m: tarfile.TarInfo, given: str) -> None:
    if not _inside(m.name):
        raise _refuse(given, m.name, "would be written outside the folder it unpacks into")
    if m.issym() or m.islnk():
        if not _link_inside(m.name, m.linkname, m.islnk()):
            raise _refuse(given, m.name, f"is a link to {quoted(m.linkname)}, outside the "
                          "folder it unpacks into")
    elif not (m.isfile() or m.isdir()):
        raise _refuse(given, m.name, "is a device, FIFO or other special file")


def _unzip(archive: Path, dest: Path, given: str) -> None:
    budget = _Budget(given)
    with zipfile.ZipFile(archive) as zf:
        infos = zf.infolist()
        for info in infos:
            budget.add(info.file_size)
            if not _inside(info.filename):
                raise _refuse(given, info.filename,
                              "would be written outside the folder it unpacks into")
            mode = info.external_attr >> 16
            if stat.S_IFMT(mode) not in (0, stat.S_IFREG, stat.S_IFDIR):
                raise _refuse(given, info.filename, "is a link or special file (a zip sdist "
                              "holds files and folders only)")
        for info in infos:
            zf.extract(info, dest)
