"""A flat find-links page for the wheels under a folder: ``DIR/index.html``.

``pip install --find-links DIR/index.html`` (a path or an ``http://`` URL of the page) reads
one PEP 503-style anchor per wheel::

    <a href="<build-id>/<wheel>#sha256=<hex>" data-requires-python="&gt;=3.10"><wheel></a><br>

Every ``href`` is relative to ``DIR`` and percent-encoded, then HTML-escaped, as is every
attribute value and text; pip verifies the ``#sha256=`` fragment after downloading.

What is listed and what is skipped (never a traceback, never an unescaped name):

* listed: regular files ``*.whl`` anywhere under ``DIR`` whose name is a valid wheel file
  name (``packaging``) written in the wheel-name alphabet (``A-Z a-z 0-9 . _ + ! -``), that
  open as a zip and hold exactly one ``.dist-info/METADATA`` whose Name and Version match
  the file name, and that pass ``check``'s integrity rules (zip structure, member paths,
  duplicate members, size and ratio budgets, RECORD hashes and sizes, members named like
  libraries that are ELF: ``INTEGRITY_CHECKS``, judged by check's own readers); a symlink
  to such a file inside ``DIR`` is listed under the link's path;
* skipped with a reason (``Skipped``): an invalid wheel file name, a name outside that
  alphabet (pip could never select it: its tags match no interpreter), a corrupt or
  unreadable archive, a symlink that points outside ``DIR`` or nowhere, a path that is not
  UTF-8, a ``*.whl`` that is not a regular file, a symlinked folder (not followed);
* refused (``UsageError``, nothing written): two different wheels (sha256) under one file
  name, since pip would install either;
* ignored silently: hidden files and folders (``.tmp-*`` is where builds stage their
  wheels before the atomic rename into ``dist/<build-id>/``) and ``DIR/index.html`` itself.

The page is sorted by ``href`` and carries no timestamp, so the same wheels give the same
bytes; ``write_index`` leaves an identical file untouched (its mtime too) and otherwise
replaces it atomically (a temporary file in ``DIR``, then ``os.replace``).
"""

from __future__ import annotations

import email.parser
import html
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from urllib.parse import quote

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from toolkit.core.errors import UsageError
from toolkit.core.files import sha256_file, write_atomic
from toolkit.core.text import escape
from toolkit.inspect.readers.wheelzip import WheelZip

INDEX_NAME = "index.html"
_WHEEL_ALPHABET = re.compile(r"[A-Za-z0-9._+!-]+\.whl")


@dataclass(frozen=True)
class Link:
    """One wheel of the page."""

    href: str  # relative to DIR, percent-encoded, without the fragment
    filename: str
    sha256: str
    requires_python: str | None = None


@dataclass(frozen=True)
class Skipped:
    """A ``*.whl`` (or symlinked folder) under DIR that is not on the page, and why."""

    path: str  # relative to DIR, shown safely (see ``shown``)
    reason: str

    def __str__(self) -> str:
        return f"{self.path}: not listed, {self.reason}"


@dataclass(frozen=True)
class Scan:
    root: Path
    links: tuple[Link, ...]
    skipped: tuple[Skipped, ...]
    notes: tuple[str, ...] = ()  # listed, but something the user should know


@dataclass(frozen=True)
class IndexResult:
    index: Path
    scan: Scan
    written: bool  # False: the file already held exactly these bytes


def shown(text: str) -> str:
    """``text`` as one safe line (``toolkit.core.text.escape``: a newline or escape sequence
    in a file name cannot forge output or CI annotations; a long one is cut)."""
    return escape(text)


def _root(folder: str | os.PathLike[str]) -> Path:
    path = Path(folder)
    hint = "give the folder holding the wheels, e.g. dist"
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise UsageError(f"{shown(str(path))}: no such folder", hint=hint) from None
    except (OSError, ValueError) as err:
        cause = getattr(err, "strerror", None) or str(err)
        raise UsageError(f"{shown(str(path))}: cannot be read ({cause})", hint=hint) from None
    if not stat.S_ISDIR(st.st_mode):
        raise UsageError(f"{shown(str(path))}: not a folder", hint=hint)
    return path.resolve()


