"""The identity digests of the builds already published (``--changed-since SOURCE``).

SOURCE is one of:

- a folder of manifests: every ``manifest.json`` and ``*.manifest.json`` under it (the
  ``artifacts/<id>/manifest.json`` builds write, as CI's downloaded artifacts hold them);
- an index URL (https://, file://, http:// on loopback; other http:// only with
  ``--allow-insecure-index``): a PEP 503 simple index (its project pages are read for the
  matrix's packages only) or a find-links page. The convention: each published wheel's
  manifest sits beside it as ``<wheel file name>.manifest.json`` (``apex-1.8.0-...whl`` ->
  ``apex-1.8.0-...whl.manifest.json``). A wheel without one is not counted as published.

A manifest counts when its build ended ``ok`` and it records a digest; it must be one the
toolkit wrote: valid against the manifest schema, its digest that of the identity it records,
that identity's ``plan_sha256`` that of its own plan and, beside a wheel whose link carries
``#sha256=``, its ``wheel_sha256`` that one. Anything else is one line (``UsageError``, exit
2); an index that cannot be read is ``SourceUnreachable`` (exit 8).
"""

from __future__ import annotations

import json
import os
import re
import stat
import urllib.error
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urljoin, urlsplit, urlunsplit

from toolkit.core.errors import SourceUnreachable, UsageError
from toolkit.core.files import CAPS, file_kind
from toolkit.core.text import escape
from toolkit.core.urls import check_index_url, credentials, join_path, mask, open_url, redirected
from toolkit.run.identity import identity_digest, plan_sha256
from toolkit.run.manifest import read
from toolkit.run.manifest_schema import validate

MANIFEST_SUFFIX = ".manifest.json"
_HEX64 = re.compile(r"[0-9a-f]{64}")
WHAT = "--changed-since"


@dataclass(frozen=True)
class Published:
    """What SOURCE holds: the digests of its finished builds and what was left out, why."""

    digests: frozenset[str]
    read: int  # manifests read
    left_out: tuple[str, ...] = ()  # "<where>: <why>" (not ok, no digest, no manifest)


def read_published(source: str, *, allow_insecure: bool = False, projects: Iterable[str] = (),
                   timeout: float = 30.0) -> Published:
    """The published digests at ``source`` (a folder or an index URL, see the module)."""
    if "://" in source:
        url = check_index_url(source, allow_insecure=allow_insecure, what=f"{WHAT} index")
        if urlsplit(url).scheme != "file":
            return _collect(_index_manifests(url, allow_insecure, projects, timeout))
        source = unquote(urlsplit(url).path)
    return _collect(_folder_manifests(Path(source)))


def manifest_digest(data: Any, where: str) -> str | None:
    """The digest a manifest records, checked; None when it is no published build's (not
    ``ok``, or written before digests were recorded). Raises ``UsageError`` when malformed or
    altered."""
    validate(data, where)
    if data["outcome"] != "ok":
        return None
    ident = data["identity"]
    digest = ident.get("digest")
    if digest is None:
        return None
    if not isinstance(digest, str) or not _HEX64.fullmatch(digest):
        raise UsageError(f"{where}: manifest field identity.digest: expected 64 hexadecimal "
                         "digits (sha256)")
    if identity_digest(ident) != digest:
        raise UsageError(f"{where}: identity.digest is not the digest of the identity the "
                         "manifest records (altered?); valid: a manifest as its build wrote it")
    paths = (data.get("host") or {}).get("paths")
    if not isinstance(paths, dict) or not all(isinstance(v, str) for v in paths.values()):
        raise UsageError(f"{where}: manifest field host.paths: expected an object of strings")
    if plan_sha256(data["plan"]["steps"], paths) != ident.get("plan_sha256"):
        raise UsageError(f"{where}: identity.plan_sha256 is not the digest of the plan the "
                         "manifest records (altered?); valid: a manifest as its build wrote it")
    recorded = ident.get("build")
    if not isinstance(recorded, dict) or recorded.get("id") != data["build"]["id"]:
        raise UsageError(f"{where}: identity.build is not the manifest's build "
                         f"{escape(data['build']['id'])} (altered?)")
    return digest


def _collect(found: Iterator[tuple[str, Any]]) -> Published:
    digests: set[str] = set()
    left: list[str] = []
    count = 0
    for where, data in found:
        if data is None:  # a wheel without a manifest beside it
            left.append(f"{where}: no manifest")
            continue
        count += 1
        digest = manifest_digest(data, where)
        if digest is None:
            why = "records no identity digest" if data["outcome"] == "ok" else \
                f"build {data['outcome']}"
            left.append(f"{where}: {why}")
        else:
            digests.add(digest)
    return Published(frozenset(digests), count, tuple(left))


# ----------------------------------------------------------------------------- a folder
def _is_manifest(name: str) -> bool:
    return name == "manifest.json" or name.endswith(MANIFEST_SUFFIX)


