"""`index DIR`: the find-links page (toolkit.run.findlinks and the CLI command).

The page is read back with the standard library's HTML parser and every hash is computed
here from the file's bytes; pip reading the page for real is tests/integration/test_findlinks.py.
"""

from __future__ import annotations

import errno
import hashlib
import html.parser
import os
import shutil
import sys
from pathlib import Path
from urllib.parse import unquote

import pytest
from wheel.wheelfile import WheelFile

from toolkit.cli.main import main
from toolkit.core.errors import UsageError
from toolkit.run.findlinks import Link, make_index, render, scan, write_index


# ----------------------------------------------------------------------------- helpers
def build_wheel(dest: Path, name: str = "hip_sample", version: str = "0.1.0", *,
                requires_python: str | None = None, filename: str | None = None,
                metadata_name: str | None = None, tag: str = "py3-none-any") -> Path:
    """A real wheel (RECORD with hashes, by ``wheel.wheelfile``)."""
    dest.mkdir(parents=True, exist_ok=True)
    path = dest / f"{name}-{version}-{tag}.whl"
    di = f"{name}-{version}.dist-info"
    meta = f"Metadata-Version: 2.1\nName: {metadata_name or name}\nVersion: {version}\n"
    if requires_python is not None:
        meta += f"Requires-Python: {requires_python}\n"
    with WheelFile(path, "w") as wf:
        wf.writestr(f"{name}/__init__.py", f"VERSION = {version!r}\n")
        wf.writestr(f"{di}/METADATA", meta + "\n")
        wf.writestr(f"{di}/WHEEL", f"Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\n"
                                   f"Tag: {tag}\n")
    if filename is not None:
        path = path.rename(dest / filename)
    return path