def scan(folder: str | os.PathLike[str]) -> Scan:
    """Every wheel under ``folder`` (recursively), sorted by href, and what was skipped."""
    root = _root(folder)
    links: list[Link] = []
    skipped: list[Skipped] = []
    notes: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        here = Path(dirpath)
        for d in sorted(dirnames):
            if not d.startswith(".") and (here / d).is_symlink():
                rel = (here / d).relative_to(root).as_posix()
                skipped.append(Skipped(shown(rel), "a symlinked folder is not followed"))
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".")
                             and not (here / d).is_symlink())
        for name in sorted(filenames):
            if name.startswith(".") or not name.endswith(".whl"):
                continue
            path = here / name
            rel = path.relative_to(root).as_posix()
            outcome = _entry(root, path, rel)
            if isinstance(outcome, Skipped):
                skipped.append(outcome)
            else:
                link, note = outcome
                links.append(link)
                if note:
                    notes.append(note)
    links.sort(key=lambda lk: lk.href)
    skipped.sort(key=lambda s: s.path)
    _same_name(links)
    return Scan(root, tuple(links), tuple(skipped), tuple(notes))


def _same_name(links: list[Link]) -> None:
    """Two different wheels (sha256) under one file name: pip would take either; refused."""
    by_name: dict[str, dict[str, str]] = {}
    for link in links:
        by_name.setdefault(link.filename, {}).setdefault(link.sha256, link.href)
    clashes = {name: hrefs for name, hrefs in by_name.items() if len(hrefs) > 1}
    if clashes:
        name, hrefs = sorted(clashes.items())[0]
        where = ", ".join(shown(h) for h in sorted(hrefs.values()))
        raise UsageError(f"{len(hrefs)} different wheels named {shown(name)} ({where}): pip "
                         "would install either; nothing written",
                         hint="keep one of them (or give each its own folder's index)")


def _entry(root: Path, path: Path, rel: str) -> Skipped | tuple[Link, str | None]:
    show = shown(rel)
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        return Skipped(show, "its path is not valid UTF-8")
    name = path.name
    if not _WHEEL_ALPHABET.fullmatch(name):
        return Skipped(show, "the file name has characters no wheel name has "
                             "(only A-Z a-z 0-9 . _ + ! - are valid)")
    try:
        dist, version, _build, _tags = parse_wheel_filename(name)
    except (InvalidWheelFilename, InvalidVersion) as err:
        return Skipped(show, f"not a valid wheel file name ({err})")
    try:
        target = path.resolve(strict=True)
    except (OSError, RuntimeError):
        return Skipped(show, "a symlink that points nowhere (or in a loop)")
    if path.is_symlink() and not target.is_relative_to(root):
        return Skipped(show, "a symlink that points outside the folder")
    try:
        st = os.stat(target)
    except OSError as err:
        return Skipped(show, f"cannot be read ({err.strerror})")
    if not stat.S_ISREG(st.st_mode):
        return Skipped(show, "not a regular file")
    try:
        requires, note = _requires_python(target, str(dist), version)
        _integrity(target)
        digest = _sha256(target)
    except _Unusable as err:
        return Skipped(show, str(err))
    href = quote(rel, safe="/")
    return Link(href, name, digest, requires), (f"{show}: {note}" if note else None)


class _Unusable(Exception):
    """Why a wheel cannot be listed."""


# What ``check`` judges about a wheel's integrity, and ``index`` with it: the archive (zip
# structure, member paths, duplicates, sizes and ratio budgets), RECORD, the metadata, and
# members named like libraries that are not ELF. (Policy, symbols and GPU code are what a
# build's check step judges; a find-links page only refuses what is not a sound wheel.)
INTEGRITY_CHECKS = frozenset({"archive", "record", "metadata", "elf"})


def _integrity(path: Path) -> None:
    """``_Unusable`` naming the first integrity error ``check`` finds in the wheel (and how
    many there are), through check's own readers."""
    from toolkit.inspect.inputs import Input, collect_wheel
    from toolkit.inspect.report import WheelResult
    from toolkit.inspect.rules.metadata import check_metadata

    try:
        with WheelZip.open(path) as wz:
            inp = Input(path, wz, result=WheelResult(str(path)))
            collect_wheel(inp, wz, jobs=1)
            check_metadata(inp.result, wz)
    except UsageError as err:
        why = str(err).removeprefix(f"{path}: ")
        raise _Unusable(f"a corrupt wheel ({_one_line(why)})") from None
    errors = [f for f in inp.result.findings
              if f.severity == "error" and f.check in INTEGRITY_CHECKS]
    if errors:
        more = f" (and {len(errors) - 1} more; `python -m toolkit check` lists them)" \
            if len(errors) > 1 else ""
        raise _Unusable(f"fails check's integrity rules: [{errors[0].check}] "
                        f"{_one_line(errors[0].message)}{more}")