def _folder_manifests(root: Path) -> Iterator[tuple[str, Any]]:
    shown = escape(os.fspath(root))
    try:
        mode = os.stat(root).st_mode
    except FileNotFoundError:
        raise UsageError(f"{WHAT} {shown}: no such folder; valid: a folder of manifests or an "
                         "index URL") from None
    except (OSError, ValueError) as exc:
        raise UsageError(f"{WHAT} {shown}: cannot be read ({exc})") from None
    if not stat.S_ISDIR(mode):
        raise UsageError(f"{WHAT} {shown}: {file_kind(mode)}, not a folder; valid: a "
                         "folder of manifests or an index URL")

    def failed(err: OSError) -> None:
        raise UsageError(f"{WHAT} {shown}: cannot be read ({escape(str(err))})")

    for folder, dirs, files in os.walk(root, onerror=failed):  # links to folders: not followed
        dirs.sort()
        for name in sorted(files):
            if _is_manifest(name):
                path = Path(folder) / name
                yield escape(os.fspath(path)), read(path)


# ----------------------------------------------------------------------------- an index
class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            href = dict(attrs).get("href")
            if href:
                self.hrefs.append(href)


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _index_manifests(url: str, allow_insecure: bool, projects: Iterable[str],
                     timeout: float) -> Iterator[tuple[str, Any]]:
    fetch = _Fetcher(url, allow_insecure, timeout)
    links = fetch.links(url)
    wheels = [u for u in links if _file_name(u).endswith(".whl")]
    if not wheels:  # a PEP 503 root: the matrix's projects' pages
        wanted = {_normal(p) for p in projects}
        for link in links:
            name = urlsplit(link).path.rstrip("/").rsplit("/", 1)[-1]
            if _normal(unquote(name)) in wanted:
                wheels.extend(u for u in fetch.links(link) if _file_name(u).endswith(".whl"))
    for wheel in wheels:
        parts = urlsplit(wheel)
        target = urlunsplit(parts._replace(path=parts.path + MANIFEST_SUFFIX, fragment=""))
        where = mask(target)
        raw = fetch.get(target, missing_ok=True)
        if raw is None:
            yield escape(mask(urlunsplit(parts._replace(fragment="")))), None
            continue
        data = _parse(raw, where)
        _same_wheel(data, parts.fragment, where)
        yield escape(where), data


def _file_name(url: str) -> str:
    return unquote(urlsplit(url).path.rsplit("/", 1)[-1])


def _parse(raw: bytes, where: str) -> Any:
    try:
        return json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError) as exc:
        raise UsageError(f"{escape(where)}: not a readable manifest ({escape(str(exc))})") \
            from None


def _same_wheel(data: Any, fragment: str, where: str) -> None:
    m = re.fullmatch(r"sha256=([0-9a-fA-F]{64})", fragment)
    if m and isinstance(data, dict) and data.get("outcome") == "ok" \
            and data.get("wheel_sha256") != m.group(1).lower():
        raise UsageError(f"{escape(where)}: wheel_sha256 is not the sha256 of the wheel beside "
                         "it (its link's #sha256=); valid: the manifest of that wheel's build")


class _Fetcher:
    """GETs within the index's rules: every URL checked like the index's (a page cannot send
    the toolkit to plain http), credentials only to the index's own host, bounded reads;
    redirects as ``core.urls.open_url`` follows them (credentials never to another origin)."""

    def __init__(self, root: str, allow_insecure: bool, timeout: float) -> None:
        self.host = (urlsplit(root).hostname, urlsplit(root).port)
        self.auth = credentials(root)[1]
        self.allow_insecure = allow_insecure
        self.timeout = timeout

    def links(self, url: str) -> list[str]:
        hops: list[str] = []
        raw = self.get(url, hops=hops)
        assert raw is not None
        parser = _Links()
        parser.feed(raw.decode("utf-8", "replace"))
        # relative to where the page was found (after its redirects), as a folder (a query
        # stays a query, never a part of the path)
        base = join_path(hops[-1])
        return [urljoin(base, h) for h in parser.hrefs]

    def get(self, url: str, *, missing_ok: bool = False,
            hops: list[str] | None = None) -> bytes | None:
        check_index_url(url, allow_insecure=self.allow_insecure, what=f"{WHAT} link")
        parts = urlsplit(url)
        headers = {"User-Agent": "rocm-wheel-toolkit", "Accept": "text/html, application/json"}
        auth = self.auth if (parts.hostname, parts.port) == self.host else None
        cap = CAPS["manifest"]
        hops = [] if hops is None else hops
        try:
            with open_url(url, what=f"{WHAT} index", timeout=self.timeout, headers=headers,
                          auth=auth, allow_insecure=self.allow_insecure, hops=hops) as resp:
                data: bytes = resp.read(cap + 1)
        except urllib.error.HTTPError as exc:
            if exc.code == 404 and missing_ok:
                return None
            raise SourceUnreachable(f"{WHAT} index: {escape(mask(url))}{redirected(hops)} "
                                    f"answered HTTP {exc.code}",
                                    hint="check the URL and its credentials") from None
        except (urllib.error.URLError, OSError, ValueError) as exc:
            reason = getattr(exc, "reason", exc)
            raise SourceUnreachable(f"cannot reach the {WHAT} index {escape(mask(url))}"
                                    f"{redirected(hops)}: {escape(mask(str(reason)))}",
                                    hint="check the URL and the network") from None
        if len(data) > cap:
            raise UsageError(f"{WHAT} index: {escape(mask(url))} is larger than "
                             f"{cap >> 20} MiB")
        return data
