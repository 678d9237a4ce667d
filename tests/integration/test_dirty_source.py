"""Issue 29, honest names, end to end through ``python -m toolkit demo --source``: a real git
checkout of a tiny C extension is built clean, then with an uncommitted change (refused,
exit 12; then ``--allow-dirty``): the dirty wheel is named ``+...dirty`` beside the clean one,
which stays byte for byte with its manifest (kept as ``<wheel>.manifest.json``), and the
dirty build's manifest records the sha256 git's own diff gives. repro
of that manifest on the restored (clean) tree says so in one line instead of building. A
work folder inside this work folder's ``dist/`` is refused (exit 2)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration
BUILD_ID = f"tiny_dirty-0.3.0-cp{sys.version_info.major}{sys.version_info.minor}-cpu"
SETUP = """from setuptools import Extension, setup

setup(name="tiny-dirty", version="0.3.0", ext_modules=[Extension("tiny_dirty", ["tiny.c"])])
"""
SOURCE = """#include <Python.h>
static PyObject *answer(PyObject *self, PyObject *args) { return PyLong_FromLong(42); }
static PyMethodDef M[] = {{"answer", answer, METH_NOARGS, ""}, {0}};
static struct PyModuleDef D = {PyModuleDef_HEAD_INIT, "tiny_dirty", 0, -1, M};
PyMODINIT_FUNC PyInit_tiny_dirty(void) { return PyModule_Create(&D); }
"""
GIT = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
       "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}


def git(repo: Path, *args: str) -> bytes:
    return subprocess.run(["git", *args], cwd=repo, env={**os.environ, **GIT},
                          capture_output=True, check=True).stdout


def test_a_dirty_checkout_is_refused_or_named_dirty_and_repro_tells(tmp_path: Path) -> None:
    repo, work = tmp_path / "tiny", tmp_path / "work"
    repo.mkdir()
    (repo / "setup.py").write_text(SETUP)
    (repo / "tiny.c").write_text(SOURCE)
    (repo / "pyproject.toml").write_text('[build-system]\nrequires = ["setuptools"]\n'
                                         'build-backend = "setuptools.build_meta"\n')
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "one")
    sha8 = git(repo, "rev-parse", "HEAD").decode()[:8]
    env = {**os.environ, "TOOLKIT_CACHE_DIR": str(tmp_path / "cache")}

    def demo(*extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "toolkit", "demo", "--cpu", "--no-smoke",
                               "--source", str(repo), "--workdir", str(work), *extra],
                              env=env, capture_output=True, text=True, timeout=600)

    clean_run = demo()
    assert clean_run.returncode == 0, clean_run.stdout[-3000:] + clean_run.stderr[-2000:]
    dist = work / "dist" / BUILD_ID
    clean = dist / f"tiny_dirty-0.3.0+cpugit{sha8}-cp{sys.version_info.major}" \
        f"{sys.version_info.minor}-cp{sys.version_info.major}{sys.version_info.minor}" \
        "-linux_x86_64.whl"
    assert [p.name for p in dist.iterdir()] == [clean.name]
    clean_bytes = clean.read_bytes()
    clean_manifest = (work / "artifacts" / BUILD_ID / "manifest.json").read_bytes()

    (repo / "tiny.c").write_text(SOURCE.replace("42", "43"))
    refused = demo()
    assert refused.returncode == 12, refused.stdout[-3000:] + refused.stderr
    assert refused.stderr.strip().splitlines() == [
        f"error: the source {repo} has uncommitted changes (1 file: tiny.c); its wheel would "
        "carry the clean commit's name (next: commit or stash them, or pass --allow-dirty to "
        "build it named +...dirty)"]
    assert [p.name for p in dist.iterdir()] == [clean.name]

    allowed = demo("--allow-dirty")
    assert allowed.returncode == 0, allowed.stdout[-3000:] + allowed.stderr[-2000:]
    dirty = clean.with_name(clean.name.replace(f"git{sha8}-", f"git{sha8}.dirty-"))
    assert sorted(p.name for p in dist.iterdir()) == sorted([clean.name, dirty.name])
    assert clean.read_bytes() == clean_bytes
    manifest = work / "artifacts" / BUILD_ID / "manifest.json"
    data = json.loads(manifest.read_text())
    diff = hashlib.sha256(git(repo, "diff", "HEAD", "--binary", "--full-index",
                              "--no-renames")).hexdigest()
    assert data["source"]["diff"] == diff == data["identity"]["source"]["diff"]
    assert data["wheel"] == str(dirty)
    kept = manifest.with_name(clean.name + ".manifest.json")  # the clean wheel's, as it was
    assert kept.read_bytes() == clean_manifest

    git(repo, "checkout", "--", ".")  # the clean tree again: a dirty build is not it
    repro = subprocess.run([sys.executable, "-m", "toolkit", "repro", str(manifest), "--dry-run",
                            "--workdir", str(work)], env=env, capture_output=True, text=True,
                           timeout=600)
    assert repro.returncode == 2, repro.stdout + repro.stderr
    lines = repro.stderr.strip().splitlines()
    assert len(lines) == 1 and "identical" not in repro.stdout
    assert lines[0].startswith(f"error: the source {repo} differs from the recorded one (the "
                               f"manifest records a build of uncommitted changes (diff "
                               f"{diff[:12]}); this checkout has none; ")
    again = subprocess.run([sys.executable, "-m", "toolkit", "repro", str(kept), "--dry-run",
                            "--workdir", str(work)], env=env, capture_output=True, text=True,
                           timeout=600)
    assert again.returncode == 0, again.stdout + again.stderr  # the clean build is repro-able

    nested = subprocess.run([sys.executable, "-m", "toolkit", "demo", "--cpu", "--dry-run",
                             "--workdir", str(dist / "inner")], env=env, capture_output=True,
                            text=True, timeout=600)
    assert nested.returncode == 2, nested.stderr
    assert f"it lies inside {work / 'dist'}/, the dist/ of the work folder {work};" \
        in nested.stderr
