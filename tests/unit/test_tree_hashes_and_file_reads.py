"""How files and folders are hashed and read (toolkit/core/files.py): a tree's hash is its
files' relative paths and bytes in sorted order, each followed by a NUL (a symlink: ``->``
and its target; a FIFO: ``<special MODE>``), leaving out what a ``shutil.ignore_patterns``
style callable names; reads are bounded and refused in one line. Expected hashes are built by
hand with hashlib from that format; file kinds come from real files, FIFOs and sockets."""

from __future__ import annotations

import hashlib
import os
import shutil
import socket
import stat
from pathlib import Path

import pytest

from toolkit.core import files
from toolkit.core.errors import DataError, UsageError


def _tree(root: Path) -> Path:
    (root / "src").mkdir(parents=True)
    (root / "src" / "m.py").write_bytes(b"x = 1\n")
    (root / "src" / "m.pyc").write_bytes(b"\x00compiled")
    (root / "build").mkdir()
    (root / "build" / "out.o").write_bytes(b"obj")
    (root / "a.txt").write_bytes(b"A")
    os.symlink("a.txt", root / "z-link")
    return root


def _digest(h: object) -> str:
    return h.hexdigest()  # type: ignore[attr-defined, no-any-return]


def test_a_tree_hash_is_its_paths_and_bytes_in_sorted_order(tmp_path: Path) -> None:
    root = _tree(tmp_path / "t")
    h = hashlib.sha256()
    files.hash_tree(h, root)
    expected = hashlib.sha256(b"a.txt\0A\0" b"z-link\0->a.txt\0" b"build/out.o\0obj\0"
                              b"src/m.py\0x = 1\n\0" b"src/m.pyc\0\x00compiled\0")
    assert _digest(h) == expected.hexdigest()


def test_ignore_is_given_each_folder_and_its_names_as_shutil_ignore_patterns_expects(tmp_path: Path) -> None:
    root = _tree(tmp_path / "t")
    seen: list[tuple[str, list[str]]] = []
    patterns = shutil.ignore_patterns("*.pyc", "build")

    def ignore(folder: str, names: list[str]) -> set[str]:
        seen.append((folder, sorted(names)))
        return set(patterns(folder, names))

    h = hashlib.sha256()
    files.hash_tree(h, root, ignore)
    assert _digest(h) == hashlib.sha256(b"a.txt\0A\0z-link\0->a.txt\0src/m.py\0x = 1\n\0").hexdigest()
    assert seen == [(str(root), ["a.txt", "build", "src", "z-link"]), (str(root / "src"), ["m.py", "m.pyc"])]


def test_a_fifo_in_a_tree_is_hashed_by_its_kind(tmp_path: Path) -> None:
    root = tmp_path / "t"
    root.mkdir()
    os.mkfifo(root / "p")
    h = hashlib.sha256()
    files.hash_tree(h, root)
    assert _digest(h) == hashlib.sha256(b"p\0<special 10000>\0").hexdigest()  # S_IFIFO, octal


def test_a_file_gone_between_listing_and_reading_is_hashed_as_unreadable(tmp_path: Path) -> None:
    """A file removed after the folder is listed but before it is read (a real race: the
    ignore callable, called between the two, removes it) still counts by name, its bytes
    replaced by ``<unreadable>``; hashing goes on to the next file."""
    root = tmp_path / "t"
    root.mkdir()
    (root / "a.txt").write_bytes(b"A")
    (root / "gone").write_bytes(b"G")

    def remove_gone(folder: str, names: list[str]) -> set[str]:
        (root / "gone").unlink(missing_ok=True)
        return set()

    h = hashlib.sha256()
    files.hash_tree(h, root, remove_gone)
    assert _digest(h) == hashlib.sha256(b"a.txt\0A\0gone\0<unreadable>\0").hexdigest()


