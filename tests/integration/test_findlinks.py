"""`invoke index dist`, then real pip against the page: served by `python -m http.server` on
127.0.0.1 (started in dist/) and read as a local file, as the workflow's test job does."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from wheel.wheelfile import WheelFile

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
ODD = "hip_sample-0.1.0 & co #1"  # a build folder whose name needs quoting and escaping


def build_wheel(dest: Path, version: str, requires_python: str | None = None,
                payload: str = "") -> Path:
    """hip_sample-<version>-py3-none-any.whl, written by the `wheel` package (real RECORD)."""
    dest.mkdir(parents=True, exist_ok=True)
    path = dest / f"hip_sample-{version}-py3-none-any.whl"
    di = f"hip_sample-{version}.dist-info"
    meta = f"Metadata-Version: 2.1\nName: hip-sample\nVersion: {version}\n"
    meta += f"Requires-Python: {requires_python}\n" if requires_python else ""
    with WheelFile(path, "w") as wf:
        wf.writestr("hip_sample/__init__.py", f"VERSION = {version!r}\n{payload}")
        wf.writestr(f"{di}/METADATA", meta + "\n")
        wf.writestr(f"{di}/WHEEL", "Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\n"
                                   "Tag: py3-none-any\n")
    return path


def isolated_env() -> dict[str, str]:
    """pip with no configuration of this machine (config files, PIP_* variables)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1",
               PIP_NO_CACHE_DIR="1")
    env.pop("GITHUB_ACTIONS", None)
    return env


def invoke_index(work: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "invoke", "--search-root", str(REPO), "index", *args],
                          cwd=work, capture_output=True, text=True, timeout=120, env=isolated_env())


def pip_download(work: Path, find_links: str, dest: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--no-index", "--find-links", find_links,
         "hip-sample", "-d", str(dest), *extra],
        cwd=work, capture_output=True, text=True, timeout=300, env=isolated_env())


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@contextlib.contextmanager
def http_server(directory: Path) -> Iterator[int]:
    """`python -m http.server PORT --bind 127.0.0.1`, started in ``directory``; its port."""
    for _attempt in range(5):  # the free port may be taken between probe and bind
        port = _free_port()
        proc = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
                                cwd=directory, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            deadline = time.monotonic() + 30
            while proc.poll() is None and time.monotonic() < deadline:
                with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
                    break
                time.sleep(0.05)
            else:
                continue  # exited (port taken) or never listened: try another port
            yield port
            return
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    pytest.fail("python -m http.server did not start")


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """A work folder whose dist/ holds two builds of hip-sample; 0.2.0 needs Python < 3."""
    build_wheel(tmp_path / "dist" / ODD, "0.1.0", requires_python=">=3.8")
    build_wheel(tmp_path / "dist" / "hip_sample-0.2.0-cp312-rocm7.0", "0.2.0", requires_python="<3")
    return tmp_path


def test_invoke_index_then_pip_download_over_http(work: Path) -> None:
    res = invoke_index(work, "dist")
    assert res.returncode == 0, res.stdout + res.stderr
    assert "index.html: 2 wheels (written)" in res.stdout
    got = work / "got"
    with http_server(work / "dist") as port:
        dl = pip_download(work, f"http://127.0.0.1:{port}/index.html", got, "-v")
    assert dl.returncode == 0, dl.stdout + dl.stderr
    # pip took the requirement from the page's data-requires-python, not from the wheel
    assert "requires a different Python" in dl.stdout and "'<3'" in dl.stdout
    (wheel,) = got.iterdir()
    assert wheel.name == "hip_sample-0.1.0-py3-none-any.whl"
    assert wheel.read_bytes() == (work / "dist" / ODD / wheel.name).read_bytes()
    again = invoke_index(work, "dist")
    assert again.returncode == 0 and "(unchanged)" in again.stdout


def test_pip_reads_the_page_as_a_local_file(work: Path) -> None:
    """The workflow's test job: `--find-links dist/index.html`, a relative path."""
    res = subprocess.run([sys.executable, "-m", "toolkit", "index", "dist"], cwd=work,
                         capture_output=True, text=True, timeout=120, env=isolated_env())
    assert res.returncode == 0, res.stderr
    dl = pip_download(work, "dist/index.html", work / "got")
    assert dl.returncode == 0, dl.stdout + dl.stderr
    assert [p.name for p in (work / "got").iterdir()] == ["hip_sample-0.1.0-py3-none-any.whl"]


def test_pip_refuses_a_wheel_that_changed_after_indexing(work: Path) -> None:
    assert invoke_index(work, "dist").returncode == 0
    build_wheel(work / "dist" / ODD, "0.1.0", requires_python=">=3.8", payload="EVIL = 1\n")
    with http_server(work / "dist") as port:
        dl = pip_download(work, f"http://127.0.0.1:{port}/index.html", work / "got")
    assert dl.returncode != 0
    assert "DO NOT MATCH THE HASHES" in dl.stdout + dl.stderr
    assert not (work / "got" / "hip_sample-0.1.0-py3-none-any.whl").exists()


def test_invoke_index_strict_with_a_corrupt_wheel(work: Path) -> None:
    (work / "dist" / "broken").mkdir()
    (work / "dist" / "broken" / "hip_sample-0.3.0-py3-none-any.whl").write_bytes(b"PK\x03\x04junk")
    res = invoke_index(work, "dist", "--strict")
    assert res.returncode == 2
    assert "broken/hip_sample-0.3.0-py3-none-any.whl: not listed, a corrupt wheel" in res.stderr
    assert "Traceback" not in res.stderr and not (work / "dist" / "index.html").exists()
    lenient = invoke_index(work, "dist")
    assert lenient.returncode == 0 and "2 wheels (written)" in lenient.stdout
    assert "0.3.0" not in (work / "dist" / "index.html").read_text()
