"""What the index probe (``toolkit.run.provisioning.probe_index``) makes of each answer a real
HTTP server on 127.0.0.1 gives, and of local folders: README exit 8 ("an index or find-links
location cannot be reached, refuses access or lacks the project ... the hint names
--index-url, --find-links or --rocm-from system, whichever applies"), one line each, written
here by hand."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from toolkit.core.errors import SourceUnreachable
from toolkit.run.provisioning import FIND_LINKS, SDK_INDEX, probe_index

ANSWERS: dict[str, int] = {}  # path -> HTTP status; anything else 200
ASKED: list[tuple[str, dict[str, str]]] = []


class Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        ASKED.append((self.path, {k.lower(): v for k, v in self.headers.items()}))
        code = ANSWERS.get(self.path, 200)
        body = b"<html></html>\n"
        self.send_response(code)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(autouse=True)
def fresh() -> None:
    ANSWERS.clear()
    ASKED.clear()


def refused(url: str, project: str | None, what: str = SDK_INDEX) -> SourceUnreachable:
    with pytest.raises(SourceUnreachable) as caught:
        probe_index(url, project, what, 5.0)
    assert caught.value.exit_code == 8
    assert "\n" not in caught.value.message
    # no chained traceback: raised on its own, or ``from None``
    assert caught.value.__context__ is None or caught.value.__suppress_context__
    return caught.value


def test_a_reachable_project_passes_asking_for_its_page_as_a_browser_would(server: str) -> None:
    probe_index(f"{server}/simple", "rocm", SDK_INDEX, 5.0)
    [(path, headers)] = ASKED
    assert path == "/simple/rocm/"
    assert headers["accept"] == "text/html"
    assert headers["user-agent"] == "rocm-wheel-toolkit"


def test_a_404_for_the_project_names_the_project_and_the_url_asked(server: str) -> None:
    ANSWERS["/simple/rocm/"] = 404
    err = refused(f"{server}/simple", "rocm")
    assert err.message == (f"{SDK_INDEX} {server}/simple has no 'rocm' project (HTTP 404 for "
                           f"{server}/simple/rocm/)")
    assert err.hint == "check --index-url/--family: the index must serve this GPU family"


@pytest.mark.parametrize("code", [401, 403])
def test_refused_access_names_the_status_and_the_credentials(server: str, code: int) -> None:
    ANSWERS["/simple/rocm/"] = code
    err = refused(f"{server}/simple", "rocm")
    assert err.message == f"{SDK_INDEX} {server}/simple refused access (HTTP {code})"
    assert err.hint == "check the index credentials (netrc/keyring)"


def test_another_status_for_a_project_names_it_and_how_to_replace_the_index(
        server: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")  # no hipconfig: no system ROCm to offer
    monkeypatch.delenv("ROCM_PATH", raising=False)
    monkeypatch.delenv("HIP_PATH", raising=False)
    ANSWERS["/simple/rocm/"] = 500
    err = refused(f"{server}/simple", "rocm")
    assert err.message == (f"{SDK_INDEX} {server}/simple answered HTTP 500 for "
                           f"{server}/simple/rocm/")
    assert err.hint is not None and err.hint.startswith(
        "check the URL and the network, or pass --index-url URL")


@pytest.mark.parametrize("code", [404, 500])
def test_without_a_project_only_refused_access_fails(server: str, code: int) -> None:
    ANSWERS["/links/"] = code
    probe_index(f"{server}/links", None, FIND_LINKS, 5.0)  # a page that errs: pip says more
    assert [p for p, _ in ASKED] == ["/links/"]
    ANSWERS["/links/"] = 403
    assert refused(f"{server}/links", None, FIND_LINKS).message == (
        f"{FIND_LINKS} {server}/links refused access (HTTP 403)")


def test_a_local_folder_is_judged_without_a_request(tmp_path: Path) -> None:
    probe_index(str(tmp_path), "rocm", FIND_LINKS)  # a plain path: its projects are not folders
    err = refused(str(tmp_path / "none"), "rocm", FIND_LINKS)
    assert err.message == f"{FIND_LINKS} {tmp_path / 'none'} does not exist"
    # --find-links (docs/command-line.md) gives the build another find-links location
    assert err.hint is not None and err.hint.startswith("check the path or URL and the network")
    assert err.hint.endswith(", or pass --find-links PATH")
    (tmp_path / "simple" / "rocm").mkdir(parents=True)
    probe_index((tmp_path / "simple").as_uri(), "rocm", SDK_INDEX)
    probe_index((tmp_path / "simple").as_uri(), None, SDK_INDEX)
    assert refused((tmp_path / "simple").as_uri(), "torch").message == (
        f"{SDK_INDEX} {(tmp_path / 'simple').as_uri()} has no 'torch' project")
