"""A demo built in clone A is reproduced bit for bit in clone B.

Clone A: its own cache, its own work folder, an interpreter reached through a manylinux-style
``<tmp>/opt/python/cp311-cp311/bin/python``. Clone B: another cache, another work folder,
another interpreter path, every path of another length. B copies A's manifest, as a
contributor copies CI's, and ``invoke repro`` must answer ``identical: <A's sha256>``.

Both clones hold this checkout's files (committed in A with fixed dates, so the sample's
source commit is the same in both) and run their own toolkit (PYTHONPATH), so the bundled
sample is read from two different folders.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.hipcc]
ROOT = Path(__file__).resolve().parents[2]
BUILD = "hip_sample-0.1.0-cp311-rocm5.2"

if not shutil.which("hipcc"):
    pytest.skip("no hipcc: the demo builds its CPU variant (apt-get install hipcc)",
                allow_module_level=True)
if sys.version_info[:2] != (3, 11):
    pytest.skip("the manylinux-style path is cp311-cp311", allow_module_level=True)

GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
           "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z"}


def git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True,
                          env={**os.environ, **GIT_ENV}).stdout.strip()


def clone_a(dest: Path) -> Path:
    """This checkout's files (tracked and new, as the tests see them), committed."""
    files = git("ls-files", "-co", "--exclude-standard", cwd=ROOT).splitlines()
    for rel in files:
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    git("init", "-q", "-b", "main", cwd=dest)
    git("add", "-A", cwd=dest)
    git("commit", "-q", "-m", "clone", cwd=dest)
    return dest


def interpreter(prefix: Path) -> Path:
    """A venv at ``prefix`` that sees the test run's packages (not its toolkit: each clone
    brings its own through PYTHONPATH)."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(prefix)], check=True)
    site = next((prefix / "lib").glob("python3.*/site-packages"))
    (site / "test-run.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return prefix / "bin" / "python"


def env_for(clone: Path, cache: Path, python: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONHOME")}
    return {**env, "PYTHONPATH": str(clone), "TOOLKIT_CACHE_DIR": str(cache), "CI": "true",
            "PATH": f"{python.parent}:{env['PATH']}"}


def test_a_manifest_from_clone_a_reproduces_identical_in_clone_b(tmp_path: Path) -> None:
    a = clone_a(tmp_path / "a")
    b = tmp_path / "somewhere-else" / "clone-b-with-a-longer-path"
    b.parent.mkdir()
    subprocess.run(["git", "clone", "-q", str(a), str(b)], check=True)
    py_a = interpreter(tmp_path / "opt" / "python" / "cp311-cp311")
    py_b = interpreter(tmp_path / "b-pythons" / "my-laptop-python-3.11" / "venv")
    work_a, work_b = tmp_path / "wa", tmp_path / "work-folder-of-clone-b"
    env_a = env_for(a, tmp_path / "ca", py_a)
    env_b = env_for(b, tmp_path / "cache-of-b" / "rocm-wheel-toolkit", py_b)

    res = subprocess.run([str(py_a), "-m", "nox", "-f", str(a / "noxfile.py"), "-s", "demo",
                          "--", "--workdir", str(work_a)],
                         cwd=a, env=env_a, capture_output=True, text=True, timeout=1200)
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-2000:]
    manifest = json.loads((work_a / "artifacts" / BUILD / "manifest.json").read_text())
    assert manifest["host"]["paths"]["interpreter"] == str(py_a)
    assert manifest["host"]["paths"]["source"] == str(a / "toolkit/examples/hip_extension")
    wheel = Path(manifest["wheel"])
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    assert manifest["wheel_sha256"] == digest
    copied = work_b / "from-ci" / "manifest.json"
    copied.parent.mkdir(parents=True)
    copied.write_text(json.dumps(manifest))

    res = subprocess.run([str(py_b), "-m", "invoke", "-r", str(b), "repro",
                          "from-ci/manifest.json"],
                         cwd=work_b, env=env_b, capture_output=True, text=True, timeout=1200)
    out = res.stdout + res.stderr
    assert res.returncode == 0, out[-6000:]
    assert f"identical: {digest}" in res.stdout
    for role in ("workdir", "cache", "interpreter", "source"):
        assert f"host  {role}: manifest " in res.stdout, res.stdout[-3000:]
    again = json.loads((work_b / "artifacts" / BUILD / "repro-manifest.json").read_text())
    assert again["identity"] == manifest["identity"]
    assert again["host"]["paths"]["interpreter"] == str(py_b)
    assert not (work_b / "dist").exists()  # a reproduction never publishes


def test_no_build_path_reaches_the_wheel_members(tmp_path: Path) -> None:
    """Inflated, no member names the work folder, the cache or the interpreter's prefix."""
    import zipfile

    py = interpreter(tmp_path / "opt" / "python" / "cp311-cp311")
    env = env_for(ROOT, tmp_path / "cache", py)
    res = subprocess.run([str(py), "-m", "nox", "-s", "demo", "--", "--no-smoke", "--workdir",
                          str(tmp_path / "w")],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=1200)
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-2000:]
    (wheel,) = (tmp_path / "w" / "dist" / BUILD).glob("*.whl")
    prefixes = {str(tmp_path), sys.base_prefix, os.path.realpath(sys.base_prefix), str(ROOT)}
    with zipfile.ZipFile(wheel) as zf:
        for info in zf.infolist():
            data = zf.read(info)
            for prefix in prefixes:
                assert prefix.encode() not in data, (info.filename, prefix)
