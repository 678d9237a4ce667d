"""Redirects and URL joining (issue 29, classes 1 and 10): what the toolkit's own HTTP requests
(the index probe, the ``--changed-since`` index reader) send where, over real HTTP on
127.0.0.1.

Two real servers: ``A`` (the index the user names) and ``B`` (another port: another origin).
Each records every request (path with query, headers) it received; ``A`` answers the paths
it is told to with a redirect. The independent truths: the ``Authorization`` header a browser
or curl would send for ``user:password@`` (RFC 7617, computed here with base64), the bytes
each server received, and the README's exit codes (2: a refused URL, 8: an unreachable
source).
"""

from __future__ import annotations

import base64
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.doubles.fixtures import write_data
from toolkit.core.errors import SourceUnreachable, UsageError
from toolkit.run.provisioning import probe_index
from toolkit.verify.published import read_published

ROOT = Path(__file__).resolve().parents[2]
SECRET = "S3cr3tT0k3n"
USER = "builder"
BASIC = "Basic " + base64.b64encode(f"{USER}:{SECRET}".encode()).decode()  # RFC 7617
PAGE = b"<html><body><a href='rocm-1.0-py3-none-any.whl'>rocm</a></body></html>\n"


@dataclass
class Server:
    """A real HTTP server on 127.0.0.1 that records what it receives."""

    httpd: ThreadingHTTPServer
    seen: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    # path (without query) -> (status, Location); a Location "{path}" / "{query}" is filled
    redirects: dict[str, tuple[int, str]] = field(default_factory=dict)
    missing: set[str] = field(default_factory=set)  # paths answered with 404
    page: bytes = b""  # what every other path serves (empty: PAGE)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def authorizations(self) -> list[str | None]:
        return [h.get("authorization") for _, h in self.seen]

    def queries(self) -> list[str]:
        return [p.partition("?")[2] for p, _ in self.seen]


def _handler(server: Server) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            server.seen.append((self.path, {k.lower(): v for k, v in self.headers.items()}))
            path, _, query = self.path.partition("?")
            if path in server.redirects:
                code, location = server.redirects[path]
                self.send_response(code)
                self.send_header("Location", location.format(path=path, query=query))
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            # a page: a link to one wheel; no manifest beside it (404)
            code = 404 if path in server.missing or path.endswith(".json") else 200
            body = (server.page or PAGE) if code == 200 else b"not here\n"
            self.send_response(code)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
    return Handler


def _serving(host: str) -> Server:
    server = Server(ThreadingHTTPServer((host, 0), BaseHTTPRequestHandler))
    server.httpd.RequestHandlerClass = _handler(server)
    threading.Thread(target=server.httpd.serve_forever, args=(0.05,), daemon=True).start()
    return server


def _stop(*made: Server) -> None:
    for s in made:
        s.httpd.shutdown()
        s.httpd.server_close()


@pytest.fixture
def servers() -> Iterator[tuple[Server, Server]]:
    made = (_serving("127.0.0.1"), _serving("127.0.0.1"))
    try:
        yield made
    finally:
        _stop(*made)


@pytest.fixture
def elsewhere() -> Iterator[Server]:
    """A server on 127.0.0.2: Linux routes all of 127/8 to loopback, but the toolkit's rule names
    only 127.0.0.1, localhost and ::1 as loopback, so to it this host is plain http elsewhere."""
    server = _serving("127.0.0.2")
    try:
        yield server
    finally:
        _stop(server)


def with_creds(url: str) -> str:
    return url.replace("http://", f"http://{USER}:{SECRET}@")


def masked(url: str) -> str:
    """``url`` as the README says every line shows it: userinfo and query values ``***``."""
    head, _, query = url.partition("?")
    if "@" in head:
        head = "http://***@" + head.split("@", 1)[1]
    if not query:
        return head
    return head + "?" + "&".join(f"{p.split('=')[0]}=***" for p in query.split("&"))


def probe(url: str, project: str | None = "rocm") -> None:
    probe_index(url, project, "ROCm SDK index", 5.0, sdk=False)