def test_sha256_file_is_hashlibs_and_refuses_a_fifo(tmp_path: Path) -> None:
    data = os.urandom(3 * files.CHUNK // 2)  # more than one chunk
    (tmp_path / "f").write_bytes(data)
    assert files.sha256_file(tmp_path / "f") == hashlib.sha256(data).hexdigest()
    os.mkfifo(tmp_path / "p")
    with pytest.raises(OSError) as caught:
        files.sha256_file(tmp_path / "p")
    assert caught.value.errno == 22 and caught.value.strerror == "not a regular file"


@pytest.mark.parametrize(("what", "mib"), [("data file", 4), ("manifest", 32), ("report", 64),
                                           ("lock file", 16), ("stamp", 4), ("anything else", 64)])
def test_each_kind_of_file_has_its_documented_cap(tmp_path: Path, what: str, mib: int) -> None:
    path = tmp_path / "big"
    with open(path, "wb") as fh:  # sparse: no bytes written
        fh.truncate(mib * 2**20 + 1)
    with pytest.raises(UsageError) as caught:
        files.open_regular(path, what)
    assert str(caught.value) == f"{what} {path}: larger than {mib} MiB ({mib * 2**20 + 1} bytes)"
    with open(path, "wb") as fh:
        fh.truncate(mib * 2**20)
    files.open_regular(path, what).close()


def test_a_wheels_cap_is_16_gib(tmp_path: Path) -> None:
    path = tmp_path / "w.whl"
    with open(path, "wb") as fh:
        fh.truncate((16 << 30) + 1)
    with pytest.raises(UsageError, match=r"larger than 16384 MiB"):
        files.open_regular(path, "wheel")


def test_a_given_cap_wins_and_the_error_type_is_the_callers(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"x" * 3000)
    with pytest.raises(DataError) as caught:
        files.read_bytes(tmp_path / "f", "data file", DataError, cap=2 * 2**10)
    assert str(caught.value) == f"data file {tmp_path / 'f'}: larger than 0.00195312 MiB (3000 bytes)"
    assert caught.value.exit_code == 3
    assert files.read_bytes(tmp_path / "f", "stamp", cap=3000) == b"x" * 3000


@pytest.mark.parametrize("kind", ["folder", "fifo", "socket", "device"])
def test_what_is_not_a_regular_file_is_named_by_its_kind(tmp_path: Path, kind: str) -> None:
    path = tmp_path / kind
    words = {"folder": "a folder", "fifo": "a FIFO", "socket": "a socket", "device": "a device"}[kind]
    if kind == "folder":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "device":
        path = Path("/dev/null")
    else:
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(path))
        sock.close()
    if kind == "socket":  # a socket cannot be opened at all: its kind comes from its mode
        assert files.file_kind(os.lstat(path).st_mode) == words
        return
    with pytest.raises(UsageError) as caught:
        files.read_text(path, "manifest")
    assert str(caught.value) == f"manifest {path}: not a regular file ({words})"


def test_file_kinds_of_other_modes() -> None:
    assert files.file_kind(stat.S_IFREG | 0o644) == "a file"
    assert files.file_kind(stat.S_IFBLK) == "a device"
    assert files.file_kind(stat.S_IFLNK) == "not a file"


