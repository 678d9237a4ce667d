"""Reproducing a CI failure on another machine (issue 27).

Clone A plays CI, clone B the contributor's laptop: each has its own toolkit checkout, its
own interpreter path, its own ``TOOLKIT_CACHE_DIR`` and its own work folder; B gets A's
manifest as a contributor downloads CI's, and its own copy of the project.

- a compile error in A: ``nox --report`` lists the session as failed, the manifest's
  ``failure.signature`` holds the compiler's own error line (gcc run by the test is the
  judge), and B's ``invoke repro`` says ``reproduced:`` (exit 0);
- a failure that depends on A's environment: B says ``not reproduced:`` (exit 1);
- a success: B rebuilds ``identical: <sha256>`` under three ``PYTHONHASHSEED`` values (the
  project has several build requirements, which pypa/build hands over as a set).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.fixtures.clones import clone_a, clone_b, env_for, interpreter

# machine B compiles from its own paths (no ccache hit on machine A's objects)
pytestmark = [pytest.mark.integration, pytest.mark.own_compile_paths]

PY = f"{sys.version_info.major}.{sys.version_info.minor}"
TAG = f"cp{sys.version_info.major}{sys.version_info.minor}"

SETUP = '''\
import os
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


class Build(build_ext):
    def run(self):
        if os.environ.get("CFAIL_ONLY_ON_CI"):
            raise SystemExit("cfail: CFAIL_ONLY_ON_CI is set on this machine")
        super().run()


setup(name="cfail", version="0.1.0", packages=["cfail"], cmdclass={"build_ext": Build},
      ext_modules=[Extension("cfail._native", sources=["native.c"])])
'''
PYPROJECT = '''\
[build-system]
requires = ["setuptools>=64", "wheel", "packaging"]
build-backend = "setuptools.build_meta"
'''
GOOD_C = '''\
#include <Python.h>
static PyObject *answer(PyObject *self, PyObject *args) { return PyLong_FromLong(42); }
static PyMethodDef methods[] = {{"answer", answer, METH_NOARGS, ""}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef mod = {PyModuleDef_HEAD_INIT, "_native", NULL, -1, methods};
PyMODINIT_FUNC PyInit__native(void) { return PyModule_Create(&mod); }
'''
BAD_C = GOOD_C.replace("PyLong_FromLong(42); }", "PyLong_FromLong(42) }")


def project(dest: Path, source: str) -> Path:
    (dest / "cfail").mkdir(parents=True)
    (dest / "cfail" / "__init__.py").write_text("")
    (dest / "setup.py").write_text(SETUP)
    (dest / "pyproject.toml").write_text(PYPROJECT)
    (dest / "native.c").write_text(source)
    return dest


class Machines:
    """Clone A (CI) and clone B (elsewhere), each with its own interpreter, cache, folder."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.a = clone_a(tmp / "a")
        self.b = clone_b(self.a, tmp / "elsewhere" / "clone-b-with-a-longer-path")
        self.py_a = interpreter(tmp / "opt" / "python" / TAG)
        self.py_b = interpreter(tmp / "b-pythons" / "laptop-python" / "venv")
        self.env_a = env_for(self.a, tmp / "cache-a", self.py_a)
        self.env_b = env_for(self.b, tmp / "cache-of-b" / "toolkit", self.py_b)
        self.work_a = tmp / "wa"
        self.work_b = tmp / "work-folder-of-b"
        self.work_b.mkdir()

    def ci(self, source: Path, *, extra_env: dict[str, str] | None = None
           ) -> subprocess.CompletedProcess[str]:
        """``nox --report r.json -s demo -- --source P --cpu`` in clone A."""
        return subprocess.run(
            [str(self.py_a), "-m", "nox", "-f", str(self.a / "noxfile.py"), "--report",
             str(self.tmp / "r.json"), "-s", "demo", "--", "--source", str(source), "--cpu",
             "--workdir", str(self.work_a)],
            cwd=self.a, env={**self.env_a, **(extra_env or {})}, capture_output=True,
            text=True, timeout=900)

    def manifest_a(self, build_id: str) -> dict[str, object]:
        path = self.work_a / "artifacts" / build_id / "manifest.json"
        return json.loads(path.read_text())  # type: ignore[no-any-return]

    def copy_to_b(self, build_id: str) -> str:
        """A's manifest where a contributor puts CI's: ``from-ci/manifest.json`` in B."""
        copied = self.work_b / "from-ci" / "manifest.json"
        copied.parent.mkdir(exist_ok=True)
        copied.write_text(json.dumps(self.manifest_a(build_id)))
        return "from-ci/manifest.json"

    def repro_b(self, manifest: str, source: Path, *extra: str, seed: str = "0"
                ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.py_b), "-m", "invoke", "-r", str(self.b), "repro", manifest, "--source",
             str(source), *extra],
            cwd=self.work_b, env={**self.env_b, "PYTHONHASHSEED": seed}, capture_output=True,
            text=True, timeout=900)


BUILD = f"cfail-0.1.0-{TAG}-cpu"


