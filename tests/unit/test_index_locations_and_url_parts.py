"""Which index or find-links values are accepted and how a URL is taken apart
(toolkit/core/urls.py's module text): https, file://, http only on loopback (else with
--allow-insecure-index), or an existing path; userinfo becomes RFC 7617 Basic credentials
(percent-decoded as RFC 3986 says); an origin is scheme, host and port (the scheme's default
port written out, RFC 6454); a redirect is refused for each named reason. Expectations are
hand-written; the Basic values are computed here with base64."""

from __future__ import annotations

import base64
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from toolkit.core import urls
from toolkit.core.errors import UsageError

VALID_URL = "valid: an absolute https:// URL, file://, http:// on loopback"


@pytest.mark.parametrize("url", ["https://h.example/simple/", "file:///srv/idx", "file:relative",
                                 "http://127.0.0.1:8080/simple", "http://localhost/", "http://[::1]:9/x"])
def test_accepted_index_urls_come_back_unchanged(url: str) -> None:
    assert urls.check_index_url(url) == url


def test_plain_http_elsewhere_is_refused_unless_allowed() -> None:
    with pytest.raises(UsageError) as caught:
        urls.check_index_url("http://u:pw@mirror.example/simple?t=1", what="--find-links")
    assert caught.value.message == (
        "refusing insecure --find-links http://***@mirror.example/simple?t=***: plain http:// to a "
        "non-loopback host; valid: https://..., file://..., http://127.0.0.1:PORT/...")
    assert caught.value.hint == "pass --allow-insecure-index if you really mean it"
    assert caught.value.exit_code == 2
    assert urls.check_index_url("http://mirror.example/", allow_insecure=True) == "http://mirror.example/"


@pytest.mark.parametrize("url", ["https:///simple", "ftp://h/simple", "http:///x", "https:h/simple",
                                 "//h/simple", "HTTPS//h"])
def test_other_urls_are_unsupported(url: str) -> None:
    with pytest.raises(UsageError) as caught:
        urls.check_index_url(url, allow_insecure=True)
    assert str(caught.value) == f"unsupported index URL {url}; {VALID_URL}"


def test_a_control_character_is_refused_before_anything_else() -> None:
    with pytest.raises(UsageError) as caught:
        urls.check_index_url("https://h/\x1b[2J", what="ROCm index")
    assert str(caught.value) == (f"refusing ROCm index https://h/\\x1b[2J: it holds a control character; "
                                 f"{VALID_URL}")


def test_a_location_is_a_url_or_an_existing_path(tmp_path: Path) -> None:
    assert urls.check_location(str(tmp_path)) == str(tmp_path)
    assert urls.check_location("https://h/simple") == "https://h/simple"
    with pytest.raises(UsageError, match="^refusing insecure find-links "):
        urls.check_location("http://h.example/", what="find-links")
    assert urls.check_location("http://h.example/", allow_insecure=True) == "http://h.example/"