def test_missing_and_unreadable_files_are_named(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as caught:
        files.read_text(tmp_path / "none", "lock file")
    assert str(caught.value) == f"lock file {tmp_path / 'none'}: no such file"
    (tmp_path / "file").write_text("x")
    with pytest.raises(UsageError) as caught:
        files.read_text(tmp_path / "file" / "below", "stamp")
    assert str(caught.value) == (f"stamp {tmp_path / 'file' / 'below'}: cannot be read (Not a directory "
                                 f"(ENOTDIR))")
    with pytest.raises(UsageError) as caught:
        files.read_text("bad\0name", "report")
    assert str(caught.value) == "report bad\\x00name: cannot be read (embedded null byte)"


def test_read_text_decodes_utf8_and_names_where_it_is_not(tmp_path: Path) -> None:
    (tmp_path / "ok").write_bytes("ünï\n".encode())
    assert files.read_text(tmp_path / "ok", "data file") == "ünï\n"
    (tmp_path / "bad").write_bytes(b"abc\xffdef")
    with pytest.raises(DataError) as caught:
        files.read_text(tmp_path / "bad", "data file", DataError)
    assert str(caught.value) == f"data file {tmp_path / 'bad'}: not UTF-8 text (invalid start byte at byte 3)"


def test_missing_is_true_only_when_nothing_is_there(tmp_path: Path) -> None:
    os.symlink("nowhere", tmp_path / "dangling")
    (tmp_path / "f").write_text("")
    assert files.missing(tmp_path / "none") is True
    assert files.missing(tmp_path / "dangling") is False
    assert files.missing(tmp_path / "f" / "below") is False
    assert files.missing("bad\0name") is False
    assert files.missing(tmp_path / "f") is False


def test_usable_folder_creates_parents_and_names_what_is_in_the_way(tmp_path: Path) -> None:
    made = files.usable_folder(tmp_path / "a" / "b", "--workdir")
    assert made == tmp_path / "a" / "b" and made.is_dir()
    (made / "kept").write_text("x")  # a folder that exists already is used as it is
    assert files.usable_folder(made, "--workdir") == made and (made / "kept").read_text() == "x"
    (tmp_path / "f").write_text("")
    with pytest.raises(UsageError) as caught:
        files.usable_folder(tmp_path / "f", "--workdir")
    assert str(caught.value) == f"--workdir {tmp_path / 'f'}: a file is in the way, not a folder"
    with pytest.raises(UsageError) as caught:
        files.usable_folder(tmp_path / "f" / "below", "--out")
    assert str(caught.value).startswith("--out: ")


def test_a_folder_gone_right_after_it_was_made_is_named_with_the_posix_cause(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The race of another process replacing the folder between ``mkdir`` and the check:
    played deterministically by a ``Path.is_dir`` that answers False (fault injection of
    one OS query). The one line names the path and the cause as the C library words it,
    ``os.strerror(ENOTDIR)`` and the errno name."""
    import errno

    monkeypatch.setattr(Path, "is_dir", lambda self: False)
    with pytest.raises(UsageError) as caught:
        files.usable_folder(tmp_path / "w", "--workdir")
    line = str(caught.value)
    assert line.startswith("--workdir: ") and str(tmp_path / "w") in line
    assert f"{os.strerror(errno.ENOTDIR)} (ENOTDIR)" in line, line


def test_refuse_special_returns_the_files_stat_or_none(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    st = files.refuse_special(tmp_path / "f", "--out")
    assert st is not None and st.st_ino == os.stat(tmp_path / "f").st_ino
    assert files.refuse_special(tmp_path / "none", "--out") is None
    os.symlink("f", tmp_path / "l")
    with pytest.raises(UsageError) as caught:
        files.refuse_special(tmp_path / "l", "--out", verb="opened")
    assert str(caught.value) == (f"--out {tmp_path / 'l'}: a symlink, not opened through; valid: a regular "
                                 "file or a new name")
    with pytest.raises(UsageError) as caught:
        files.refuse_special(tmp_path, "--json-out")
    assert str(caught.value) == (f"--json-out {tmp_path}: a folder, not written through; valid: a regular "
                                 "file or a new name")
    with pytest.raises(UsageError) as caught:
        files.refuse_special(tmp_path / "f" / "x", "--out")
    assert str(caught.value) == f"--out {tmp_path / 'f' / 'x'}: cannot be written (Not a directory (ENOTDIR))"


def test_write_atomic_writes_utf8_keeps_the_mode_and_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "out.json"
    assert files.write_atomic(target, "ü\n", "--out") == target
    assert target.read_bytes() == b"\xc3\xbc\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o644
    target.chmod(0o600)
    files.write_atomic(target, b"\x00\x01", "--out")
    assert target.read_bytes() == b"\x00\x01" and stat.S_IMODE(target.stat().st_mode) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json"]


def test_write_atomic_in_the_current_folder_and_an_unwritable_one(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    files.write_atomic("here.txt", "x", "--out")
    assert Path("here.txt").read_text() == "x"
    with pytest.raises(UsageError) as caught:
        files.write_atomic(tmp_path / "none" / "f", "x", "--out")
    assert str(caught.value) == (f"--out {tmp_path / 'none' / 'f'}: cannot be written (No such file or "
                                 f"directory (ENOENT))")


def test_a_file_longer_than_its_size_said_is_refused_after_the_read() -> None:
    # a /proc file is a regular file whose st_size is 0 (proc(5)), so it passes the size check
    # on open and only its read finds more than the cap: 64 bytes, 64 / 2**20 MiB in %g
    status = "/proc/self/status"
    assert os.stat(status).st_size == 0 and stat.S_ISREG(os.stat(status).st_mode)
    with pytest.raises(UsageError) as caught:
        files.read_bytes(status, "stamp", cap=64)
    assert str(caught.value) == f"stamp {status}: larger than 6.10352e-05 MiB"
