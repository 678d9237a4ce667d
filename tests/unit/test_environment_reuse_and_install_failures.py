"""Step handlers judged against the real tools they run: check-env (the stamp digest an
environment is reused by, its interpreter probed for real), install-requirements (real ``uv``
failing against a real local index: exit 11 naming uv's index, exit 8 for a refused one, any
other failure exit 5), the interpreter's link command (real interpreters, and commands that
are none), and a gitlink read from a real repository without commits.

Truths: the README's exit codes (4 environment, 5 step failed, 8 unreachable, 11 build
requirements unavailable), the stamp's digest as ``toolkit.env.venvs`` documents it (sha256
of the JSON of format, toolkit version, interpreter, lock sha256 and the steps), computed
here by hand, and ``sysconfig`` of the interpreter asked.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from toolkit import __version__
from toolkit.core.command import Command
from toolkit.core.errors import (
    BuildRequirementsUnavailable,
    CommandStepFailed,
    EnvironmentProblem,
    SourceUnreachable,
)
from toolkit.core.steps import CheckEnv, CreateEnv, Step
from toolkit.env import venvs
from toolkit.plan.layout import Layout
from toolkit.plan.model import Plan
from toolkit.plan.recipes import load_matrix
from toolkit.run import building, provisioning, sources
from toolkit.run.context import Run

BUILD = "apex-1.8.0-cp311-rocm7.0"
DEFINITION = "d" * 64


@pytest.fixture
def run(tmp_path: Path) -> Run:
    plan = Plan(load_matrix().build(BUILD), ("gfx942",), None, ())
    return Run(plan, Layout(tmp_path / "work", tmp_path / "cache"), io.StringIO())


def by_hand(interpreter: str, lock: str | None) -> str:
    doc = {"format": 1, "toolkit": __version__, "interpreter": interpreter,
           "lock": hashlib.sha256(lock.encode()).hexdigest() if lock is not None else None,
           "steps": [["definition", [DEFINITION], [], []]]}
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()


def check_env(run: Run, env_dir: Path, lock: str | None = None) -> None:
    step = Step("check-env", "reuse?", CheckEnv(str(env_dir), "3.11", sys.executable,
                                                DEFINITION, lock))
    result = provisioning.check_env(step, run)
    assert not isinstance(result, str) and result.returncode == 0


def ready_env(env_dir: Path, digest: str, values: dict[str, str]) -> None:
    (env_dir / "bin").mkdir(parents=True)
    os.symlink(sys.executable, env_dir / "bin" / "python")
    venvs.mark_ready(env_dir, digest, values=values, described={})


# ---------------------------------------------------------------------------------- check-env
def test_check_env_digest_is_the_stamps_documented_digest(run: Run, tmp_path: Path) -> None:
    check_env(run, tmp_path / "env")
    version = ".".join(map(str, sys.version_info[:3]))
    assert run.interpreter == f"{sys.executable} {version}"  # probed, really run
    assert run.env_digest == by_hand(run.interpreter, None)
    assert run.values["INTERPRETER"] == sys.executable
    assert os.path.dirname(sys.executable) in run.values["TOOLS_PATH"].split(":")
    assert not run.env_reused
    assert f"# {tmp_path / 'env'} must be (re)created (stamp {run.env_digest[:12]})" in \
        run.log.getvalue()  # type: ignore[attr-defined]


def test_the_lock_files_content_is_in_the_digest(run: Run, tmp_path: Path) -> None:
    lock = tmp_path / "sdk.lock"
    lock.write_text("rocm-sdk==7.0.1\n")
    check_env(run, tmp_path / "env", str(lock))
    assert run.env_digest == by_hand(str(run.interpreter), "rocm-sdk==7.0.1\n")


def test_an_unreadable_lock_is_an_environment_problem_naming_the_way_out(
        run: Run, tmp_path: Path) -> None:
    with pytest.raises(EnvironmentProblem) as caught:
        check_env(run, tmp_path / "env", str(tmp_path / "missing.lock"))
    assert caught.value.exit_code == 4
    assert str(tmp_path / "missing.lock") in caught.value.message
    assert caught.value.hint == "regenerate it, or pass --no-lock"


def test_an_interpreter_that_does_not_run_is_named_with_how_to_install_one(
        run: Run, tmp_path: Path) -> None:
    """A python3.11 that exits 1 whatever it is asked: exit 4 (README), the message names
    the version and the file, the hint is uv's own command for that version."""
    broken = tmp_path / "python3.11"
    broken.write_text("#!/bin/sh\nexit 1\n")
    broken.chmod(0o755)
    step = Step("check-env", "reuse?", CheckEnv(str(tmp_path / "env"), "3.11", str(broken),
                                                DEFINITION, None))
    with pytest.raises(EnvironmentProblem) as caught:
        provisioning.check_env(step, run)
    assert caught.value.exit_code == 4
    assert caught.value.message.startswith(f"the Python 3.11 interpreter {broken} does not run")
    assert caught.value.hint == "uv python install 3.11"