def gcc_errors(source: Path) -> list[str]:
    """What gcc itself says of the project's C file: the independent truth."""
    include = sysconfig.get_paths()["include"]
    res = subprocess.run(["gcc", "-fsyntax-only", f"-I{include}", "native.c"], cwd=source,
                         capture_output=True, text=True)
    assert res.returncode != 0
    # gcc quotes with ‘’ in a UTF-8 locale, '' in C: the signature keeps the plain ones
    return [ln.replace("\u2018", "'").replace("\u2019", "'") for ln in res.stderr.splitlines()
            if ": error: " in ln]


@pytest.mark.skipif(not shutil.which("gcc"), reason="no gcc")
def test_a_compile_error_in_ci_is_reproduced_on_another_machine(tmp_path: Path) -> None:
    m = Machines(tmp_path)
    src_a = project(tmp_path / "ci-checkout" / "cfail", BAD_C)
    res = m.ci(src_a)
    assert res.returncode != 0, res.stdout[-3000:]
    report = json.loads((tmp_path / "r.json").read_text())
    (demo,) = [s for s in report["sessions"] if s["name"] == "demo"]
    assert demo["result"] == "aborted", demo  # nox's word for a session.error failure
    summary = subprocess.run([str(m.py_a), "-m", "toolkit", "report", "--nox-report",
                              str(tmp_path / "r.json"), "--json"], cwd=m.a, env=m.env_a,
                             capture_output=True, text=True, timeout=120)
    (row,) = json.loads(summary.stdout)["rows"]
    assert row["outcome"] == "failed" and row["exit_code"] == 5, row

    manifest = m.manifest_a(BUILD)
    failure = manifest["failure"]
    assert isinstance(failure, dict) and failure["step"] == "build-wheel"
    assert failure["exit_code"] == 5 and manifest["outcome"] == "failed"
    expected = gcc_errors(src_a)
    assert expected and expected[0].startswith("native.c:2:")
    assert expected[0] in failure["signature"], failure
    assert not any(str(tmp_path) in line for line in failure["signature"])

    src_b = project(tmp_path / "laptop" / "src" / "cfail", BAD_C)
    res = m.repro_b(m.copy_to_b(BUILD), src_b)
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-2000:]
    assert "reproduced: build-wheel failed here as in CI (exit 5)" in res.stdout
    verdict = res.stdout.split("reproduced: build-wheel", 1)[1]
    assert expected[0] in verdict
    again = json.loads((m.work_b / "artifacts" / BUILD / "repro-manifest.json").read_text())
    assert again["outcome"] == "failed" and again["failure"]["step"] == "build-wheel"
    assert not (m.work_b / "dist").exists()


def test_a_failure_of_ci_s_environment_is_not_reproduced(tmp_path: Path) -> None:
    m = Machines(tmp_path)
    src_a = project(tmp_path / "ci-checkout" / "cfail", GOOD_C)
    res = m.ci(src_a, extra_env={"CFAIL_ONLY_ON_CI": "1"})
    assert res.returncode != 0, res.stdout[-3000:]
    failure = m.manifest_a(BUILD)["failure"]
    assert isinstance(failure, dict) and failure["step"] == "build-wheel"
    assert "cfail: CFAIL_ONLY_ON_CI is set on this machine" in failure["signature"], failure

    src_b = project(tmp_path / "laptop" / "cfail", GOOD_C)
    copied = m.copy_to_b(BUILD)
    plan = m.repro_b(copied, src_b, "--dry-run")  # the steps up to the failed one, no more
    assert plan.returncode == 0, plan.stdout[-3000:] + plan.stderr[-2000:]
    assert "build-wheel" in plan.stdout and "name-wheel" not in plan.stdout
    res = m.repro_b(copied, src_b)
    assert res.returncode == 1, res.stdout[-4000:] + res.stderr[-2000:]
    assert "not reproduced: build-wheel passed here" in res.stdout
    assert res.stderr.strip().splitlines()[-1].startswith(
        "error: not reproduced: build-wheel passed here")
    assert "Traceback" not in res.stderr


def test_a_success_is_reproduced_identical_under_any_hash_seed(tmp_path: Path) -> None:
    m = Machines(tmp_path)
    src_a = project(tmp_path / "ci-checkout" / "cfail", GOOD_C)
    res = m.ci(src_a)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-2000:]
    manifest = m.manifest_a(BUILD)
    wheel = Path(str(manifest["wheel"]))
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    assert manifest["wheel_sha256"] == digest and manifest["failure"] is None

    src_b = project(tmp_path / "laptop" / "cfail", GOOD_C)
    copied = m.copy_to_b(BUILD)
    for seed in ("1", "2", "3"):
        res = m.repro_b(copied, src_b, seed=seed)
        assert res.returncode == 0, (seed, res.stdout[-4000:] + res.stderr[-2000:])
        assert f"identical: {digest}" in res.stdout, seed
        # the smoke step ran against the repro's own manifest, in B's folder
        assert "smoke" in res.stdout and "passed over" not in res.stdout