# ----------------------------------------------------------------------------- the probe
@pytest.mark.parametrize("code", [301, 302, 303, 307, 308])
def test_the_probe_sends_no_authorization_to_another_origin(
        servers: tuple[Server, Server], code: int) -> None:
    a, b = servers
    a.redirects["/v2/gfx942/rocm/"] = (code, b.url + "{path}")
    probe(with_creds(a.url) + "/v2/gfx942/")  # B serves the page: the probe passes
    assert a.authorizations() == [BASIC]  # A, the index named, got the credentials
    assert [p for p, _ in b.seen] == ["/v2/gfx942/rocm/"]  # the redirect was followed...
    assert b.authorizations() == [None]  # ...without them
    assert [h["host"] for _, h in b.seen] == [b.url.removeprefix("http://")]
    assert not any(SECRET in p or SECRET in str(h) for p, h in b.seen)


def test_a_404_after_a_redirect_names_where_it_was_redirected(
        servers: tuple[Server, Server]) -> None:
    a, b = servers
    a.redirects["/v2/gfx942/rocm/"] = (302, b.url + "/elsewhere/rocm/")
    b.missing.add("/elsewhere/rocm/")
    with pytest.raises(SourceUnreachable) as err:
        probe(with_creds(a.url) + "/v2/gfx942/")
    line = str(err.value)
    assert "\n" not in line and SECRET not in line
    assert f"HTTP 404 for {masked(with_creds(a.url))}/v2/gfx942/rocm/ (redirected to " \
           f"{b.url}/elsewhere/rocm/)" in line, line
    assert b.authorizations() == [None]


def test_a_redirect_carrying_the_query_token_to_another_origin_is_refused(
        servers: tuple[Server, Server]) -> None:
    """The hostile index of the issue: it moves the request, query and all, to another
    origin. The toolkit does not follow it: B receives nothing; one line names both URLs,
    masked; exit 2 (UsageError)."""
    a, b = servers
    a.redirects["/v2/gfx942/rocm/"] = (307, b.url + "{path}?{query}")
    given = f"{a.url}/v2/gfx942/?token={SECRET}"
    with pytest.raises(UsageError) as err:
        probe(given)
    assert err.value.exit_code == 2
    line = str(err.value)
    assert "\n" not in line and SECRET not in line
    assert f"{a.url}/v2/gfx942/rocm/?token=***" in line, line
    assert f"to {b.url}/v2/gfx942/rocm/?token=***" in line, line
    assert "query token" in line
    assert b.seen == []
    # the token went where it was given, in the query, not inside the path (class 10)
    assert [p for p, _ in a.seen] == [f"/v2/gfx942/rocm/?token={SECRET}"]


def test_the_probe_joins_the_project_to_the_path_not_to_the_query(
        servers: tuple[Server, Server]) -> None:
    a, _ = servers
    probe(f"{a.url}/v2/gfx942?token={SECRET}&x=1")
    assert [p for p, _ in a.seen] == [f"/v2/gfx942/rocm/?token={SECRET}&x=1"]


def test_a_same_origin_redirect_keeps_the_credentials(servers: tuple[Server, Server]) -> None:
    a, b = servers
    a.redirects["/old/rocm/"] = (301, "/v2/rocm/?{query}")  # relative: the same origin
    probe(with_creds(a.url) + f"/old/?token={SECRET}")
    assert [p for p, _ in a.seen] == [f"/old/rocm/?token={SECRET}",
                                      f"/v2/rocm/?token={SECRET}"]
    assert a.authorizations() == [BASIC, BASIC]
    assert b.seen == []


@pytest.mark.parametrize(("target", "why"), [
    ("file:///etc/passwd", "only to https://"),
    ("ftp://127.0.0.1/pub/", "only to https://"),
    ("http://index.example.com/simple/rocm/", "plain http:// to a non-loopback host"),
    ("http://mallory:pw@127.0.0.1:{port}/x/", "holds credentials"),
    ("https://index.example.com/simple/\x1b[2Jrocm/", "control character"),
    # the password the index was sent, echoed into the query for another origin
    (f"http://127.0.0.1:{{port}}/x/?auth={SECRET}", "query token or password"),
])
def test_a_redirect_to_what_a_user_could_not_give_is_refused(
        servers: tuple[Server, Server], target: str, why: str) -> None:
    """The rules of a URL given by hand (core/urls.check_index_url): https, or http on
    loopback. A redirect to file:// (a local file), to another scheme, to plain http
    elsewhere, or to a URL holding credentials is not followed (nothing is requested
    there: the example.com hosts are never resolved)."""
    a, b = servers
    target = target.format(port=b.httpd.server_address[1])
    a.redirects["/v2/rocm/"] = (302, target)
    with pytest.raises(UsageError) as err:
        probe(with_creds(a.url) + "/v2/")
    line = str(err.value)
    assert "\n" not in line and "\x1b" not in line and SECRET not in line
    assert line.startswith(f"refusing the redirect of ROCm SDK index {masked(with_creds(a.url))}"
                           f"/v2/rocm/ to "), line
    assert why in line, line
    assert "mallory:pw" not in line and b.seen == []


