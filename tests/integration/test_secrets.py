"""A secret planted in an index URL never appears in a manifest, log, stamp or printed line."""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.doubles.fixtures import local_index, sandbox, uv_cache  # noqa: F401

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]
SECRET = "S3cr3tT0k3n"


def test_index_credentials_are_masked_everywhere(sandbox: dict[str, str]) -> None:  # noqa: F811
    url = next(line.split('"')[1] for line in
               Path(sandbox["TOOLKIT_DATA_DIR"], "rocm.toml").read_text().splitlines()
               if line.startswith("channels = { nightly = "))  # 7.0's channel
    secret_url = url.replace("http://", f"http://builder:{SECRET}@")
    args = ["--rocm-from", "pip", "--index-url", secret_url, "--package", "sample",
            "--version", "1.0.0", "--gfx", "gfx942", "--workdir", sandbox["WORK"], "--no-smoke"]
    env = {**os.environ, **sandbox, "CI": "true"}
    dry = subprocess.run([sys.executable, "-m", "nox", "-s", "build-3.11-rocm7.0", "--", *args,
                          "--dry-run"], cwd=ROOT, env=env, capture_output=True, text=True)
    res = subprocess.run([sys.executable, "-m", "nox", "-s", "build-3.11-rocm7.0", "--", *args],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    printed = dry.stdout + dry.stderr + res.stdout + res.stderr
    assert "install-rocm-sdk" in printed and "http://***@127.0.0.1" in printed
    assert SECRET not in printed
    written = [p for root in (sandbox["WORK"], sandbox["TOOLKIT_CACHE_DIR"] + "/envs")
               for p in Path(root).rglob("*") if p.is_file() and p.suffix in {".json", ".log", ".txt"}]
    assert any(p.name == "manifest.json" for p in written)
    assert any(p.name == "build.log" for p in written)
    for path in written:
        assert SECRET not in path.read_text(errors="replace"), path


PASSWORD = "p@ss@" + SECRET  # an "@" inside the password: masking must take all of it


class _AuthHandler(SimpleHTTPRequestHandler):
    """Serves the index only to ``builder:<PASSWORD>`` (HTTP Basic), 401 otherwise."""

    expected = "Basic " + base64.b64encode(f"builder:{PASSWORD}".encode()).decode()

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _allowed(self) -> bool:
        if self.headers.get("Authorization") == self.expected:
            return True
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Basic realm="index"')
        self.send_header("Content-Length", "0")
        self.end_headers()
        return False

    def do_GET(self) -> None:
        if self._allowed():
            super().do_GET()

    def do_HEAD(self) -> None:
        if self._allowed():
            super().do_HEAD()


def test_a_build_from_a_password_protected_index_reproduces(
        sandbox: dict[str, str], local_index: Any) -> None:  # noqa: F811
    server = ThreadingHTTPServer(("127.0.0.1", 0),
                                 partial(_AuthHandler, directory=str(local_index.root)))
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    try:
        port = server.server_address[1]
        secret_url = f"http://builder:{PASSWORD}@127.0.0.1:{port}/v2/"
        env = {**os.environ, **sandbox, "CI": "true"}
        # the bundled sample's sources, as the test data's `sample` 1.0.0
        source = Path(sandbox["WORK"]).parent / "sample-src"
        shutil.copytree(ROOT / "toolkit" / "examples" / "hip_extension", source,
                        ignore=shutil.ignore_patterns("build", "*.egg-info"))
        meta = source / "pyproject.toml"
        meta.write_text(meta.read_text().replace('name = "hip-sample"', 'name = "sample"')
                        .replace('version = "0.1.0"', 'version = "1.0.0"'))
        args = ["--rocm-from", "pip", "--index-url", secret_url, "--package", "sample",
                "--version", "1.0.0", "--gfx", "gfx90a", "--workdir", sandbox["WORK"],
                "--no-smoke", "--source", str(source)]
        res = subprocess.run([sys.executable, "-m", "nox", "-s", "build-3.11-rocm7.0", "--",
                              *args], cwd=ROOT, env=env, capture_output=True, text=True,
                             timeout=900)
        assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-2000:]
        (manifest,) = Path(sandbox["WORK"], "artifacts").glob("*/manifest.json")
        recorded = json.loads(manifest.read_text())
        assert recorded["options"]["index_url"] == f"http://***@127.0.0.1:{port}/v2/"
        # without the credentials the protected index refuses: the repro cannot install
        no_creds = {**env}
        no_creds.pop("TOOLKIT_ROCM_INDEX_URL", None)
        shutil.rmtree(Path(sandbox["TOOLKIT_CACHE_DIR"]) / "envs")  # install again
        refused = subprocess.run([sys.executable, "-m", "invoke", "-r", str(ROOT), "repro",
                                  str(manifest)], cwd=sandbox["WORK"], env=no_creds,
                                 capture_output=True, text=True, timeout=900)
        assert refused.returncode == 8, refused.stdout[-2000:] + refused.stderr[-2000:]
        assert "refused access (HTTP 401)" in refused.stdout + refused.stderr
        # with them, given the way a build takes them, it reproduces
        again = subprocess.run([sys.executable, "-m", "invoke", "-r", str(ROOT), "repro",
                                str(manifest)], cwd=sandbox["WORK"],
                               env={**env, "TOOLKIT_ROCM_INDEX_URL": secret_url},
                               capture_output=True, text=True, timeout=900)
        assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-2000:]
        assert "identical: " in again.stdout
        printed = "".join(p.stdout + p.stderr for p in (res, refused, again))
        written = [p for root in (sandbox["WORK"], sandbox["TOOLKIT_CACHE_DIR"] + "/envs")
                   for p in Path(root).rglob("*") if p.is_file()
                   and p.suffix in {".json", ".log", ".txt", ".cfg"}]
        for part in (SECRET, "p@ss", PASSWORD):
            assert part not in printed
            for path in written:
                assert part not in path.read_text(errors="replace"), path
    finally:
        server.shutdown()
        server.server_close()