def test_marking_an_environment_ready_before_its_digest_is_known_is_refused(
        run: Run, tmp_path: Path) -> None:
    """mark-env-ready writes the digest check-env computed; without one no stamp is written."""
    from toolkit.core.steps import MarkEnvReady

    env = tmp_path / "env"
    with pytest.raises(EnvironmentProblem) as caught:
        provisioning.mark_env_ready(Step("mark-env-ready", "ready", MarkEnvReady(str(env))), run)
    assert caught.value.exit_code == 4
    assert caught.value.message.startswith("mark-env-ready ran before create-env computed")
    assert not env.exists()


def test_the_stamped_definition_does_not_depend_on_the_order_a_steps_variables_are_set(
        run: Run, tmp_path: Path) -> None:
    """The stamp's ``described.definition`` is a sha256 of the provisioning steps as JSON; JSON
    objects are unordered (RFC 8259), so one step whose variables are written in another
    order is the same definition and must stamp the same digest."""
    import dataclasses

    from toolkit.core.steps import MarkEnvReady

    def stamped(env: dict[str, str], name: str) -> str:
        install = Step("install", "pip", Command(("uv", "pip", "install", "x"), env=env),
                       reuse_env=True)
        env_dir = tmp_path / name
        env_dir.mkdir()
        mark = Step("mark-env-ready", "ready", MarkEnvReady(str(env_dir)))
        r = dataclasses.replace(run, plan=dataclasses.replace(run.plan, steps=(install, mark)),
                                env_digest="e" * 64)
        provisioning.mark_env_ready(mark, r)
        return json.loads(venvs.stamp_path(env_dir).read_text())["described"]["definition"]

    one = stamped({"CC": "gcc", "AR": "ar"}, "one")
    other = stamped({"AR": "ar", "CC": "gcc"}, "other")
    assert one == other
    assert len(one) == 64 and int(one, 16) >= 0  # a sha256, hex
    assert stamped({"CC": "clang", "AR": "ar"}, "third") != one  # another definition


def test_a_stable_only_release_names_the_index_option_as_the_way_out(
        run: Run, tmp_path: Path) -> None:
    """A release TheRock published on the stable channel alone: no --channel takes
    pre-releases, so the hint names the release and --index-url."""
    import dataclasses
    from types import MappingProxyType

    build = run.plan.build
    sdk = dataclasses.replace(build.rocm.sdk,
                              channels=MappingProxyType({"stable": "https://x.invalid/"}))
    build = dataclasses.replace(build, rocm=dataclasses.replace(build.rocm, sdk=sdk))
    run.plan = dataclasses.replace(run.plan, build=build, channel="stable")
    failed = provisioning.on_stable(CommandStepFailed("uv failed", 1, ()), run)
    assert failed.hint is not None
    assert failed.hint.startswith(f"ROCm {build.rocm.version} has no other channel; ")
    assert failed.hint.endswith("; --index-url names another index")


