"""`python -m toolkit provision ID`, in process, on this machine's real interpreter: an
environment whose stamp matches is reused and the command prints its folder (stdout: the
folder only; ``--json``: the folder, its python, what provisioning learned with credentials
masked and the run's own ``_`` values left out, and each step with why it was skipped);
a build whose ROCm comes from the system needs one (exit 4, README "## Exit codes":
environment problem) when it is provisioned for real, while ``--dry-run`` only looks.

The stamp is written here by hand in the format ``toolkit/env/venvs.py`` documents (its
digest from ``venvs.digest``, over what the plan's check-env step names); the expected
paths are hand-written: ``<TOOLKIT_CACHE_DIR>/envs/<py>-rocm<rocm>-torch<torch>``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fixtures.system_rocm import rocm_at
from toolkit import __version__
from toolkit.cli.commands.plan import options_from
from toolkit.cli.commands.provision import provisioning_plan
from toolkit.cli.main import build_parser, main
from toolkit.core.errors import EnvironmentProblem
from toolkit.core.steps import CheckEnv
from toolkit.env import venvs
from toolkit.env.interpreters import probe
from toolkit.plan.layout import Layout
from toolkit.plan.model import Plan

BUILD = "apex-1.8.0-cp312-rocm7.0"  # ROCm 7.0: a system install (rocm.toml), torch 2.8
ENV_NAME = "3.12-rocm7.0-torch2.8"
URL = "https://alice:s3cret@example.invalid/simple"


@pytest.fixture
def host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache and work folder in tmp, no hipcc on PATH, no ROCm variables (pyenv's 3.12 is
    still found: its versions folder is looked at whatever PATH says)."""
    (tmp_path / "bin").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    monkeypatch.setenv("TOOLKIT_CACHE_DIR", str(tmp_path / "cache"))
    for var in ("ROCM_PATH", "ROCM_HOME", "HIP_PATH", "TOOLKIT_ROCM_CHANNEL", "TOOLKIT_ROCM_FROM"):
        monkeypatch.delenv(var, raising=False)
    return tmp_path


def _fake_rocm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = rocm_at(tmp_path / "rocm-7.0.2", "7.0.2-17")
    monkeypatch.setenv("ROCM_PATH", str(root))
    return root


def _plan(work: Path, *, find_interpreter: bool = True) -> Plan:
    args = build_parser("provision").parse_args(["provision", BUILD, "--workdir", str(work)])
    matrix, opts = options_from(args, sources=False)
    return provisioning_plan(matrix, matrix.build(BUILD), opts, Layout.default(str(work)),
                             find_interpreter=find_interpreter)


def _check_env(p: Plan) -> CheckEnv:
    action = p.step("check-env").action
    assert isinstance(action, CheckEnv)
    return action


def _stamped(tmp_path: Path, rocm: Path) -> Path:
    """A ready environment for BUILD, as a run of this toolkit would have left it."""
    action = _check_env(_plan(tmp_path / "work"))
    found = probe(action.interpreter)
    assert found is not None
    interpreter = f"{action.interpreter} {'.'.join(map(str, found.version))}"
    env = tmp_path / "cache" / "envs" / ENV_NAME
    assert action.env_dir == str(env)
    (env / "bin").mkdir(parents=True)
    (env / "bin" / "python").symlink_to(action.interpreter)
    wanted = venvs.digest([("definition", [action.definition], {}, [])], interpreter=interpreter,
                          lock_text=None if action.lock is None else Path(action.lock).read_text())
    (env / venvs.STAMP).write_text(json.dumps({
        "format": 1, "digest": wanted, "toolkit": __version__, "described": {},
        "values": {"ROCM_ROOT": str(rocm), "TORCH_INDEX": URL, "_RUN_OWN": "hidden"}}))
    return env