@pytest.mark.parametrize("value", ["", "no/such/folder", "bad\0path", "user:secret@mirror.example"])
def test_anything_else_is_named_masked_with_the_valid_forms(tmp_path: Path, value: str,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    if value.startswith("user:"):
        Path(value).mkdir()  # even an existing folder of that name: pip would read a URL
    with pytest.raises(UsageError) as caught:
        urls.check_location(value, what="--find-links")
    shown = {"bad\0path": "bad\\x00path",
             "user:secret@mirror.example": "***@mirror.example"}.get(value, value)
    assert str(caught.value) == (
        f"--find-links {shown} is neither a URL nor an existing path; valid: an absolute https:// URL "
        "(http:// only on loopback), file://, or a local folder or file")


def _basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


@pytest.mark.parametrize(("url", "plain", "auth"), [
    ("https://h.example/simple/#frag", "https://h.example/simple/", None),
    ("https://me:p%40ss%3Aw@h.example:8443/s?x=1#f", "https://h.example:8443/s?x=1", _basic("me", "p@ss:w")),
    ("http://tok@[::1]:9/s", "http://[::1]:9/s", _basic("tok", "")),
    ("https://:pw@h/", "https://h/", _basic("", "pw")),
    ("https://H.Example/", "https://h.example/", None),
])
def test_credentials_leave_the_url_for_a_basic_header(url: str, plain: str, auth: str | None) -> None:
    assert urls.credentials(url) == (plain, auth)


@pytest.mark.parametrize(("url", "expected"), [
    ("https://h/x", ("https", "h", 443)), ("http://h/x", ("http", "h", 80)),
    ("https://U:P@H:8443/", ("https", "h", 8443)), ("file:///x", ("file", "", None)),
    ("http://[::1]/", ("http", "::1", 80))])
def test_an_origin_is_scheme_host_and_port(url: str, expected: tuple[str, str, int | None]) -> None:
    assert urls.origin(url) == expected


def test_redirected_names_the_last_hop_masked() -> None:
    assert urls.redirected(["https://a/"]) == ""
    assert urls.redirected([]) == ""
    assert urls.redirected(["https://a/", "https://b/", "https://c/?t=tok\n"]) == (" (redirected to "
                                                                                   "https://c/?t=***\\n)")


@pytest.mark.parametrize(("target", "why"), [
    ("https://h/\n", "the target holds a control character"),
    ("file:///etc/passwd", "a redirect may lead only to https:// (or http:// on loopback)"),
    ("https:///nohost", "a redirect may lead only to https:// (or http:// on loopback)"),
    ("http://elsewhere.example/", "plain http:// to a non-loopback host (--allow-insecure-index allows it)"),
    ("https://u:p@other.example/", "the target holds credentials"),
    ("https://other.example/?next=tok", "it would carry the query token or password of the URL to another "
                                        "origin"),
    ("https://other.example/tok?tok", "it would carry the query token or password of the URL to another "
                                      "origin"),
    ("https://other.example/x?a=1", None),
    ("https://first.example:443/y?t=tok", None),  # the same origin keeps its token
    ("http://127.0.0.1:9/", None),
])
def test_each_reason_a_redirect_is_refused(target: str, why: str | None) -> None:
    assert urls._redirect_problem(target, "https://first.example/simple?t=tok", False) == why


def test_a_password_or_lone_user_is_a_secret_too() -> None:
    assert urls._redirect_problem("https://o.example/?p=pw", "https://u:pw@first.example/", False) is not None
    assert urls._redirect_problem("https://o.example/?u=tok", "https://tok@first.example/", False) is not None
    assert urls._redirect_problem("https://o.example/?u=u", "https://u:pw@first.example/", False) is None
    assert urls._redirect_problem("http://o.example/", "https://first.example/", True) is None


class _Recorder(BaseHTTPRequestHandler):
    seen: list[dict[str, str]] = []

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        type(self).seen.append({k.lower(): v for k, v in self.headers.items()} | {"path": self.path})
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")


@pytest.fixture
def server() -> Iterator[str]:
    _Recorder.seen = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_open_url_sends_its_user_agent_and_the_userinfo_as_basic(server: str) -> None:
    hops = ["stale"]
    url = server.replace("http://", "http://me:pw@") + "/simple/?x=1#frag"
    with urls.open_url(url, what="index", timeout=5, hops=hops) as res:
        assert res.read() == b"ok"
    got = _Recorder.seen[0]
    assert (got["path"], got["user-agent"], got["authorization"]) == ("/simple/?x=1", "rocm-wheel-toolkit",
                                                                      _basic("me", "pw"))
    assert hops == [url]


def test_open_url_sends_the_given_headers_and_auth(server: str) -> None:
    with urls.open_url(server + "/p", what="index", timeout=5, headers={"Accept": "text/html"},
                       auth="Bearer t0k") as res:
        res.read()
    got = _Recorder.seen[0]
    assert got["accept"] == "text/html" and got["authorization"] == "Bearer t0k"
    assert got["user-agent"].startswith("Python-urllib/")  # given headers replace the default
    with urls.open_url(server + "/q", what="index", timeout=5) as res:
        res.read()
    assert "authorization" not in _Recorder.seen[1]
