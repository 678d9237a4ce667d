"""What the run package records and refuses, each against a hand-written truth: the probe
step's result row (exit 0 in the manifest's steps), the failure signature of a step that
printed something (its own lines, not the error's), the warning a dirty source gives, the
identity's source, a find-links page's count of integrity errors, the folders a manifest may
name, the host's glibc (``os.confstr``, independent of ``platform``), a lock file's state and
path, and pip-tools' preparation with real uv failing against an unreachable index."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.unit.test_findlinks import build_wheel
from tests.unit.test_manifest_build_identity import _base
from toolkit.core.errors import EnvironmentProblem, UsageError
from toolkit.core.reporter import NullReporter
from toolkit.core.steps import CopySources, IndexProbe, ProbeIndexes, Step
from toolkit.data.matrix import load_matrix
from toolkit.plan.layout import Layout
from toolkit.plan.locks import lock_name
from toolkit.plan.model import Options, Plan
from toolkit.run import failure, findlinks, lockfiles, manifest, provisioning, sources
from toolkit.run.context import Run
from toolkit.run.identity import identity
from toolkit.run.manifest_schema import validate

BUILD = "apex-1.8.0-cp311-rocm7.0"


class Heard(NullReporter):
    def __init__(self) -> None:
        self.warnings: list[str] = []

    def warning(self, text: str) -> None:
        self.warnings.append(text)


def a_run(tmp_path: Path, options: Options | None = None, heard: Heard | None = None) -> Run:
    plan = Plan(load_matrix().build(BUILD), ("gfx942",), None, (), options=options)
    return Run(plan, Layout(tmp_path / "work", tmp_path / "cache"), io.StringIO(),
               heard or NullReporter())


def test_the_probe_step_passes_with_exit_0(tmp_path: Path) -> None:
    (tmp_path / "links").mkdir()
    step = Step("probe-indexes", "p", ProbeIndexes((IndexProbe(str(tmp_path / "links"), None,
                                                               "find-links location"),)))
    result = provisioning.probe_indexes(step, a_run(tmp_path))
    assert not isinstance(result, str)
    assert (result.name, result.returncode, result.argv) == ("probe-indexes", 0, [])


# ----------------------------------------------------------------------------- failures
def test_a_step_that_printed_its_error_is_signed_by_its_output(tmp_path: Path) -> None:
    log = tmp_path / "build.log"
    with log.open("w", encoding="utf-8") as fh:
        fh.write("earlier step\n")
        run = a_run(tmp_path)
        run.log = fh
        run.step_start = len("earlier step\n")
        fh.write("$ make\nsrc/a.c:3:1: error: expected ';'\n")
        fh.flush()
        got = failure.record(run, "build-wheel", 5, "step 'build-wheel' failed (exit 2): make")
    assert got == {"step": "build-wheel", "exit_code": 5,
                   "signature": ["src/a.c:3:1: error: expected ';'"], "log": str(log)}


def test_a_step_whose_output_names_no_error_is_signed_by_its_last_lines(tmp_path: Path) -> None:
    log = tmp_path / "build.log"
    with log.open("w", encoding="utf-8") as fh:
        run = a_run(tmp_path)
        run.log = fh
        fh.write("$ make\nbuilding a\nbuilding b\nstopped\n")
        fh.flush()
        got = failure.record(run, "build-wheel", 5, "step 'build-wheel' failed (exit 2): make")
    # the module's fallback: the last three non-empty lines of the step's own output
    assert got["signature"] == ["building a", "building b", "stopped"]


def test_a_step_that_printed_nothing_is_signed_by_its_errors_first_line(tmp_path: Path) -> None:
    log = tmp_path / "build.log"
    with log.open("w", encoding="utf-8") as fh:
        run = a_run(tmp_path)
        run.log = fh
        got = failure.record(run, "publish", 5, "step 'publish': No space left\n  detail")
    assert got["signature"] == ["step 'publish': No space left"]


# ------------------------------------------------------------------------- dirty sources
def git(*args: str, cwd: Path) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e.invalid",
           "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


def test_copying_a_dirty_checkout_warns_that_the_wheel_is_named_dirty(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "setup.py").write_text("# one\n")
    git("init", "-q", cwd=src)
    git("add", "-A", cwd=src)
    git("commit", "-q", "-m", "one", cwd=src)
    (src / "setup.py").write_text("# changed\n")
    heard = Heard()
    run = a_run(tmp_path, Options(allow_dirty=True), heard)
    step = Step("get-sources", "copy", CopySources(str(src), str(tmp_path / "copy")))
    result = sources.copy_sources(step, run)
    assert not isinstance(result, str) and (result.name, result.returncode) == ("get-sources", 0)
    [said] = heard.warnings
    assert said.startswith(f"building uncommitted changes of {src} (--allow-dirty; ")
    assert "setup.py" in said and said.endswith("): the wheel is named +...dirty")
    assert len(run.values["DIFF"]) == 64


def test_the_identity_records_the_source_commit_tree_and_diff(tmp_path: Path) -> None:
    run = a_run(tmp_path)
    got = identity(run.plan, run.layout, {"SHA": "a" * 40, "TREE": "b" * 64}, {})
    assert got["source"] == {"sha": "a" * 40, "tree": "b" * 64}
    got = identity(run.plan, run.layout, {"SHA": "a" * 40, "DIFF": "c" * 64}, {})
    assert got["source"] == {"sha": "a" * 40, "tree": None, "diff": "c" * 64}


# ---------------------------------------------------------------------- find-links pages
def test_a_wheel_failing_two_integrity_rules_says_one_more(tmp_path: Path) -> None:
    wheel = build_wheel(tmp_path / "w")
    with zipfile.ZipFile(wheel) as zf:
        items = [(i, zf.read(i)) for i in zf.infolist()]
    with zipfile.ZipFile(wheel, "w") as zf:  # two members' bytes (same sizes) unlike RECORD
        for info, data in items:
            if info.filename.endswith(("__init__.py", "WHEEL")):
                data = data.replace(b"0.1.0", b"0.1.1").replace(b"tests", b"testz")
            zf.writestr(info, data)
    [skipped] = findlinks.scan(tmp_path / "w").skipped
    assert skipped.path == wheel.name
    assert skipped.reason.startswith("fails check's integrity rules: [record] "
                                     "hip_sample/__init__.py: RECORD says sha256=")
    assert skipped.reason.endswith(" (and 1 more; `python -m toolkit check` lists them)")


# ------------------------------------------------------------------ folders of a manifest
@pytest.mark.parametrize("workdir", ["/w/../etc", "/w/\x01x", "relative", "/w/\x7f"])
def test_a_workdir_with_dotdot_or_a_control_character_is_refused(workdir: str) -> None:
    data = {**_base(), "workdir": workdir}
    with pytest.raises(UsageError) as caught:
        validate(data, "m.json")
    assert "manifest field workdir: " in caught.value.message
    assert caught.value.message.endswith("is not an absolute path without '..' or control "
                                         "characters (a tampered manifest?)")


# ------------------------------------------------------------------------------ the host
def test_the_host_glibc_is_the_c_librarys_own_version() -> None:
    own = os.confstr("CS_GNU_LIBC_VERSION")  # "glibc 2.36"
    assert own is not None and own.startswith("glibc ")
    assert manifest.host_facts()["glibc"] == own.split()[1]


# ------------------------------------------------------------------------------ the locks
def test_each_lock_state_names_its_path(tmp_path: Path) -> None:
    m = load_matrix()
    b = m.build(BUILD)
    layout = Layout(tmp_path / "work", tmp_path / "cache")
    name = lock_name(m, b)
    path = layout.locks() / name
    assert lockfiles.lock_status(m, [b, b], Options(), layout) == [
        lockfiles.LockStatus(name, "missing", str(path))]
    path.parent.mkdir(parents=True)
    path.write_text("torch==2.7.1\n")
    assert lockfiles.lock_status(m, [b], Options(), layout) == [
        lockfiles.LockStatus(name, "no-header", str(path))]
    path.write_text("# toolkit-lock-inputs: " + "f" * 64 + "\ntorch==2.7.1\n")
    assert lockfiles.lock_status(m, [b], Options(), layout) == [
        lockfiles.LockStatus(name, "stale", str(path))]


def test_pip_tools_needs_uv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lockfiles, "find_uv", lambda: None)  # a machine without uv
    with pytest.raises(EnvironmentProblem) as caught:
        lockfiles._tools_env(Layout(tmp_path / "w", tmp_path / "c"), sys.executable, "3.11")
    assert (caught.value.message, caught.value.hint) == (
        "uv is needed to prepare pip-tools", "pip install uv")
    assert caught.value.exit_code == 4


def test_pip_tools_that_cannot_be_installed_names_the_uv_command(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from importlib.metadata import version

    from toolkit.env.interpreters import find_uv

    uv = find_uv()
    if uv is None:
        pytest.skip("no uv")
    monkeypatch.setenv("UV_DEFAULT_INDEX", "http://127.0.0.1:9/simple")
    monkeypatch.setenv("UV_HTTP_RETRIES", "0")
    monkeypatch.setenv("UV_NO_CACHE", "1")
    monkeypatch.delenv("UV_INDEX_URL", raising=False)
    layout = Layout(tmp_path / "w", tmp_path / "c")
    with pytest.raises(EnvironmentProblem) as caught:
        lockfiles._tools_env(layout, sys.executable, "3.11")
    pt = version("pip-tools")
    env = tmp_path / "c" / "tools" / f"pip-tools-{pt}-py3.11"
    assert caught.value.message.startswith(
        f"cannot prepare pip-tools for Python 3.11: {uv} pip install -q --python "
        f"{env}/bin/python pip-tools=={pt} pip: ")
    assert (env / "bin" / "python").exists()  # the venv came first, and was made


@pytest.mark.parametrize("where", ["top", "host"])
def test_an_environment_folder_with_dotdot_is_refused_where_it_is_recorded(
        tmp_path: Path, where: str) -> None:
    import json

    build = {"id": "apex-1.8.0-cp312-rocm7.0", "package": "apex", "version": "1.8.0",
             "python": "3.12", "rocm": "7.0"}
    data: dict[str, object] = {"build": build}
    if where == "top":
        data["env_dir"] = "/c/envs/../../etc"
    else:  # a running manifest records the folders under host
        data["host"] = {"env_dir": "/c/envs/../../etc", "workdir": None}
    path = tmp_path / "m.json"
    path.write_text(json.dumps(data))
    with pytest.raises(UsageError) as caught:
        manifest.read(path)
    field = "env_dir" if where == "top" else "host.env_dir"
    assert caught.value.message == (
        f"{path}: manifest field {field}: '/c/envs/../../etc' is not an absolute path without "
        "'..' or control characters (a tampered manifest?)")
    data["env_dir" if where == "top" else "host"] = (
        None if where == "top" else {"env_dir": None})  # none recorded: nothing to refuse
    path.write_text(json.dumps(data))
    assert manifest.read(path)["build"] == build


@pytest.mark.parametrize("root, named", [("/opt/rocm-7.0.2", True), ("/usr", False),
                                         ("/", False)])
def test_a_system_rocm_root_is_a_host_path_unless_it_is_the_system_itself(
        tmp_path: Path, root: str, named: bool) -> None:
    from toolkit.core.steps import UseSystemRocm
    from toolkit.run.identity import host_paths

    step = Step("use-system-rocm", "r", UseSystemRocm(root, "7.0"))
    plan = Plan(load_matrix().build(BUILD), ("gfx942",), None, (step,))
    layout = Layout(tmp_path / "work", tmp_path / "cache")
    want = {"workdir": str(tmp_path / "work"), "cache": str(tmp_path / "cache")}
    assert host_paths(plan, layout) == ({**want, "rocm_root": root} if named else want)