def test_allow_insecure_lets_a_redirect_reach_plain_http_elsewhere(
        servers: tuple[Server, Server], elsewhere: Server) -> None:
    """README: plain http:// to a non-loopback host is refused unless --allow-insecure-index;
    with it, a redirect to such a host is followed. The "elsewhere" host is a real server on
    127.0.0.2 (not loopback by the toolkit's rule): it receives the request."""
    a, _ = servers
    where = f"http://127.0.0.2:{elsewhere.httpd.server_address[1]}/v2/rocm/"
    a.redirects["/v2/rocm/"] = (302, where)
    with pytest.raises(UsageError, match="allow-insecure-index"):
        probe(a.url + "/v2/")  # without it: refused, nothing requested there
    assert elsewhere.seen == []
    probe_index(a.url + "/v2/", "rocm", "ROCm SDK index", 5.0, sdk=False, allow_insecure=True)
    assert [p for p, _ in elsewhere.seen] == ["/v2/rocm/"]


def test_an_unreachable_redirect_target_is_exit_8_naming_it(
        servers: tuple[Server, Server]) -> None:
    from tests.fixtures.net import dead_port

    a, _ = servers
    dead = f"http://127.0.0.1:{dead_port()}/v2/rocm/"
    a.redirects["/v2/rocm/"] = (302, dead)
    with pytest.raises(SourceUnreachable) as err:
        probe(a.url + "/v2/")
    assert err.value.exit_code == 8
    assert f"cannot reach ROCm SDK index {a.url}/v2/ (redirected to {dead}): " in str(err.value)


# ----------------------------------------------------------------------------- --changed-since
def test_the_published_reader_sends_no_authorization_to_another_origin(
        servers: tuple[Server, Server]) -> None:
    a, b = servers
    a.redirects["/simple/"] = (302, b.url + "/mirror/")
    published = read_published(with_creds(a.url) + "/simple/", timeout=5.0)
    assert published.digests == frozenset()  # B's page: one wheel, no manifest beside it
    assert a.authorizations() == [BASIC]
    assert [p for p, _ in b.seen] == ["/mirror/", "/mirror/rocm-1.0-py3-none-any.whl"
                                      ".manifest.json"]
    assert b.authorizations() == [None, None]


def test_the_published_reader_joins_links_to_the_page_as_a_folder(
        servers: tuple[Server, Server]) -> None:
    """A root given without its trailing slash and with a query: its links are under it
    (``/simple/x``), not beside it (``/x``), and the query is not glued into the path."""
    a, _ = servers
    read_published(f"{a.url}/simple?token={SECRET}", timeout=5.0)
    assert [p for p, _ in a.seen] == [f"/simple?token={SECRET}",
                                      "/simple/rocm-1.0-py3-none-any.whl.manifest.json"]


# ----------------------------------------------------------------------------- the CLI
def run_toolkit(*args: str, env: dict[str, str] | None = None) \
        -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "toolkit", *args], cwd=ROOT,
                          env={**os.environ, **(env or {})}, capture_output=True, text=True,
                          timeout=120, check=False)