def test_a_stamp_of_this_digest_is_reused_and_its_values_learned(run: Run,
                                                                  tmp_path: Path) -> None:
    env = tmp_path / "env"
    version = ".".join(map(str, sys.version_info[:3]))
    digest = by_hand(f"{sys.executable} {version}", None)
    ready_env(env, digest, {"TORCH_LIB": "/t/lib", "ROCM_ROOT": str(tmp_path),
                            "WHEEL": "/stale.whl", "SHA": "0" * 40})
    check_env(run, env)
    assert run.env_reused
    assert run.values["TORCH_LIB"] == "/t/lib" and run.values["ROCM_ROOT"] == str(tmp_path)
    assert "WHEEL" not in run.values and "SHA" not in run.values  # a run's own values
    assert f"# {env} is up to date (stamp {digest[:12]}): reused" in \
        run.log.getvalue()  # type: ignore[attr-defined]


def test_a_stamp_whose_rocm_root_is_gone_is_not_reused(run: Run, tmp_path: Path) -> None:
    env = tmp_path / "env"
    version = ".".join(map(str, sys.version_info[:3]))
    ready_env(env, by_hand(f"{sys.executable} {version}", None),
              {"ROCM_ROOT": str(tmp_path / "gone"), "TORCH_LIB": "/t/lib"})
    check_env(run, env)
    assert not run.env_reused and "TORCH_LIB" not in run.values


def test_a_stamp_of_another_digest_is_not_reused(run: Run, tmp_path: Path) -> None:
    env = tmp_path / "env"
    ready_env(env, "0" * 64, {"TORCH_LIB": "/t/lib"})
    check_env(run, env)
    assert not run.env_reused and "TORCH_LIB" not in run.values


def test_the_environment_set_aside_for_this_digest_comes_back(run: Run, tmp_path: Path) -> None:
    env = tmp_path / "env"
    version = ".".join(map(str, sys.version_info[:3]))
    ready_env(venvs.previous(env), by_hand(f"{sys.executable} {version}", None),
              {"TORCH_LIB": "/t/lib"})
    check_env(run, env)
    assert run.env_reused and run.values["TORCH_LIB"] == "/t/lib"
    assert not venvs.previous(env).exists()
    assert "the environment set aside for this definition is back" in \
        run.log.getvalue()  # type: ignore[attr-defined]


# ------------------------------------------------------------------ install-requirements (uv)
def uv() -> str:
    found = shutil.which("uv") or str(Path(sys.executable).with_name("uv"))
    if not os.access(found, os.X_OK):
        pytest.skip("uv is not installed")
    return found


