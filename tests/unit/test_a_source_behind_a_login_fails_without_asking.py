"""A source repository that asks for a login (HTTP 401) makes get-sources fail at once, in
one line naming the git command and git's own words, never a prompt (``toolkit.run.sources``
runs git with ``GIT_TERMINAL_PROMPT=0``; git(1): "If this Boolean environment variable is set
to false, git will not prompt on the terminal"). The server is a real one on 127.0.0.1 that
answers every request 401 with a Basic challenge, as a private GitHub repository does; the
truth is git's message for a disabled prompt, "terminal prompts disabled" (git's prompt.c),
where a git allowed to prompt says instead that it could not open the terminal."""

from __future__ import annotations

import http.server
import io
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from toolkit.core.errors import StepFailed
from toolkit.plan.layout import Layout
from toolkit.plan.model import Plan
from toolkit.plan.recipes import load_matrix
from toolkit.run import sources
from toolkit.run.context import Run


class _LoginWanted(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # the name http.server calls
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Basic realm="private"')
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        return


@pytest.fixture
def private_url(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")  # no credential helper of the host
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for var in ("GIT_ASKPASS", "SSH_ASKPASS", "GIT_TERMINAL_PROMPT"):
        monkeypatch.delenv(var, raising=False)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _LoginWanted)
    server.daemon_threads = True  # a connection git left open does not hold the close
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/ROCm/private.git"
    server.shutdown()
    server.server_close()


def test_a_clone_that_needs_a_login_fails_in_words_without_a_prompt(
        tmp_path: Path, private_url: str) -> None:
    plan = Plan(load_matrix().builds[0], ("gfx942",), None, ())
    run = Run(plan, Layout(tmp_path / "work", tmp_path / "cache"), io.StringIO())
    mirror = tmp_path / "cache" / "mirrors" / "private.git"
    with pytest.raises(StepFailed) as caught:
        sources.ensure_mirror(private_url, mirror, "main", run)
    host = private_url.split("/ROCm/")[0]
    partial = mirror.with_name("private.git.partial")
    assert caught.value.exit_code == 5
    assert caught.value.message == (
        f"git clone --mirror --quiet {private_url} {partial} failed (exit 128): "
        f"fatal: could not read Username for '{host}': terminal prompts disabled")
    assert not mirror.exists()
