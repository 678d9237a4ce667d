"""The core helpers every writer and reader shares (issue 20): one escape, one mask, one
bounded reader of regular files."""

from __future__ import annotations

import errno
import os
import time
from pathlib import Path

import pytest

from toolkit.core.errors import DataError, UsageError, describe_os_error
from toolkit.core.files import read_bytes, read_text, sha256_file, usable_folder
from toolkit.core.text import clean, escape, quoted
from toolkit.core.urls import check_location, mask


@pytest.mark.parametrize("raw, shown", [
    ("plain name", "plain name"),
    ("a\x1b[2Jb", "a\\x1b[2Jb"),
    ("line\nforged", "line\\nforged"),
    ("tab\there", "tab\\there"),
    ("nul\x00", "nul\\x00"),
    ("c1\x9b31m", "c1\\x9b31m"),
    ("sep\u2028x", "sep\\u2028x"),
    ("bidi\u202ex", "bidi\\u202ex"),
    ("é ü 漢", "é ü 漢"),  # printable text stays as it is
    ("bad\udcffbyte", "bad\\udcffbyte"),  # an undecodable file name byte
])
def test_escape(raw: str, shown: str) -> None:
    assert escape(raw) == shown


def test_escape_cuts_long_values_with_their_length() -> None:
    gfx = "gfx" + "9" * 10_000
    assert len(gfx) == 10_003
    assert escape(gfx) == gfx[:200] + "… (10003 chars)"
    assert quoted(gfx) == f"'{gfx[:200]}…' (10003 chars)"
    assert quoted("ok") == "'ok'"


def test_clean_keeps_line_breaks_escapes_the_rest() -> None:
    assert clean("a\n\tb\x1b[31m\r") == "a\n\tb\\x1b[31m\\r"


@pytest.mark.parametrize("text, shown", [
    ("alice:SECRET@idx.example.com/simple", "***@idx.example.com/simple"),
    ("--index-url alice:SECRET@idx.example.com/simple --x", "--index-url ***@idx.example.com/simple --x"),
    ("https://h.example/simple/?token=SECRET", "https://h.example/simple/?token=***"),
    ("https://h.example/s/?a=SECRET&b=SECRET#frag", "https://h.example/s/?a=***&b=***#frag"),
    ("https://h.example/s/?SECRET", "https://h.example/s/?***"),
    ('{"u": "http://127.0.0.1:8/v2/?token=SECRET"}', '{"u": "http://127.0.0.1:8/v2/?token=***"}'),
    ("file:///srv/idx?key=SECRET", "file:///srv/idx?key=***"),
    # not secrets: left alone
    ("git@github.com:ROCm/apex.git", "git@github.com:ROCm/apex.git"),
    ("gfx90a:xnack+ gfx942", "gfx90a:xnack+ gfx942"),
    ("src/file.py?x=1", "src/file.py?x=1"),
    ("dist/x.whl#sha256=abc", "dist/x.whl#sha256=abc"),
])
def test_mask_every_form(text: str, shown: str) -> None:
    assert mask(text) == shown


@pytest.mark.parametrize("value", [
    "alice:SECRET@idx.example.com/simple",
    "idx.example.com/simple",
    "ftp://u:SECRET@h/",
    "https:///no-host",
    "http://u:SECRET@mirror.example/",
    "",
])
def test_check_location_refuses_and_masks(value: str) -> None:
    with pytest.raises(UsageError) as err:
        check_location(value)
    assert "SECRET" not in str(err.value) and err.value.exit_code == 2


def test_check_location_accepts_urls_and_existing_paths(tmp_path: Path) -> None:
    assert check_location("https://h.example/simple/?token=x")
    assert check_location("http://127.0.0.1:9/")
    assert check_location(str(tmp_path)) == str(tmp_path)
    assert check_location(tmp_path.as_uri())


@pytest.fixture
def kinds(tmp_path: Path) -> dict[str, Path]:
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "zero").symlink_to("/dev/zero")
    (tmp_path / "folder").mkdir()
    with open(tmp_path / "big", "wb") as fh:
        fh.truncate((4 << 20) + 1)
    (tmp_path / "ok").write_text("fine")
    return {p.name: p for p in tmp_path.iterdir()}


@pytest.mark.parametrize("name, why", [
    ("fifo", "not a regular file (a FIFO)"),
    ("zero", "not a regular file (a device)"),
    ("folder", "not a regular file (a folder)"),
    ("big", "larger than 4 MiB (4194305 bytes)"),
    ("missing", "no such file"),
])
def test_read_refuses_at_once_in_one_line(kinds: dict[str, Path], name: str, why: str) -> None:
    path = kinds.get(name, kinds["ok"].with_name(name))
    start = time.monotonic()
    with pytest.raises(DataError) as err:
        read_bytes(path, "data file", DataError)
    assert time.monotonic() - start < 1.0
    assert str(err.value) == f"data file {path}: {why}"


def test_read_within_the_cap_and_utf8(kinds: dict[str, Path], tmp_path: Path) -> None:
    assert read_text(kinds["ok"], "manifest") == "fine"
    assert read_bytes(kinds["ok"], "x", cap=4) == b"fine"
    with pytest.raises(UsageError, match="larger than"):
        read_bytes(kinds["ok"], "x", cap=3)
    (tmp_path / "latin").write_bytes(b"caf\xe9")
    with pytest.raises(UsageError, match="not UTF-8 text"):
        read_text(tmp_path / "latin", "manifest")


def test_sha256_never_reads_a_fifo_or_device(kinds: dict[str, Path]) -> None:
    for name in ("fifo", "zero"):
        with pytest.raises(OSError) as err:
            sha256_file(kinds[name])
        assert err.value.errno == errno.EINVAL


def test_describe_os_error_names_path_and_cause() -> None:
    err = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), "/w/dist/x.whl")
    assert describe_os_error(err) == "/w/dist/x.whl: No space left on device (ENOSPC)"
    err = OSError(errno.EROFS, os.strerror(errno.EROFS), "/w/a\nb")
    assert describe_os_error(err) == "/w/a\\nb: Read-only file system (EROFS)"


def test_usable_folder(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("")
    assert usable_folder(tmp_path / "new" / "deep", "work folder").is_dir()
    with pytest.raises(UsageError, match="a file is in the way"):
        usable_folder(tmp_path / "f", "work folder")
    with pytest.raises(UsageError, match="Not a directory"):
        usable_folder(tmp_path / "f" / "sub", "work folder")
    with pytest.raises(UsageError, match="File name too long"):
        usable_folder(tmp_path / ("x" * 5000), "work folder")


def test_hash_tree_never_opens_a_fifo(tmp_path: Path) -> None:
    import hashlib

    from toolkit.core.files import hash_tree

    (tmp_path / "a.py").write_text("x")
    plain = hashlib.sha256()
    hash_tree(plain, tmp_path)
    os.mkfifo(tmp_path / "pipe")
    start = time.monotonic()
    with_fifo = hashlib.sha256()
    hash_tree(with_fifo, tmp_path)
    assert time.monotonic() - start < 1.0
    assert with_fifo.hexdigest() != plain.hexdigest()  # the FIFO is named, never read