# ---------------------------------------------------------------------------------- create-env
def test_a_uv_not_found_when_planned_is_looked_up_when_the_step_runs(
        run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tools = tmp_path / "tools"
    tools.mkdir()
    os.symlink(uv(), tools / "uv")  # the real uv, first on PATH now
    monkeypatch.setenv("PATH", f"{tools}{os.pathsep}{os.environ['PATH']}")
    run.values["INTERPRETER"] = sys.executable
    env_dir = tmp_path / "env"
    step = Step("create-env", "a new environment", CreateEnv(str(env_dir), "uv"))
    result = provisioning.create_env(step, run)
    assert not isinstance(result, str) and result.returncode == 0
    assert result.argv[:2] == [str(tools / "uv"), "venv"]  # the uv found now, run for real
    assert (env_dir / "bin" / "python").exists()


def test_no_uv_when_the_step_runs_is_exit_4_saying_how_to_get_it(
        run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    monkeypatch.setitem(sys.modules, "uv", None)  # nor the uv package beside the toolkit
    step = Step("create-env", "a new environment", CreateEnv(str(tmp_path / "env"), "uv"))
    with pytest.raises(EnvironmentProblem) as caught:
        provisioning.create_env(step, run)
    assert caught.value.exit_code == 4
    assert caught.value.message.startswith("uv is needed to create build environments")
    assert caught.value.hint == "pip install uv"
    assert not (tmp_path / "env").exists()


def install(run: Run, *argv: str) -> None:
    step = Step("install-requirements", "the build's requirements", Command(tuple(argv)))
    building.install_requirements(step, run)


@pytest.fixture
def uv_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty simple index on disk for uv; pip's variable names another one."""
    index = tmp_path / "simple"
    index.mkdir()
    (index / "index.html").write_text("<html><body></body></html>\n")
    monkeypatch.setenv("UV_NO_CACHE", "1")
    monkeypatch.setenv("UV_HTTP_RETRIES", "0")
    for var in ("UV_INDEX_URL", "UV_INDEX", "UV_EXTRA_INDEX_URL", "UV_FIND_LINKS",
                "PIP_EXTRA_INDEX_URL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("UV_DEFAULT_INDEX", index.as_uri())
    monkeypatch.setenv("PIP_INDEX_URL", "https://pip.example.invalid/simple")
    return index


def test_a_requirement_no_index_holds_is_exit_11_naming_uvs_own_index(
        run: Run, uv_env: Path) -> None:
    with pytest.raises(BuildRequirementsUnavailable) as caught:
        install(run, uv(), "pip", "install", "--python", sys.executable, "--no-deps",
                "nosuch-requirement-x")
    message = caught.value.message
    assert caught.value.exit_code == 11
    assert "'nosuch-requirement-x'" in message
    assert uv_env.as_uri() in message and "pip.example.invalid" not in message
    assert "apex (step install-requirements)" in message
    assert caught.value.__suppress_context__


def test_an_index_refusing_connections_is_exit_8(run: Run, uv_env: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UV_DEFAULT_INDEX", "http://127.0.0.1:9/simple")
    with pytest.raises(SourceUnreachable) as caught:
        install(run, uv(), "pip", "install", "--python", sys.executable, "nosuch-requirement-x")
    assert caught.value.exit_code == 8
    assert "http://127.0.0.1:9/simple" in caught.value.message
    assert "(nosuch-requirement-x)" in caught.value.message  # --python ENV is no requirement


def test_any_other_install_failure_stays_a_failed_step(run: Run, uv_env: Path,
                                                       tmp_path: Path) -> None:
    with pytest.raises(CommandStepFailed) as caught:
        install(run, uv(), "pip", "install", "--python", str(tmp_path / "no-python"), "x")
    assert caught.value.exit_code == 5
    assert "step 'install-requirements' failed" in caught.value.message


# ----------------------------------------------------------------- the interpreter's linking
def test_a_real_interpreters_link_commands_lose_only_absolute_rpaths() -> None:
    values = building.interpreter_values(sys.executable)
    for var in ("LDSHARED", "LDCXXSHARED"):
        own = sysconfig.get_config_var(var) or ""
        kept = [w for w in own.split() if not w.startswith(("-Wl,-rpath,/", "-Wl,-rpath=/",
                                                            "-Wl,-R/"))]
        assert values[var].split() == (kept or ["gcc" if var == "LDSHARED" else "g++",
                                                "-shared"])
    assert f"-ffile-prefix-map={sys.base_prefix}=/python" in values["PYTHON_PREFIX_MAP"] or \
        sys.base_prefix == "/"


@pytest.mark.parametrize("not_python", ["true", "false"])
def test_a_command_that_is_no_python_links_with_gcc_and_maps_nothing(not_python: str) -> None:
    # true: exit 0 and no JSON; false: a failure
    assert building.interpreter_values(shutil.which(not_python) or not_python) == {
        "LDSHARED": "gcc -shared", "LDCXXSHARED": "g++ -shared", "PYTHON_PREFIX_MAP": ""}


# ------------------------------------------------------------------------------- gitlinks
def test_a_repository_without_commits_records_no_submodule(tmp_path: Path) -> None:
    repo = tmp_path / "fresh"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    assert sources.recorded_commit(repo, "third/lib") is None  # no HEAD: no gitlink, no error