def _sha256(path: Path) -> str:
    try:
        return sha256_file(path)
    except OSError as err:
        raise _Unusable(f"cannot be read ({err.strerror})") from None


def _requires_python(path: Path, dist: str, version: Version) -> tuple[str | None, str | None]:
    """Requires-Python of the wheel's METADATA (None when it has none), and a note when the
    value is not a valid specifier (then it is left off the page). Raises ``_Unusable``."""
    try:
        with WheelZip.open(path) as wz:
            metas = [i for i in wz.members
                     if PurePosixPath(i.filename).parent.name.endswith(".dist-info")
                     and len(PurePosixPath(i.filename).parts) == 2
                     and PurePosixPath(i.filename).name == "METADATA"]
            if len(metas) != 1:
                raise _Unusable(f"a corrupt wheel: {len(metas)} .dist-info/METADATA files, not 1")
            raw = wz.read_small(metas[0])
    except UsageError as err:  # WheelZipError, MemberError: the archive or METADATA is damaged
        why = str(err).removeprefix(f"{path}: ")
        raise _Unusable(f"a corrupt wheel ({_one_line(why)})") from None
    meta = email.parser.BytesParser().parsebytes(raw, headersonly=True)
    m_name, m_version = meta.get("Name"), meta.get("Version")
    if not m_name or canonicalize_name(str(m_name)) != dist:
        raise _Unusable(f"METADATA names {shown(str(m_name))}, the file name {dist}")
    try:
        if Version(str(m_version)) != version:
            raise _Unusable(f"METADATA has version {shown(str(m_version))}, the file name {version}")
    except InvalidVersion:
        raise _Unusable(f"METADATA has no valid Version ({shown(str(m_version))})") from None
    value = meta.get("Requires-Python")
    if value is None:
        return None, None
    text = " ".join(str(value).split())
    try:
        SpecifierSet(text)
    except InvalidSpecifier:
        return None, f"Requires-Python {shown(text)} is not a valid specifier; left off the page"
    return (text or None), None


def _one_line(text: str) -> str:
    return shown(" ".join(text.split()))


def render(links: tuple[Link, ...] | list[Link]) -> bytes:
    """The page: one anchor per link, in the given order, every value HTML-escaped."""
    lines = ["<!DOCTYPE html>", "<html>", "  <head>", '    <meta charset="utf-8">',
             "    <title>Wheels</title>", "  </head>", "  <body>"]
    for link in links:
        href = html.escape(f"{link.href}#sha256={link.sha256}", quote=True)
        attrs = f'href="{href}"'
        if link.requires_python:
            attrs += f' data-requires-python="{html.escape(link.requires_python, quote=True)}"'
        lines.append(f"    <a {attrs}>{html.escape(link.filename, quote=True)}</a><br>")
    lines += ["  </body>", "</html>", ""]
    return "\n".join(lines).encode("utf-8")


def write_index(folder: str | os.PathLike[str], data: bytes) -> tuple[Path, bool]:
    """Write ``data`` to ``folder/index.html`` atomically, unless it holds exactly ``data``
    already (then nothing is touched). Returns the path and whether it was written."""
    root = _root(folder)
    index = root / INDEX_NAME
    if index.is_file() and not index.is_symlink():
        try:
            if index.read_bytes() == data:
                return index, False
        except OSError:
            pass  # unreadable: replace it
    # replaced whole; a symlink, a FIFO or a folder there is refused, never written through
    write_atomic(index, data, "index page")
    return index, True


def make_index(folder: str | os.PathLike[str]) -> IndexResult:
    """Scan ``folder`` and write its ``index.html`` (only when the content changed)."""
    found = scan(folder)
    index, written = write_index(found.root, render(found.links))
    return IndexResult(index, found, written)