def one_error_line(res: subprocess.CompletedProcess[str], code: int) -> str:
    assert res.returncode == code, (res.returncode, res.stdout[-1000:], res.stderr[-2000:])
    assert "Traceback" not in res.stderr and SECRET not in res.stdout + res.stderr
    lines = [line for line in res.stderr.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, res.stderr
    return lines[0]


def test_matrix_changed_since_refuses_a_redirect_to_file(servers: tuple[Server, Server]) -> None:
    a, b = servers
    a.redirects["/simple/"] = (301, "file:///etc/")
    line = one_error_line(run_toolkit("matrix", "--format", "github", "--changed-since",
                                      with_creds(a.url) + "/simple/"), 2)
    assert (f"refusing the redirect of --changed-since index {masked(with_creds(a.url))}"
            f"/simple/ to file:///etc/ (HTTP 301)") in line, line


def test_matrix_changed_since_names_the_redirect_of_a_404(servers: tuple[Server, Server]) -> None:
    a, b = servers
    a.redirects["/simple/"] = (302, b.url + "/gone/")
    b.missing.add("/gone/")
    line = one_error_line(run_toolkit("matrix", "--format", "github", "--changed-since",
                                      with_creds(a.url) + "/simple/"), 8)
    assert (f"{masked(with_creds(a.url))}/simple/ (redirected to {b.url}/gone/)"
            " answered HTTP 404") in line, line
    assert b.authorizations() == [None]


def test_provision_refuses_a_redirect_carrying_the_token(
        servers: tuple[Server, Server], tmp_path: Path) -> None:
    """``python -m toolkit provision`` probes the SDK index given by --index-url first."""
    a, b = servers
    a.redirects["/v2/gfx94X-dcgpu/rocm/"] = (308, b.url + "{path}?{query}")
    data = write_data(tmp_path / "data", a.url + "/v2/")
    env = {"TOOLKIT_DATA_DIR": str(data), "TOOLKIT_CACHE_DIR": str(tmp_path / "cache")}
    given = f"{a.url}/v2/?token={SECRET}"
    res = run_toolkit("provision", "sample-0.9.0-cp311-rocm7.0", "--rocm-from", "pip",
                      "--index-url", given, "--gfx", "gfx942",
                      "--workdir", str(tmp_path / "work"), env=env)
    line = one_error_line(res, 2)
    assert (f"refusing the redirect of ROCm SDK index {a.url}/v2/gfx94X-dcgpu/rocm/?token=*** "
            f"to {b.url}/v2/gfx94X-dcgpu/rocm/?token=*** (HTTP 308)") in line, line
    assert b.seen == []


def test_provision_with_allow_insecure_index_follows_a_redirect_to_plain_http_elsewhere(
        servers: tuple[Server, Server], elsewhere: Server, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """README: a redirect is followed only to a target a user could give; plain http:// off
    loopback is one with --allow-insecure-index. ``provision`` given it probes the SDK index
    (on loopback) that redirects to such a host, a real server on 127.0.0.2 (not loopback by
    the toolkit's rule, see above): that server receives the probe, and its 404 for the
    family's project is the README's exit 8 (a source that cannot serve the build), not a
    refused redirect (exit 2)."""
    from toolkit.cli.main import main

    a, _ = servers
    target = f"http://127.0.0.2:{elsewhere.httpd.server_address[1]}/v2/gfx94X-dcgpu/rocm/"
    a.redirects["/v2/gfx94X-dcgpu/rocm/"] = (302, target)
    elsewhere.missing.add("/v2/gfx94X-dcgpu/rocm/")
    monkeypatch.setenv("TOOLKIT_DATA_DIR", str(write_data(tmp_path / "data", a.url + "/v2/")))
    monkeypatch.setenv("TOOLKIT_CACHE_DIR", str(tmp_path / "cache"))
    code = main(["provision", "sample-0.9.0-cp311-rocm7.0", "--rocm-from", "pip",
                 "--index-url", a.url + "/v2/", "--allow-insecure-index", "--gfx", "gfx942",
                 "--workdir", str(tmp_path / "work")])
    err = capsys.readouterr().err
    assert [p for p, _ in elsewhere.seen] == ["/v2/gfx94X-dcgpu/rocm/"], err
    assert code == 8, err
    assert f"redirected to {target}" in err and "404" in err, err


def test_a_page_link_holding_a_control_character_is_refused_escaped(
        servers: tuple[Server, Server]) -> None:
    """Class 8 on the last way a URL enters: a link of a --changed-since index page cannot
    print a raw control character (urllib drops the newline ``&#10;`` gives; the raw ESC
    is refused, shown escaped)."""
    a, _ = servers
    a.page = b"<a href='sub/x&#10;error: forged\x1b[2J.whl'>x</a>\n"
    res = run_toolkit("matrix", "--format", "github", "--changed-since", a.url + "/simple/")
    line = one_error_line(res, 2)
    assert not any(ord(c) < 32 for c in res.stderr.replace("\n", ""))
    assert line.startswith(f"error: refusing --changed-since link {a.url}/simple/sub/"), line
    assert "forged\\x1b[2J.whl.manifest.json: it holds a control character" in line, line