class _Anchors(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.anchors: list[tuple[dict[str, str | None], str]] = []
        self._open: dict[str, str | None] | None = None
        self._text = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self._open, self._text = dict(attrs), ""

    def handle_data(self, data: str) -> None:
        if self._open is not None:
            self._text += data

    def handle_endtag(self, tag: str) -> None:
        if tag == "a" and self._open is not None:
            self.anchors.append((self._open, self._text))
            self._open = None


def anchors(page: Path) -> list[tuple[dict[str, str | None], str]]:
    parser = _Anchors()
    parser.feed(page.read_text(encoding="utf-8"))
    parser.close()
    return parser.anchors


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def hrefs(page: Path) -> dict[str, str]:
    """{unquoted path relative to the page: sha256 from the fragment}."""
    out = {}
    for attrs, _text in anchors(page):
        href = attrs["href"] or ""
        path, _, frag = href.partition("#")
        assert frag.startswith("sha256=")
        out[unquote(path)] = frag.removeprefix("sha256=")
    return out


# ----------------------------------------------------------------------------- the page
def test_lists_every_wheel_recursively_with_its_sha256(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    a = build_wheel(dist / "hip_sample-0.1.0-cp312-rocm7.0", version="0.1.0")
    b = build_wheel(dist / "hip_sample-0.2.0-cp312-rocm7.0", version="0.2.0")
    c = build_wheel(dist / "deep" / "er", "other", "1.0")
    (dist / "notes.txt").write_text("not a wheel")
    res = make_index(dist)
    page = dist / "index.html"
    assert res.index == page.resolve() and res.written
    assert hrefs(page) == {p.relative_to(dist).as_posix(): sha256(p) for p in (a, b, c)}
    assert [text for _a, text in anchors(page)] == [c.name, a.name, b.name]  # sorted by href
    assert res.scan.skipped == ()


def test_requires_python_is_escaped_and_only_where_metadata_has_it(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    build_wheel(dist / "a", "with_req", "1.0", requires_python=">=3.10,<4,!=3.11.*")
    build_wheel(dist / "b", "without_req", "1.0")
    make_index(dist)
    raw = (dist / "index.html").read_text()
    assert 'data-requires-python="&gt;=3.10,&lt;4,!=3.11.*"' in raw
    assert ">=3.10" not in raw and "<4" not in raw
    found = {text: attrs for attrs, text in anchors(dist / "index.html")}
    assert found["with_req-1.0-py3-none-any.whl"]["data-requires-python"] == ">=3.10,<4,!=3.11.*"
    assert "data-requires-python" not in found["without_req-1.0-py3-none-any.whl"]


def test_an_invalid_requires_python_is_left_off_with_a_note(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    build_wheel(dist / "a", "odd", "1.0", requires_python="three point ten")
    res = make_index(dist)
    ((attrs, _text),) = anchors(dist / "index.html")
    assert "data-requires-python" not in attrs
    assert len(res.scan.notes) == 1 and "three point ten" in res.scan.notes[0]


def test_metadata_is_read_as_headers_and_its_body_as_free_text(tmp_path: Path) -> None:
    """Core metadata is headers, then the description as free text: only the headers are read.
    A METADATA whose headers declare a MIME multipart type and whose description nests two
    thousand parts (Python's full ``email`` parser recurses once per level, past its recursion
    limit) is listed with its Requires-Python; the docstring's "never a traceback"."""
    dist = tmp_path / "dist"
    dist.mkdir()
    path = dist / "deep-1.0-py3-none-any.whl"
    head = ("Metadata-Version: 2.1\nName: deep\nVersion: 1.0\nRequires-Python: >=3.10\n"
            'Content-Type: multipart/mixed; boundary="b0"\n\n')
    body = "".join(f'--b{i - 1}\nContent-Type: multipart/mixed; boundary="b{i}"\n\n'
                   for i in range(1, 2000))
    with WheelFile(path, "w") as wf:
        wf.writestr("deep/__init__.py", "")
        wf.writestr("deep-1.0.dist-info/METADATA", head + body)
        wf.writestr("deep-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: tests\n"
                                                "Root-Is-Purelib: true\nTag: py3-none-any\n")
    res = make_index(dist)
    assert res.scan.skipped == ()
    ((attrs, text),) = anchors(dist / "index.html")
    assert (text, attrs["data-requires-python"]) == (path.name, ">=3.10")


def test_folder_names_are_percent_encoded_then_html_escaped(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    odd = "we&ird <b>\"q' #%?"
    w = build_wheel(dist / odd)
    make_index(dist)
    raw = (dist / "index.html").read_text()
    assert "<b>" not in raw and odd not in raw and "we&ird" not in raw
    assert hrefs(dist / "index.html") == {f"{odd}/{w.name}": sha256(w)}
    ((attrs, _),) = anchors(dist / "index.html")
    assert " " not in (attrs["href"] or "") and '"' not in (attrs["href"] or "")


def test_render_escapes_every_value() -> None:
    link = Link('a&b/<x>"y".whl', '<x>"y"&.whl', "ab" * 32, '>=3.10"><script>')
    raw = render([link]).decode()
    assert "<x>" not in raw and "<script>" not in raw and '"y"' not in raw
    assert "&lt;x&gt;&quot;y&quot;&amp;.whl" in raw and "&gt;=3.10&quot;&gt;&lt;script&gt;" in raw


def test_empty_folder_gives_an_empty_page(tmp_path: Path) -> None:
    res = make_index(tmp_path)
    assert res.written and anchors(tmp_path / "index.html") == []


# ----------------------------------------------------------------------------- hostile input
def _skipped(dist: Path) -> dict[str, str]:
    return {s.path: s.reason for s in scan(dist).skipped}


def test_corrupt_wheels_are_skipped_with_a_reason(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    good = build_wheel(dist / "ok")
    (dist / "bad").mkdir()
    (dist / "bad" / "garbage-1.0-py3-none-any.whl").write_bytes(b"not a zip at all")
    data = good.read_bytes()
    (dist / "bad" / "truncated-1.0-py3-none-any.whl").write_bytes(data[: len(data) // 2])
    build_wheel(dist / "bad", "liar", "1.0", metadata_name="someone_else")
    res = make_index(dist)
    assert hrefs(dist / "index.html") == {good.relative_to(dist).as_posix(): sha256(good)}
    reasons = {s.path: s.reason for s in res.scan.skipped}
    assert set(reasons) == {"bad/garbage-1.0-py3-none-any.whl", "bad/truncated-1.0-py3-none-any.whl",
                            "bad/liar-1.0-py3-none-any.whl"}
    assert "corrupt" in reasons["bad/garbage-1.0-py3-none-any.whl"]
    assert "corrupt" in reasons["bad/truncated-1.0-py3-none-any.whl"]
    assert "someone_else" in reasons["bad/liar-1.0-py3-none-any.whl"]


@pytest.mark.parametrize("name", [
    "notawheel.whl",
    "hip_sample-0.1.0.whl",
    "hip_sample-not_a_version-py3-none-any.whl",
    "hip_sample-0.1.0-py3-none-any<script>alert(1)<\\script>.whl",
    "hip_sample-0.1.0-py3-none-any&amp.whl",
    "hip_sample-0.1.0-py3-none-any\n::error::forged.whl",
    "hip_sample-0.1.0-py3-none-any\x1b[31m.whl",
])
def test_bad_wheel_names_are_skipped_never_written(tmp_path: Path, name: str) -> None:
    dist = tmp_path / "dist"
    build_wheel(dist / "x", filename=name)
    res = make_index(dist)
    raw = (dist / "index.html").read_text()
    assert anchors(dist / "index.html") == [] and "script" not in raw and "forged" not in raw
    (skipped,) = res.scan.skipped
    assert "\n" not in str(skipped) and "\x1b" not in str(skipped)
    assert str(skipped).isprintable()


def test_symlinks(tmp_path: Path) -> None:
    outside = build_wheel(tmp_path / "elsewhere", "secret", "1.0")
    dist = tmp_path / "dist"
    inside = build_wheel(dist / "real")
    (dist / "links").mkdir()
    (dist / "links" / "secret-1.0-py3-none-any.whl").symlink_to(outside)
    (dist / "links" / "gone-1.0-py3-none-any.whl").symlink_to(tmp_path / "nowhere.whl")
    (dist / "links" / inside.name).symlink_to(inside)
    (dist / "linked-folder").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    res = make_index(dist)
    assert hrefs(dist / "index.html") == {"real/" + inside.name: sha256(inside),
                                          "links/" + inside.name: sha256(inside)}
    lines = {s.path: str(s) for s in res.scan.skipped}  # as the warnings say them
    secret, gone = "links/secret-1.0-py3-none-any.whl", "links/gone-1.0-py3-none-any.whl"
    assert lines[secret].startswith(f"{secret}: not listed, a symlink that points outside the")
    assert lines[gone].startswith(f"{gone}: not listed, a symlink that points nowhere")
    assert lines["linked-folder"].startswith("linked-folder: not listed, a symlinked folder is "
                                             "not followed")
    assert "secret" not in (dist / "index.html").read_text()


def test_special_files_and_hidden_staging_folders(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    dist.mkdir()
    os.mkfifo(dist / "fifo-1.0-py3-none-any.whl")  # opening it would block
    (dist / "dir-1.0-py3-none-any.whl").mkdir()  # a folder named like a wheel: searched
    staged = build_wheel(dist / "b" / ".tmp-abc123")  # a build's staging area: ignored
    build_wheel(dist / ".hidden")
    assert _skipped(dist) == {"fifo-1.0-py3-none-any.whl": "not a regular file"}
    assert scan(dist).links == () and staged.exists()


def test_a_wheel_gone_while_the_folder_is_read_is_skipped_with_the_systems_reason(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A wheel another process removes between the listing and the read (a build cleaning
    up): left off the page, its reason the one the system gives (os.strerror(ENOENT))."""
    dist = tmp_path / "dist"
    kept, gone = build_wheel(dist / "a"), build_wheel(dist / "b", "other")
    real_stat, target = os.stat, os.fspath(gone.resolve())

    def removed_first(path: str | os.PathLike[str], *args: object, **kw: object) -> os.stat_result:
        if os.fspath(path) == target:
            os.unlink(target)
        return real_stat(path, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "stat", removed_first)
    res = scan(dist)
    assert [lk.filename for lk in res.links] == [kept.name]
    assert [(s.path, s.reason) for s in res.skipped] == [
        ("b/" + gone.name, f"cannot be read ({os.strerror(errno.ENOENT)})")]


@pytest.mark.skipif(sys.platform == "darwin", reason="macOS refuses non-UTF-8 file names")
def test_a_path_that_is_not_utf8(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    w = build_wheel(dist / "ok")
    bad_dir = os.path.join(os.fsencode(dist), b"caf\xe9")
    os.mkdir(bad_dir)
    shutil.copy(os.fsencode(w), os.path.join(bad_dir, os.fsencode(w.name)))
    res = make_index(dist)
    assert list(hrefs(dist / "index.html")) == ["ok/" + w.name]
    (skipped,) = res.scan.skipped
    assert str(skipped).endswith(": not listed, its path is not valid UTF-8")
    assert str(skipped).isprintable()


@pytest.mark.parametrize("name", ["hip_sample-0.1.0-py3-none-any&amp.whl",
                                  "hip_sample-0.1.0-py3-none-any\x1b[31m.whl"])
def test_a_character_no_wheel_name_has_is_named_with_what_is_valid(tmp_path: Path,
                                                                   name: str) -> None:
    """PEP 427's file name components: letters, digits, ``.``, ``_``, ``+`` (local label),
    ``!`` (epoch) and the ``-`` between them; ``&`` and an escape byte are none of them."""
    build_wheel(tmp_path / "dist", filename=name)
    (skipped,) = scan(tmp_path / "dist").skipped
    assert str(skipped).startswith(f"{skipped.path}: not listed, the file name has characters")
    assert str(skipped).endswith("(only A-Z a-z 0-9 . _ + ! - are valid)")


def test_a_metadata_version_that_is_no_version_is_named(tmp_path: Path) -> None:
    """A file name version that is valid PEP 440 and a METADATA Version that is not: the
    wheel is left off, the reason quoting the METADATA value."""
    dist = tmp_path / "dist"
    dist.mkdir()
    with WheelFile(dist / "hip_sample-0.1.0-py3-none-any.whl", "w") as wf:
        wf.writestr("hip_sample-0.1.0.dist-info/METADATA",
                    "Metadata-Version: 2.1\nName: hip_sample\nVersion: banana\n\n")
        wf.writestr("hip_sample-0.1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nTag: py3-none-any\n")
    (skipped,) = scan(dist).skipped
    assert str(skipped).endswith(": not listed, METADATA has no valid Version (banana)")


def test_missing_or_unusable_folder_is_one_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no such folder") as caught:
        make_index(tmp_path / "missing")
    # docs/command-line.md, index DIR: "folder holding the wheels, e.g. dist"
    assert (caught.value.hint or "").startswith("give the folder holding the wheels")
    (tmp_path / "file").write_text("x")
    with pytest.raises(UsageError, match="not a folder"):
        make_index(tmp_path / "file")
    (tmp_path / "d" / "index.html").mkdir(parents=True)
    with pytest.raises(UsageError, match="index.html: a folder, not written through"):
        make_index(tmp_path / "d")
    assert [p.name for p in (tmp_path / "d").iterdir()] == ["index.html"], "no temp file left"


# ----------------------------------------------------------------------------- stability
def test_second_run_does_not_touch_the_file(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    build_wheel(dist / "a", requires_python=">=3.9")
    first = make_index(dist)
    page = dist / "index.html"
    before, data, inode = page.stat().st_mtime_ns, page.read_bytes(), page.stat().st_ino
    os.utime(page, ns=(before - 10**9, before - 10**9))  # so that a rewrite would show
    before = page.stat().st_mtime_ns
    second = make_index(dist)
    assert first.written and not second.written
    assert page.stat().st_mtime_ns == before and page.stat().st_ino == inode
    assert page.read_bytes() == data
    assert sorted(p.name for p in dist.iterdir()) == ["a", "index.html"], "no temp file left"


def test_a_change_rewrites_atomically(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    build_wheel(dist / "a")
    make_index(dist)
    old_inode = (dist / "index.html").stat().st_ino
    new = build_wheel(dist / "b", version="0.2.0")
    res = make_index(dist)
    assert res.written and new.name in (dist / "index.html").read_text()
    assert (dist / "index.html").stat().st_ino != old_inode, "replaced, not written in place"
    assert oct((dist / "index.html").stat().st_mode & 0o777) == oct(0o644)


def test_same_wheels_give_the_same_bytes_whatever_the_order(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    names = [("b", "0.2.0"), ("a", "0.1.0"), ("c", "1.0")]
    for folder, order in ((one, names), (two, names[::-1])):
        for sub, version in order:
            build_wheel(folder / sub, version=version, requires_python=">=3.8")
    for w in two.rglob("*.whl"):  # identical bytes in both trees
        shutil.copy(one / w.relative_to(two), w)
    make_index(one)
    make_index(two)
    assert (one / "index.html").read_bytes() == (two / "index.html").read_bytes()


def test_write_index_is_a_no_op_for_identical_bytes(tmp_path: Path) -> None:
    path, written = write_index(tmp_path, b"<html></html>\n")
    assert written and path.read_bytes() == b"<html></html>\n"
    assert write_index(tmp_path, b"<html></html>\n") == (path, False)


# ----------------------------------------------------------------------------- the command
def test_cli_writes_the_page_and_warns_per_skipped_wheel(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    dist = tmp_path / "dist"
    build_wheel(dist / "ok")
    build_wheel(dist / "x", filename="evil-1.0-py3-none-any\n::error::forged.whl")
    assert main(["index", str(dist)]) == 0
    out, err = capsys.readouterr()
    assert out.strip().endswith("index.html: 1 wheel (written)")
    (line,) = err.splitlines()
    assert line.startswith("warning: ") and "\\n::error::forged" in line
    assert main(["index", str(dist)]) == 0
    assert "(unchanged)" in capsys.readouterr().out


def test_cli_strict_refuses_and_writes_nothing(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    dist = tmp_path / "dist"
    build_wheel(dist / "ok")
    (dist / "bad-1.0-py3-none-any.whl").write_bytes(b"junk")
    assert main(["index", "--strict", str(dist)]) == 2
    err = capsys.readouterr().err
    assert "bad-1.0-py3-none-any.whl: not listed, a corrupt wheel" in err
    assert "error: 1 file(s)" in err and "Traceback" not in err
    assert not (dist / "index.html").exists()


def test_cli_bad_folder_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["index", str(tmp_path / "missing")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no such folder" in err
