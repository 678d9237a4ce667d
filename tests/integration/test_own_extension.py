"""Your own extension through the demo's flow: ``nox -s demo -- --source PATH``.

Two fixture projects written unlike the bundled sample: ``tests/projects/own_flat`` (flat
layout, metadata in setup() only, the whole extension compiled and linked by hipcc for every
PYTORCH_ROCM_ARCH target) and ``tests/projects/own_pyproject`` (src layout, metadata in
pyproject.toml's [project] only). Each is copied outside any git checkout (its wheel is then
named by its tree hash), built, checked with its targets, smoke-tested, published and
reproduced identical. Bad ``--source`` input is one line with exit 2; a failing project build
is exit 5 naming its log.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest

from tests.fixtures.native import code_objects
from tests.fixtures.nox_runs import failure, toolkit_code

pytestmark = [pytest.mark.integration, pytest.mark.hipcc]
ROOT = Path(__file__).resolve().parents[2]
PROJECTS = ROOT / "tests" / "projects"
TARGETS = ("gfx90a", "gfx908")

if not shutil.which("hipcc"):
    pytest.skip("no hipcc: the fixture projects compile HIP code (apt-get install hipcc)",
                allow_module_level=True)

# what each fixture declares (read by hand from its setup.py / pyproject.toml), and the
# modules its wheel installs (its layout)
FIXTURES = {
    "own_flat": ("flat-ext", "flat_ext", "0.2.0", {"flatext", "flatext_util"}),
    "own_pyproject": ("PyProj.Ext", "pyproj_ext", "1.4.0rc1", {"pyprojext"}),
}


def run(argv: list[str], env: dict[str, str], cwd: Path = ROOT,
        timeout: float = 1200) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    tmp = tmp_path_factory.mktemp("own")
    return {**os.environ, "TOOLKIT_CACHE_DIR": str(tmp / "cache"), "CI": "true"}


@pytest.mark.parametrize("fixture", sorted(FIXTURES))
def test_own_extension_built_checked_smoked_reproduced(fixture: str, env: dict[str, str],
                                                       tmp_path: Path) -> None:
    dist, norm, version, modules = FIXTURES[fixture]
    source = tmp_path / "checkout" / fixture
    shutil.copytree(PROJECTS / fixture, source)  # outside any git checkout
    work = tmp_path / "work"
    res = run([sys.executable, "-m", "nox", "-s", "demo", "--", "--source", str(source),
               "--workdir", str(work)], env)
    out = res.stdout + res.stderr
    assert res.returncode == 0, out[-6000:]
    build_id = f"{norm}-{version}-cp311-rocm5.2"
    m: dict[str, Any] = json.loads((work / "artifacts" / build_id / "manifest.json").read_text())
    assert m["outcome"] == "ok" and m["recipe"] == "generic" and m["dist"] == dist
    assert m["source"]["sha"] == "0" * 40  # no commit: the tree names the source
    tree8 = m["source"]["tree"][:8]
    (wheel,) = (work / "dist" / build_id).glob("*.whl")
    assert wheel.name == f"{norm}-{version}+rocm5.2git{tree8}-cp311-cp311-linux_x86_64.whl"
    # GPU code for every target, read with an independent bundle reader
    with zipfile.ZipFile(wheel) as zf:
        libs = [n for n in zf.namelist() if n.endswith(".so")]
        assert len(libs) == 1
        lib = tmp_path / "lib.so"
        lib.write_bytes(zf.read(libs[0]))
        top = {n.split("/")[0].split(".")[0] for n in zf.namelist() if ".dist-info/" not in n}
    assert sorted(t.split(":")[0] for t in code_objects(lib)) == sorted(TARGETS)
    assert top == modules
    # checked with its targets, smoke imported each installed module
    steps = {s["name"]: s for s in m["steps"]}
    assert steps["check"]["returncode"] == 0 and steps["smoke"]["returncode"] == 0
    log = (work / "artifacts" / build_id / "build.log").read_text()
    assert "--gfx gfx90a,gfx908" in log
    junit = tmp_path / "smoke.xml"
    res = run([sys.executable, "-m", "toolkit", "smoke", "--build", build_id, "--workdir",
               str(work), "--junit", str(junit)], env)
    assert res.returncode == 0, (res.stdout + res.stderr)[-4000:]
    cases = ElementTree.parse(junit).getroot().iter("testcase")
    imported = {re.sub(r".*-", "", c.get("name", "")[:-1]) for c in cases
                if c.get("name", "").startswith("test_import[") and not list(c)}
    assert imported == modules
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    res = run([sys.executable, "-m", "invoke", "-r", str(ROOT), "repro",
               f"artifacts/{build_id}/manifest.json"], env, cwd=work)
    assert res.returncode == 0, (res.stdout + res.stderr)[-6000:]
    assert f"identical: {digest}" in res.stdout


def test_a_changed_tree_is_refused_then_differs_with_force(env: dict[str, str],
                                                           tmp_path: Path) -> None:
    source = tmp_path / "own_flat"
    shutil.copytree(PROJECTS / "own_flat", source)
    work = tmp_path / "work"
    res = run([sys.executable, "-m", "toolkit", "demo", "--source", str(source), "--workdir",
               str(work), "--no-smoke", "--gfx", "gfx90a"], env)
    assert res.returncode == 0, (res.stdout + res.stderr)[-4000:]
    (source / "flatext_util.py").write_text("# changed\n")
    manifest = "artifacts/flat_ext-0.2.0-cp311-rocm5.2/manifest.json"
    res = run([sys.executable, "-m", "toolkit", "repro", manifest], env, cwd=work)
    assert res.returncode == 2 and "differs from the recorded one (tree " in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and "Traceback" not in res.stderr


def test_a_failing_project_build_is_exit_5_naming_its_log(env: dict[str, str],
                                                          tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    shutil.copytree(PROJECTS / "own_flat", broken)
    (broken / "kern.cpp").write_text("this is not C++\n")
    work = tmp_path / "work"
    res = run([sys.executable, "-m", "nox", "-s", "demo", "--", "--source", str(broken),
               "--workdir", str(work), "--no-smoke"], env)
    assert toolkit_code(res.returncode, res.stderr) == 5, (res.stdout + res.stderr)[-3000:]
    log = work / "artifacts" / "flat_ext-0.2.0-cp311-rocm5.2" / "build.log"
    assert f"log: {log}" in res.stdout + res.stderr and log.is_file()
    assert "Traceback" not in res.stderr


def test_unreadable_metadata_is_exit_5_naming_its_log(env: dict[str, str],
                                                      tmp_path: Path) -> None:
    broken = tmp_path / "nometa"
    broken.mkdir()
    (broken / "setup.py").write_text("raise SystemExit('no metadata here')\n")
    res = run([sys.executable, "-m", "toolkit", "demo", "--source", str(broken), "--workdir",
               str(tmp_path / "w")], env)
    assert res.returncode == 5
    assert f"its log: {tmp_path / 'w' / 'build' / 'source-metadata.log'}" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("entry", ["nox", "toolkit", "session"])
@pytest.mark.parametrize("case", ["missing", "file", "not-a-project"])
def test_bad_source_is_one_line_exit_2(entry: str, case: str, env: dict[str, str],
                                       tmp_path: Path) -> None:
    path = tmp_path / "p"
    if case == "file":
        path.write_text("x")
    elif case == "not-a-project":
        path.mkdir()
        (path / "README").write_text("x")
    argv = {"nox": [sys.executable, "-m", "nox", "-s", "demo", "--"],
            "toolkit": [sys.executable, "-m", "toolkit", "demo"],
            "session": [sys.executable, "-m", "nox", "-s", "build-3.12-rocm7.0", "--",
                        "--dry-run"]}[entry]
    res = run([*argv, "--source", str(path), "--workdir", str(tmp_path / "w")], env,
              timeout=300)
    errors = [ln for ln in res.stderr.splitlines() if ln.startswith("error:")]
    if entry == "toolkit":
        assert res.returncode == 2, res.stdout[-2000:] + res.stderr
    else:  # nox: the session's last line says it, with the toolkit's exit code
        assert errors == [], res.stderr
        message, code = failure(res.stderr)
        assert code == 2 and res.returncode == 1, res.stdout[-2000:] + res.stderr
        errors = [f"error: {message}"]
    assert len(errors) == 1 and f"--source {path}:" in errors[0], res.stderr
    assert "Traceback" not in res.stderr
    expected = {"missing": "no such folder", "file": "not a folder",
                "not-a-project": "not a Python project"}[case]
    assert expected in errors[0]


def test_session_plans_only_the_project_in_the_pairs_environment(env: dict[str, str],
                                                                 tmp_path: Path) -> None:
    res = run([sys.executable, "-m", "nox", "-s", "build-3.12-rocm7.0", "--", "--dry-run",
               "--json", "--source", str(PROJECTS / "own_pyproject"), "--workdir",
               str(tmp_path)], env, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    plans = json.loads(res.stdout[res.stdout.index("["):])
    assert [p["build"]["id"] for p in plans] == ["pyproj_ext-1.4.0rc1-cp312-rocm7.0"]
    steps = {s["name"]: s for s in plans[0]["steps"]}
    assert "install-torch" in steps and "install-rocm-sdk" in steps  # the pair's environment
    assert "/envs/3.12-rocm7.0-torch" in steps["build-wheel"]["argv"][0]
    assert steps["install-requirements"]["argv"][-1] == "setuptools>=64"  # its backend's ask


def test_demo_help_is_the_same_from_nox_and_python_m_toolkit(env: dict[str, str]) -> None:
    def options(text: str) -> list[str]:
        body = text[text.index("options:"):]
        return [ln.strip() for ln in body.splitlines() if ln.strip()]

    a = run([sys.executable, "-m", "toolkit", "demo", "--help"], env, timeout=120)
    b = run([sys.executable, "-m", "nox", "-s", "demo", "--", "--help"], env, timeout=120)
    assert a.returncode == 0 and b.returncode == 0, a.stderr + b.stderr
    assert options(a.stdout) == options(b.stdout)
    for flag in ("--source PATH", "--gfx", "--cpu", "--workdir", "--no-smoke", "--dry-run",
                 "--rebuild"):
        assert flag in a.stdout


@pytest.mark.parametrize("entry", ["invoke", "toolkit"])
def test_repro_bad_input_is_one_line_exit_2(entry: str, env: dict[str, str],
                                            tmp_path: Path) -> None:
    argv = {"invoke": [sys.executable, "-m", "invoke", "-r", str(ROOT), "repro"],
            "toolkit": [sys.executable, "-m", "toolkit", "repro"]}[entry]
    (tmp_path / "bad.json").write_text('{"build": {"id": "x", "package": "p", "version": "1"}}')
    for manifest, needle in ((tmp_path / "nope.json", "no manifest at"),
                             (tmp_path / "bad.json", "manifest field")):
        res = run([*argv, str(manifest)], env, cwd=tmp_path, timeout=300)
        assert res.returncode == 2, res.stdout + res.stderr
        lines = res.stderr.strip().splitlines()
        assert len(lines) == 1 and needle in lines[0] and "Traceback" not in res.stderr


def test_an_sdist_is_built_like_a_folder_named_by_its_tree(env: dict[str, str],
                                                           tmp_path: Path) -> None:
    """``--source NAME-VERSION.tar.gz`` (made by ``python -m build --sdist``): unpacked into
    the work folder and built; the work folder sits inside a git checkout with a commit, yet
    the wheel is named by the unpacked tree, as for any folder outside git."""
    src = tmp_path / "src"
    shutil.copytree(PROJECTS / "own_pyproject", src)
    # setuptools' sdist holds the .hip sources only when MANIFEST.in names them
    (src / "MANIFEST.in").write_text("include src/pyprojext/*.hip\n")
    res = run([sys.executable, "-m", "build", "--sdist", "--no-isolation", "--outdir",
               str(tmp_path / "sdist"), str(src)], env)
    assert res.returncode == 0, res.stderr[-3000:]
    (archive,) = (tmp_path / "sdist").glob("*.tar.gz")
    repo = tmp_path / "repo"
    repo.mkdir()
    git_env = {**env, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
               "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    for argv in (["git", "init", "-q"], ["git", "commit", "-q", "--allow-empty", "-m", "x"]):
        subprocess.run(argv, cwd=repo, env=git_env, check=True)
    (repo / ".gitignore").write_text("work/\n")  # the work folder is no change of the checkout
    work = repo / "work"
    res = run([sys.executable, "-m", "toolkit", "demo", "--source", str(archive), "--workdir",
               str(work), "--no-smoke", "--gfx", "gfx90a"], env)
    assert res.returncode == 0, (res.stdout + res.stderr)[-6000:]
    build_id = "pyproj_ext-1.4.0rc1-cp311-rocm5.2"
    m: dict[str, Any] = json.loads((work / "artifacts" / build_id / "manifest.json").read_text())
    assert m["outcome"] == "ok" and m["dist"] == "PyProj.Ext"
    assert m["source"]["sha"] == "0" * 40  # not the enclosing checkout's commit
    assert Path(m["source"]["path"]).is_relative_to(work / "build" / "sdist")
    (wheel,) = (work / "dist" / build_id).glob("*.whl")
    tree8 = m["source"]["tree"][:8]
    assert wheel.name == f"pyproj_ext-1.4.0rc1+rocm5.2git{tree8}-cp311-cp311-linux_x86_64.whl"
    with zipfile.ZipFile(wheel) as zf:
        libs = [n for n in zf.namelist() if n.endswith(".so")]
        lib = tmp_path / "lib.so"
        lib.write_bytes(zf.read(libs[0]))
    assert [t.split(":")[0] for t in code_objects(lib)] == ["gfx90a"]


def test_a_cpu_only_project_failing_the_gpu_check_is_told_of_cpu(env: dict[str, str],
                                                                tmp_path: Path) -> None:
    """A project with a plain C extension, built where hipcc is: the GPU-target check fails
    (exit 1) and its hint names ``--cpu``; with ``--cpu``, as the hint says, it builds."""
    proj = tmp_path / "cpu"
    (proj / "cpuext").mkdir(parents=True)
    (proj / "cpuext" / "__init__.py").write_text("")
    (proj / "native.c").write_text(
        "#include <Python.h>\n"
        "static struct PyModuleDef m = {PyModuleDef_HEAD_INIT, \"_native\", NULL, -1, NULL};\n"
        "PyMODINIT_FUNC PyInit__native(void) { return PyModule_Create(&m); }\n")
    (proj / "setup.py").write_text(
        "from setuptools import Extension, setup\n"
        "setup(name='cpu-ext', version='0.1.0', packages=['cpuext'],\n"
        "      ext_modules=[Extension('cpuext._native', ['native.c'])])\n")
    base = [sys.executable, "-m", "toolkit", "demo", "--source", str(proj), "--no-smoke"]
    res = run([*base, "--workdir", str(tmp_path / "w1"), "--gfx", "gfx90a"], env)
    out = res.stdout + res.stderr
    assert res.returncode == 1, out[-4000:]
    assert "[gpu-targets] no GPU code for gfx90a" in out
    assert "(next: a CPU-only project carries no GPU code: --cpu builds" in out
    res = run([*base, "--workdir", str(tmp_path / "w2"), "--cpu"], env)
    assert res.returncode == 0, (res.stdout + res.stderr)[-4000:]
    assert "--cpu" not in res.stderr
