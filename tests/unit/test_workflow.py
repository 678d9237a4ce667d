""".github/workflows/wheels.yml: valid for GitHub, and every command in it is one the toolkit
supports (the matrix step is run here, for each trigger, exactly as the workflow writes it)."""

from __future__ import annotations

import inspect
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from toolkit.cli.main import build_parser
from toolkit.cli.sessions import session_parser
from toolkit.data.ci import load_ci
from toolkit.data.matrix import load_matrix

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / ".github" / "workflows" / "wheels.yml"
GOLDEN = ROOT / "tests" / "golden" / "ci"
MATRIX_EXPR = "${{ fromJSON(needs.matrix.outputs.matrix) }}"
MANYLINUX = "quay.io/pypa/manylinux_2_28_x86_64"


def _load_yaml(text: str) -> Any:
    """PyYAML when installed, else ruamel.yaml (check-jsonschema's own YAML reader)."""
    try:
        import yaml  # type: ignore[import-untyped,unused-ignore]

        return yaml.safe_load(text)
    except ImportError:
        pass
    try:
        from ruamel.yaml import YAML
    except ImportError:  # pragma: no cover
        pytest.skip("neither PyYAML nor ruamel.yaml is installed (pip install pyyaml)")
    return YAML(typ="safe", pure=True).load(text)


@pytest.fixture(scope="module")
def wf() -> dict[str, Any]:
    doc = _load_yaml(WORKFLOW.read_text())
    assert isinstance(doc, dict)
    if True in doc:  # YAML 1.1 readers (PyYAML) read the key `on` as a boolean
        doc["on"] = doc.pop(True)
    return doc


def _steps(wf: dict[str, Any], job: str) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = wf["jobs"][job]["steps"]
    return steps


def _step(wf: dict[str, Any], job: str, needle: str) -> dict[str, Any]:
    found = [s for s in _steps(wf, job) if needle in str(s.get("run", ""))]
    assert len(found) == 1, f"job {job}: expected one step running {needle!r}"
    return found[0]


def _uses(wf: dict[str, Any], job: str, action: str) -> list[dict[str, Any]]:
    return [s for s in _steps(wf, job) if str(s.get("uses", "")).startswith(action + "@")]


def _render(text: str, values: dict[str, str]) -> str:
    """Substitute ``${{ a.b }}`` expressions (only plain names) from ``values``."""
    def sub(m: re.Match[str]) -> str:
        return values[m.group(1)]

    return re.sub(r"\$\{\{\s*([A-Za-z_.]+)\s*\}\}", sub, text)


def _entries(trigger: str) -> list[dict[str, str]]:
    doc = json.loads((GOLDEN / f"{trigger}.json").read_text())
    entries: list[dict[str, str]] = doc["include"]
    return entries


# ----------------------------------------------------------------------------- GitHub's schema
def _check_jsonschema() -> str:
    exe = shutil.which("check-jsonschema") or str(Path(sys.executable).parent / "check-jsonschema")
    if not Path(exe).is_file():
        pytest.skip("check-jsonschema is not installed (pip install -e '.[dev]')")
    return exe


def _validate(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [_check_jsonschema(), "--builtin-schema", "vendor.github-workflows", str(path)],
        capture_output=True, text=True, timeout=120)


def test_workflow_passes_githubs_schema() -> None:
    res = _validate(WORKFLOW)
    assert res.returncode == 0, res.stdout + res.stderr


