"""What ``--changed-since URL`` sends an index (two real HTTP servers on 127.0.0.1 that record
each request's headers): the index's credentials (HTTP Basic, RFC 7617: base64 of
``user:password``) go to the index's own host and port only, never to a wheel linked on
another origin; every request names the toolkit as its User-Agent."""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.manifests import for_entry
from toolkit.data.ci import github_matrix, load_ci
from toolkit.plan.recipes import load_matrix
from toolkit.verify import published

Seen = list[tuple[str, str | None, str | None]]


@pytest.fixture
def servers(tmp_path: Path) -> Iterator[list[tuple[str, Path, Seen]]]:
    started = []
    for name in ("index", "files"):
        root = tmp_path / name
        root.mkdir()
        seen: Seen = []

        class Recording(SimpleHTTPRequestHandler):
            log = seen

            def do_GET(self) -> None:
                self.log.append((self.path, self.headers.get("Authorization"),
                                 self.headers.get("User-Agent")))
                super().do_GET()

            def log_message(self, *args: object) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), partial(Recording, directory=str(root)))
        threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
        started.append((server, (f"127.0.0.1:{server.server_address[1]}", root, seen)))
    try:
        yield [info for _, info in started]
    finally:
        for server, _ in started:
            server.shutdown()
            server.server_close()


def _manifest() -> dict[str, Any]:
    m = load_matrix()
    entry = github_matrix(m, load_ci(m), "workflow_dispatch", builds=m.select(packages=["apex"]))[0]
    return for_entry(m, entry)


def test_credentials_go_to_the_index_only_and_every_request_names_the_toolkit(
        servers: list[tuple[str, Path, Seen]]) -> None:
    (index, index_root, index_seen), (files, files_root, files_seen) = servers
    data = _manifest()
    (index_root / "a-1-py3-none-any.whl.manifest.json").write_text(json.dumps(data))
    (files_root / "b-1-py3-none-any.whl.manifest.json").write_text(json.dumps(data))
    (index_root / "index.html").write_text(
        '<a href="a-1-py3-none-any.whl">a</a>'
        f'<a href="http://{files}/b-1-py3-none-any.whl">b</a>')
    found = published.read_published(f"http://me:pw@{index}/")
    assert found.read == 2 and found.digests == frozenset({data["identity"]["digest"]})
    basic = "Basic " + base64.b64encode(b"me:pw").decode()
    assert index_seen == [("/", basic, "rocm-wheel-toolkit"),
                          ("/a-1-py3-none-any.whl.manifest.json", basic, "rocm-wheel-toolkit")]
    assert files_seen == [("/b-1-py3-none-any.whl.manifest.json", None, "rocm-wheel-toolkit")]


def test_an_absolute_link_to_the_index_own_host_gets_its_credentials(
        servers: list[tuple[str, Path, Seen]]) -> None:
    (index, index_root, index_seen), _ = servers
    data = _manifest()
    (index_root / "pkg").mkdir()
    (index_root / "pkg" / "a-1-py3-none-any.whl.manifest.json").write_text(json.dumps(data))
    # the link names the index's host and port in full, without the user:password the
    # index URL was given with: still the index's own origin (RFC 6454: scheme, host, port)
    (index_root / "index.html").write_text(
        f'<a href="http://{index}/pkg/a-1-py3-none-any.whl">a</a>')
    found = published.read_published(f"http://me:pw@{index}/")
    assert found.read == 1 and found.digests == frozenset({data["identity"]["digest"]})
    basic = "Basic " + base64.b64encode(b"me:pw").decode()
    assert index_seen == [("/", basic, "rocm-wheel-toolkit"),
                          ("/pkg/a-1-py3-none-any.whl.manifest.json", basic, "rocm-wheel-toolkit")]


def test_links_without_a_file_name_are_not_wheels(servers: list[tuple[str, Path, Seen]]) -> None:
    """A page may link a host's root, a query or a fragment (no path, so no file name): such
    links are skipped, and only the wheel beside them is read."""
    (index, index_root, index_seen), (files, _, files_seen) = servers
    data = _manifest()
    (index_root / "a-1-py3-none-any.whl.manifest.json").write_text(json.dumps(data))
    (index_root / "index.html").write_text(
        f'<a href="http://{files}">root</a><a href="http://{files}?page=2">query</a>'
        '<a href="a-1-py3-none-any.whl">a</a>')
    found = published.read_published(f"http://{index}/")
    assert found.read == 1 and found.digests == frozenset({data["identity"]["digest"]})
    assert [path for path, _, _ in index_seen] == ["/", "/a-1-py3-none-any.whl.manifest.json"]
    assert files_seen == []


def test_a_page_that_is_not_utf8_is_still_read(servers: list[tuple[str, Path, Seen]]) -> None:
    """An index page's stray bytes (Latin-1 in a link text) do not hide its wheels: the page
    is decoded with replacement, as browsers do."""
    (index, index_root, _), _ = servers
    data = _manifest()
    (index_root / "a-1-py3-none-any.whl.manifest.json").write_text(json.dumps(data))
    (index_root / "index.html").write_bytes(b'<a href="a-1-py3-none-any.whl">caf\xe9 \xff</a>')
    found = published.read_published(f"http://{index}/")
    assert found.read == 1 and found.digests == frozenset({data["identity"]["digest"]})


def test_a_manifest_larger_than_the_cap_is_refused_naming_its_url_and_the_cap(
        servers: list[tuple[str, Path, Seen]], monkeypatch: pytest.MonkeyPatch) -> None:
    """The manifest cap set here to 1 MiB (``core.files.CAPS``, so the file served stays
    small): a manifest one byte over it is one line naming its URL and the cap."""
    from toolkit.core.errors import UsageError
    from toolkit.core.files import CAPS

    monkeypatch.setitem(CAPS, "manifest", 1 << 20)
    (index, index_root, _), _ = servers
    with open(index_root / "a-1-py3-none-any.whl.manifest.json", "wb") as f:
        f.truncate((1 << 20) + 1)
    (index_root / "index.html").write_text('<a href="a-1-py3-none-any.whl">a</a>')
    with pytest.raises(UsageError) as caught:
        published.read_published(f"http://{index}/")
    said = str(caught.value)
    url = f"http://{index}/a-1-py3-none-any.whl.manifest.json"
    # the option whose index it is, the URL, then the cap it is over (1 << 20 bytes: 1 MiB)
    assert said.startswith(f"--changed-since index: {url} "), said
    assert said.endswith(f"{url} is larger than 1 MiB"), said