def test_a_ready_environment_is_reused_and_its_folder_printed(
        host: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    env = _stamped(host, _fake_rocm(host, monkeypatch))
    capsys.readouterr()
    assert main(["provision", BUILD, "--workdir", str(host / "work")]) == 0
    out, err = capsys.readouterr()
    assert out == f"{env}\n"  # stdout: the folder alone; progress on stderr
    assert "check-env" in err and "mark-env-ready" in err and "skipped" in err


def test_the_runs_log_goes_to_the_workdir_given_not_the_current_folder(
        host: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """``--workdir`` (docs/command-line.md: "where dist/, artifacts/, build/ go") holds the
    run's ``artifacts/<id>/build.log`` (README "What a build leaves behind"); the current
    folder, another one here, is left as it was."""
    _stamped(host, _fake_rocm(host, monkeypatch))
    here = host / "elsewhere"
    here.mkdir()
    monkeypatch.chdir(here)
    assert main(["provision", BUILD, "--workdir", str(host / "work")]) == 0
    capsys.readouterr()
    log = host / "work" / "artifacts" / BUILD / "build.log"
    assert log.is_file() and "mark-env-ready" in log.read_text()
    assert list(here.iterdir()) == []


def test_json_names_the_environment_its_python_and_what_was_learned(
        host: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    rocm = _fake_rocm(host, monkeypatch)
    env = _stamped(host, rocm)
    capsys.readouterr()
    assert main(["provision", BUILD, "--workdir", str(host / "work"), "--json"]) == 0
    out = capsys.readouterr().out
    doc = json.loads(out)
    assert out.startswith('{\n  "env": ')  # indented two spaces, the keys in this order
    assert list(doc) == ["env", "python", "values", "steps"]
    assert doc["env"] == str(env) and doc["python"] == str(env / "bin" / "python")
    values = doc["values"]
    assert values["ROCM_ROOT"] == str(rocm)
    assert values["TORCH_INDEX"] == "https://***@example.invalid/simple"
    assert "s3cret" not in out and "alice" not in out
    assert not [k for k in values if k.startswith("_")] and "hidden" not in out
    assert values["INTERPRETER"].startswith(str(Path.home() / ".pyenv" / "versions" / "3.12"))
    steps = doc["steps"]
    assert steps[0] == {"name": "check-env", "skipped": None}
    assert steps[-1] == {"name": "mark-env-ready", "skipped": "environment up to date"}
    assert {s["name"] for s in steps} >= {"create-env", "install-rocm-sdk", "install-torch"}
    assert all(s["skipped"] == "environment up to date" for s in steps[1:])


def test_provisioning_for_real_requires_a_system_rocm(host: Path) -> None:
    with pytest.raises(EnvironmentProblem) as err:
        _plan(host / "work")
    assert err.value.exit_code == 4
    assert err.value.message.startswith("no system ROCm install found (looked at: /opt/rocm")
    assert err.value.hint == "set ROCM_PATH=/opt/rocm-X.Y.Z, or use --rocm-from pip"


def test_the_command_refuses_in_one_line_without_a_system_rocm(
        host: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["provision", BUILD, "--workdir", str(host / "work")]) == 4
    err = capsys.readouterr().err
    assert err.startswith("error: no system ROCm install found") and "Traceback" not in err


def test_a_dry_run_only_looks_for_the_system_rocm(
        host: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = _plan(host / "work", find_interpreter=False)
    assert _check_env(p).interpreter == "python3.12"  # looked for when it runs
    assert p.steps[-1].name == "mark-env-ready"
    assert main(["provision", BUILD, "--workdir", str(host / "work"), "--dry-run"]) == 0
    assert capsys.readouterr().out.startswith(f"# plan for {BUILD}")


def test_the_interpreter_is_found_first_and_the_system_rocm_named(
        host: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rocm = _fake_rocm(host, monkeypatch)
    p = _plan(host / "work")
    interp = _check_env(p).interpreter
    assert interp.startswith(str(Path.home() / ".pyenv" / "versions" / "3.12"))
    assert interp.endswith("/bin/python3.12")
    (sdk,) = [s for s in json.loads(p.to_json())["steps"] if s["name"] == "install-rocm-sdk"]
    assert str(rocm) in json.dumps(sdk)
