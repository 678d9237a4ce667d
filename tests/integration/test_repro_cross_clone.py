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
from pathlib import Path

import pytest

from tests.fixtures.clones import clone_a, env_for, interpreter

# clone B compiles from its own paths (a ccache hit on clone A's objects would hide them)
pytestmark = [pytest.mark.integration, pytest.mark.hipcc, pytest.mark.own_compile_paths]
ROOT = Path(__file__).resolve().parents[2]
BUILD = "hip_sample-0.1.0-cp311-rocm5.2"

if not shutil.which("hipcc"):
    pytest.skip("no hipcc: the demo builds its CPU variant (apt-get install hipcc)",
                allow_module_level=True)
if sys.version_info[:2] != (3, 11):
    pytest.skip("the manylinux-style path is cp311-cp311", allow_module_level=True)

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