def test_schema_check_catches_a_broken_workflow(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yml"
    broken.write_text(WORKFLOW.read_text().replace("runs-on: ${{ matrix.runner }}",
                                                   "runs_on: ${{ matrix.runner }}"))
    res = _validate(broken)
    assert res.returncode != 0, "the validator must reject an unknown job key"


# ----------------------------------------------------------------------------- triggers
def test_triggers(wf: dict[str, Any]) -> None:
    on = wf["on"]
    assert set(on) == {"pull_request", "push", "schedule", "workflow_dispatch"}
    assert on["push"]["branches"] == ["main"]
    cron = on["schedule"][0]["cron"].split()
    assert len(cron) == 5 and cron[2:] == ["*", "*", "*"], "nightly"
    assert "families" in on["workflow_dispatch"]["inputs"]
    assert set(on) <= set(load_ci(load_matrix()).triggers), "ci.toml has a rule per trigger"


# ----------------------------------------------------------------------------- the matrix job
def _run_matrix_step(wf: dict[str, Any], event: str, families: str,
                     tmp_path: Path) -> list[dict[str, str]]:
    step = _step(wf, "matrix", "invoke matrix")
    script = _render(step["run"], {"github.event_name": event})
    env_values = {k: _render(str(v), {"inputs.families": families})
                  for k, v in step.get("env", {}).items()}
    out = tmp_path / f"output-{event}"
    env = {**os.environ, **env_values, "GITHUB_OUTPUT": str(out),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    env.pop("GITHUB_STEP_SUMMARY", None)
    res = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    lines = out.read_text().splitlines()
    assert len(lines) == 1 and lines[0].startswith("matrix=")
    doc = json.loads(lines[0].removeprefix("matrix="))
    entries: list[dict[str, str]] = doc["include"]
    return entries


def test_matrix_job_runs_the_toolkits_command(wf: dict[str, Any]) -> None:
    job = wf["jobs"]["matrix"]
    assert job["outputs"]["matrix"] == "${{ steps.compute.outputs.matrix }}"
    step = _step(wf, "matrix", "invoke matrix")
    assert step["id"] == "compute"
    assert "invoke matrix --format github --trigger ${{ github.event_name }}" in step["run"]
    assert "${{ inputs" not in step["run"], "user input reaches the script through env only"
    assert any("pip install -e ." in str(s.get("run", "")) for s in _steps(wf, "matrix"))


@pytest.mark.parametrize("event", ["pull_request", "push", "schedule", "workflow_dispatch"])
def test_matrix_step_output_per_trigger(wf: dict[str, Any], event: str, tmp_path: Path) -> None:
    assert event in wf["on"]
    assert _run_matrix_step(wf, event, "", tmp_path) == _entries(event)


def test_matrix_step_with_dispatch_families(wf: dict[str, Any], tmp_path: Path) -> None:
    entries = _run_matrix_step(wf, "workflow_dispatch", "gfx90a,gfx94X-dcgpu", tmp_path)
    assert len(entries) == 2 * len(load_matrix().builds)
    assert {e["family"] for e in entries} == {"gfx90a", "gfx94X-dcgpu"}


# ----------------------------------------------------------------------------- build and test jobs
def test_every_matrix_field_the_workflow_uses_exists(wf: dict[str, Any]) -> None:
    used = set(re.findall(r"(?<![.\w])matrix\.([A-Za-z_]+)", WORKFLOW.read_text()))
    assert {"id", "session", "package", "gfx", "test_runner"} <= used
    for entry in _entries("schedule"):
        assert used <= set(entry), used - set(entry)


def test_build_job(wf: dict[str, Any]) -> None:
    job = wf["jobs"]["build"]
    assert job["needs"] == "matrix"
    assert job["strategy"]["matrix"] == MATRIX_EXPR
    assert job["strategy"]["fail-fast"] is False
    assert job["container"] == MANYLINUX
    assert job["runs-on"] == "${{ matrix.runner }}"
    step = _step(wf, "build", "nox ")
    assert "-s ${{ matrix.session }} --" in step["run"]
    assert "--package ${{ matrix.package }} --version ${{ matrix.version }}" in step["run"]
    assert "--gfx ${{ matrix.gfx }}" in step["run"]
    uploads = _uses(wf, "build", "actions/upload-artifact")
    wheels = next(u for u in uploads if "dist/" in u["with"]["path"])
    assert "${{ matrix.id }}" in wheels["with"]["name"]
    assert "artifacts/${{ matrix.id }}/" in wheels["with"]["path"], "the manifest travels along"


@pytest.mark.parametrize("trigger", ["pull_request", "schedule"])
def test_build_command_is_a_real_session_and_options(wf: dict[str, Any], trigger: str) -> None:
    """The nox command, filled in for every entry: the session exists, its options parse."""
    run = _step(wf, "build", "nox ")["run"]
    for entry in _entries(trigger):
        argv = shlex.split(_render(run, {f"matrix.{k}": v for k, v in entry.items()}))
        assert argv[0] == "nox"
        session = argv[argv.index("-s") + 1]
        assert session == entry["session"]
        args = session_parser(session).parse_args(argv[argv.index("--") + 1:])
        assert args.package == [entry["package"]]
        assert load_matrix().expand_gfx(args.gfx) == tuple(entry["gfx"].split(","))
        assert args.family == entry["family"]
        builds = load_matrix().pair_builds(entry["python"], entry["rocm"], args.package)
        assert entry["id"] in {b.id for b in builds}


def test_sessions_in_the_matrix_exist_in_nox() -> None:
    res = subprocess.run([sys.executable, "-m", "nox", "-l"], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    names = {ln[2:].split()[0] for ln in res.stdout.splitlines() if ln[:2] in {"* ", "- "}}
    assert {e["session"] for e in _entries("schedule")} <= names


def test_test_job(wf: dict[str, Any]) -> None:
    job = wf["jobs"]["test"]
    assert job["runs-on"] == "${{ matrix.test_runner }}"
    assert job["strategy"]["matrix"] == MATRIX_EXPR and job["strategy"]["fail-fast"] is False
    assert "build" in job["needs"]
    down = _uses(wf, "test", "actions/download-artifact")
    up = next(u for u in _uses(wf, "build", "actions/upload-artifact") if "dist/" in u["with"]["path"])
    assert down and down[0]["with"]["name"] == up["with"]["name"], "downloads what build uploaded"
    smoke = _step(wf, "test", "invoke smoke")["run"]
    assert "--gfx ${{ matrix.test_gfx }} --require-gpu --junit junit.xml" in smoke
    assert "invoke smoke --build ${{ matrix.id }} " in smoke
    junit_up = [u for u in _uses(wf, "test", "actions/upload-artifact")
                if u["with"]["path"] == "junit.xml"]
    assert junit_up and junit_up[0].get("if") and "${{ matrix.id }}" in junit_up[0]["with"]["name"]


def test_smoke_task_takes_the_workflows_flags(wf: dict[str, Any]) -> None:
    import tasks

    smoke = tasks.smoke
    run = _step(wf, "test", "invoke smoke")["run"]
    flags = {f[2:].replace("-", "_") for f in re.findall(r"(?<!\S)--[a-z][a-z-]*", run)}
    assert {"build", "gfx", "require_gpu", "junit"} <= flags
    assert flags <= set(inspect.signature(smoke.body).parameters)


def test_report_steps_use_the_report_command(wf: dict[str, Any]) -> None:
    parser = build_parser()
    for job in ("build", "test", "report"):
        run = _step(wf, job, "toolkit report")["run"]
        line = next(ln for ln in run.splitlines() if "toolkit report" in ln)
        argv = [a for a in shlex.split(line) if a != "${args[@]}"]
        argv += [a for a in re.findall(r"args\+=\((--[a-z-]+) ", run) for a in (a, "f")]
        args = parser.parse_args(argv[argv.index("report"):])
        assert args.command == "report" and (args.nox_report or args.junit)