def _every_file(*roots: str) -> list[Path]:
    return [p for root in roots for p in Path(root).rglob("*") if p.is_file()]


@pytest.mark.parametrize("form", ["query", "scheme-less", "query-find-links"])
def test_every_url_form_is_masked_in_every_file(sandbox: dict[str, str], form: str) -> None:  # noqa: F811
    """The secret of each URL form never reaches a printed line or any file the build
    writes (whatever the suffix): a query-string token (``?token=``) is masked; a scheme-less
    ``user:pass@host/simple`` is refused (exit 2) and named masked."""
    url = next(line.split('"')[1] for line in
               Path(sandbox["TOOLKIT_DATA_DIR"], "rocm.toml").read_text().splitlines()
               if line.startswith("channels = { nightly = "))  # 7.0's channel
    host = url.split("://", 1)[1]
    args = ["--rocm-from", "pip", "--package", "sample", "--version", "1.0.0", "--gfx", "gfx942",
            "--workdir", sandbox["WORK"], "--no-smoke"]
    if form == "query":
        args += ["--index-url", f"{url}?token={SECRET}&user=me"]
    elif form == "query-find-links":
        args += ["--find-links", f"{url}?{SECRET}"]
    else:
        args += ["--index-url", f"alice:{SECRET}@{host}"]
    env = {**os.environ, **sandbox, "CI": "true"}
    dry = subprocess.run([sys.executable, "-m", "nox", "-s", "build-3.11-rocm7.0", "--", *args,
                          "--dry-run"], cwd=ROOT, env=env, capture_output=True, text=True)
    res = subprocess.run([sys.executable, "-m", "nox", "-s", "build-3.11-rocm7.0", "--", *args],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    printed = dry.stdout + dry.stderr + res.stdout + res.stderr
    assert SECRET not in printed
    assert "Traceback" not in printed
    if form == "scheme-less":
        from tests.fixtures.nox_runs import toolkit_code

        assert toolkit_code(dry.returncode, dry.stderr) == 2, printed[-2000:]
        assert toolkit_code(res.returncode, res.stderr) == 2, printed[-2000:]
        assert "***@" in printed and "neither a URL nor an existing path" in printed
    else:
        assert "=***" in printed or "?***" in printed, printed[-3000:]
        assert any(p.name == "manifest.json" for p in _every_file(sandbox["WORK"]))
    for path in _every_file(sandbox["WORK"], sandbox["TOOLKIT_CACHE_DIR"]):
        assert SECRET.encode() not in path.read_bytes(), path
