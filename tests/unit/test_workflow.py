""".github/workflows/wheels.yml and the wheels-shard.yml it calls once per shard of at most
256 entries (GitHub's limit per matrix): valid for GitHub, and every command in them is one the toolkit
supports (the matrix step is run here, for each trigger, exactly as the workflow writes it; the
test job's install step installs a wheel through a find-links page made by `invoke index`).
Hardened: zizmor reports nothing, actions pinned by commit sha, images by digest, no `${{ }}`
in a script, least-privilege permissions, no persisted checkout credentials."""

from __future__ import annotations

import argparse
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
WORKFLOWS = ROOT / ".github" / "workflows"
SHARD = WORKFLOWS / "wheels-shard.yml"
MATRIX_EXPR = "${{ fromJSON(inputs.matrix) }}"
MANYLINUX = "quay.io/pypa/manylinux_2_28_x86_64"
PINNED_USES = re.compile(r"^\s*(?:-\s+)?uses:\s+([\w.-]+/[\w./-]+)@([0-9a-f]{40}) # (v\d+(?:\.\d+)*)$")


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


def _doc(path: Path) -> dict[str, Any]:
    doc = _load_yaml(path.read_text())
    assert isinstance(doc, dict)
    if True in doc:  # YAML 1.1 readers (PyYAML) read the key `on` as a boolean
        doc["on"] = doc.pop(True)
    return doc


@pytest.fixture(scope="module")
def shard() -> dict[str, Any]:
    return _doc(SHARD)


@pytest.fixture(scope="module")
def wf(shard: dict[str, Any]) -> dict[str, Any]:
    """wheels.yml, its jobs joined by the called workflow's (build, test): one view of what
    a run does (the names do not clash: a test asserts it)."""
    doc = _doc(WORKFLOW)
    assert not set(doc["jobs"]) & set(shard["jobs"])
    doc["jobs"] = {**doc["jobs"], **shard["jobs"]}
    return doc


def _steps(wf: dict[str, Any], job: str) -> list[dict[str, Any]]:
    """A job's steps (none for a job that calls a reusable workflow)."""
    steps: list[dict[str, Any]] = wf["jobs"][job].get("steps", [])
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


def _step_env(step: dict[str, Any], values: dict[str, str]) -> dict[str, str]:
    """The step's ``env:`` with its expressions filled in from ``values``."""
    return {k: _render(str(v), values) for k, v in step.get("env", {}).items()}


def _argv(step: dict[str, Any], values: dict[str, str]) -> list[str]:
    """The step's one-line command as the shell splits it, ``"$VAR"`` taken from its env."""
    env = _step_env(step, values)
    argv = []
    for word in shlex.split(step["run"]):
        alt = re.fullmatch(r"\$\{([A-Za-z_]+):\+([^}]*)\}", word)
        if alt:  # bash: ${NAME:+WORD} is WORD when NAME is set and not empty, else no word
            assert alt.group(1) in env, f"{word}: {alt.group(1)} is not set by the step's env"
            argv.extend([alt.group(2)] if env[alt.group(1)] else [])
            continue
        if word.startswith("$"):
            assert word[1:] in env, f"{word} is not set by the step's env"
            word = env[word[1:]]
        argv.append(word)
    return argv


def _matrix_values(entry: dict[str, str]) -> dict[str, str]:
    return {f"matrix.{k}": v for k, v in entry.items()}


def _entries(trigger: str) -> list[dict[str, str]]:
    """What the library selects for ``trigger`` (the workflow must run exactly that)."""
    from toolkit.data.ci import github_json, github_matrix, load_ci
    from toolkit.plan.recipes import load_matrix

    matrix = load_matrix()
    entries: list[dict[str, str]] = github_json(
        github_matrix(matrix, load_ci(matrix), trigger))["include"]
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


@pytest.mark.parametrize("path", [WORKFLOW, SHARD, WORKFLOWS / "upstream.yml"], ids=lambda p: p.name)
def test_workflow_passes_githubs_schema(path: Path) -> None:
    res = _validate(path)
    assert res.returncode == 0, res.stdout + res.stderr


def test_schema_check_catches_a_broken_workflow(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yml"
    broken.write_text(SHARD.read_text().replace("runs-on: ${{ matrix.runner }}",
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
                     tmp_path: Path, published: str = "") -> list[dict[str, str]]:
    step = _step(wf, "matrix", "invoke matrix")
    script = step["run"]
    env_values = _step_env(step, {"github.event_name": event, "inputs.families": families,
                                  "inputs.include_known_failures": "",
                                  "vars.TOOLKIT_PUBLISHED_INDEX": published})
    out = tmp_path / f"output-{event}"
    env = {**os.environ, **env_values, "GITHUB_OUTPUT": str(out),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    env.pop("GITHUB_STEP_SUMMARY", None)
    res = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    lines = out.read_text().splitlines()
    assert len(lines) == 1 and lines[0].startswith("shards=")
    shards = json.loads(lines[0].removeprefix("shards="))
    assert shards and all(0 < len(s["include"]) <= 256 for s in shards), [len(s["include"]) for s in shards]
    entries: list[dict[str, str]] = [e for s in shards for e in s["include"]]
    assert res.stdout.strip() == f"{len(entries)} entries in {len(shards)} shards"
    return entries


def test_matrix_job_runs_the_toolkits_command(wf: dict[str, Any]) -> None:
    job = wf["jobs"]["matrix"]
    assert job["outputs"]["shards"] == "${{ steps.compute.outputs.shards }}"
    step = _step(wf, "matrix", "invoke matrix")
    assert step["id"] == "compute"
    assert 'invoke matrix --format github-shards --trigger "$EVENT"' in step["run"]
    assert step["env"]["EVENT"] == "${{ github.event_name }}"
    assert step["env"]["FAMILIES"] == "${{ inputs.families }}"
    assert any("pip install -e ." in str(s.get("run", "")) for s in _steps(wf, "matrix"))


@pytest.mark.parametrize("event", ["pull_request", "push", "schedule", "workflow_dispatch"])
def test_matrix_step_output_per_trigger(wf: dict[str, Any], event: str, tmp_path: Path) -> None:
    assert event in wf["on"]
    assert _run_matrix_step(wf, event, "", tmp_path) == _entries(event)


def test_only_the_nightly_skips_what_was_published(wf: dict[str, Any], tmp_path: Path) -> None:
    """With the published index set, a pull request still runs its whole selection; the
    nightly asks for the builds changed since it (an empty folder: every one), and the
    shards job is skipped when there is none."""
    empty = tmp_path / "published"
    empty.mkdir()
    assert _run_matrix_step(wf, "pull_request", "", tmp_path, str(empty)) == _entries("pull_request")
    step = _step(wf, "matrix", "invoke matrix")
    assert '"$EVENT" = "schedule"' in step["run"] and '--changed-since "$PUBLISHED"' in step["run"]
    assert wf["jobs"]["wheels"]["if"] == "${{ needs.matrix.outputs.shards != '[]' }}"


def test_matrix_step_with_dispatch_families(wf: dict[str, Any], tmp_path: Path) -> None:
    entries = _run_matrix_step(wf, "workflow_dispatch", "gfx90a,gfx94X-dcgpu", tmp_path)
    assert len(entries) == 2 * len(load_matrix().builds)
    assert len(entries) > 256, "more than one matrix holds: the shards carry it"
    assert {e["family"] for e in entries} == {"gfx90a", "gfx94X-dcgpu"}
    assert len({(e["id"], e["family"]) for e in entries}) == len(entries), "no entry twice"


def test_each_shard_is_one_call_of_the_shard_workflow(wf: dict[str, Any], shard: dict[str, Any]) -> None:
    job = wf["jobs"]["wheels"]
    assert job["uses"] == "./.github/workflows/wheels-shard.yml"
    assert job["needs"] == "matrix"
    assert job["strategy"]["matrix"]["shard"] == "${{ fromJSON(needs.matrix.outputs.shards) }}"
    assert job["strategy"]["fail-fast"] is False, "one failing shard must not cancel the others"
    assert job["with"]["matrix"] == "${{ toJSON(matrix.shard) }}"
    call = shard["on"]["workflow_call"]["inputs"]["matrix"]
    assert call["required"] is True and call["type"] == "string"
    assert set(shard["on"]) == {"workflow_call"}
    assert "wheels" in str(wf["jobs"]["report"]["needs"]), "the report waits for every shard"


@pytest.mark.parametrize(("count", "sizes"), [
    (1, [1]), (256, [256]), (257, [129, 128]), (512, [256, 256]), (513, [171, 171, 171]),
])
def test_shards_are_even_and_at_most_256(count: int, sizes: list[int]) -> None:
    from toolkit.data.ci import github_json, github_matrix, github_shards
    from toolkit.plan.recipes import load_matrix as recipes_matrix

    matrix = recipes_matrix()
    one = github_matrix(matrix, load_ci(matrix), "schedule")[0]
    shards = github_shards([one] * count)
    assert [len(s["include"]) for s in shards] == sizes
    assert [e for s in shards for e in s["include"]] == github_json([one] * count)["include"]


# ----------------------------------------------------------------------------- build and test jobs
def test_every_matrix_field_the_workflow_uses_exists(wf: dict[str, Any]) -> None:
    used = set(re.findall(r"(?<![.\w])matrix\.([A-Za-z_]+)", SHARD.read_text()))
    assert {"id", "session", "package", "gfx", "test_runner"} <= used
    for entry in _entries("schedule"):
        assert used <= set(entry), used - set(entry)


def test_build_job(wf: dict[str, Any]) -> None:
    job = wf["jobs"]["build"]
    assert "needs" not in job, "the shard's matrix is its input"
    assert job["strategy"]["matrix"] == MATRIX_EXPR
    assert job["strategy"]["fail-fast"] is False
    assert job["container"]["image"].startswith(MANYLINUX + "@sha256:")
    assert job["runs-on"] == "${{ matrix.runner }}"
    step = _step(wf, "build", "nox ")
    assert '-s "$SESSION" --' in step["run"] and step["env"]["SESSION"] == "${{ matrix.session }}"
    assert '--package "$PACKAGE" --version "$VERSION"' in step["run"]
    assert step["env"]["PACKAGE"] == "${{ matrix.package }}"
    assert step["env"]["VERSION"] == "${{ matrix.version }}"
    assert '--gfx "$GFX"' in step["run"] and step["env"]["GFX"] == "${{ matrix.gfx }}"
    uploads = _uses(wf, "build", "actions/upload-artifact")
    wheels = next(u for u in uploads if "dist/" in u["with"]["path"])
    assert "${{ matrix.id }}" in wheels["with"]["name"]
    assert "artifacts/${{ matrix.id }}/" in wheels["with"]["path"], "the manifest travels along"


def test_build_job_indexes_the_wheels_and_uploads_the_page(wf: dict[str, Any]) -> None:
    steps = _steps(wf, "build")
    index = _step(wf, "build", "invoke index")
    order = [steps.index(_step(wf, "build", "nox ")), steps.index(index),
             next(i for i, s in enumerate(steps) if "dist/" in str(s.get("with", {}).get("path")))]
    assert order == sorted(order), "build, then index, then upload"
    argv = shlex.split(index["run"])
    assert argv[:3] == ["invoke", "index", "dist"]
    args = build_parser().parse_args(argv[1:])
    assert args.command == "index" and args.folder == "dist"
    import tasks

    flags = {f[2:].replace("-", "_") for f in argv if f.startswith("--")}
    assert flags <= set(inspect.signature(tasks.index.body).parameters)
    upload = next(u for u in _uses(wf, "build", "actions/upload-artifact")
                  if "dist/" in u["with"]["path"])
    paths = upload["with"]["path"].splitlines()
    assert "dist/index.html" in paths and "dist/${{ matrix.id }}/" in paths
    assert upload["with"]["if-no-files-found"] == "error"


@pytest.mark.parametrize("trigger", ["pull_request", "schedule"])
def test_build_command_is_a_real_session_and_options(wf: dict[str, Any], trigger: str,
                                                     monkeypatch: pytest.MonkeyPatch,
                                                     tmp_path: Path) -> None:
    """The nox command, filled in for every entry: the session exists, its options parse,
    and they plan the entry's build."""
    from toolkit.cli.commands.plan import options_from
    from toolkit.env.host import HostFacts
    from toolkit.plan.layout import Layout
    from toolkit.plan.planner import plan

    for var in ("TOOLKIT_ROCM_FROM", "TOOLKIT_ROCM_INDEX_URL", "TOOLKIT_ROCM_FAMILY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)  # no locks/ here
    run = _step(wf, "build", "nox ")["run"]
    step = _step(wf, "build", "nox ")
    assert "${{" not in run
    parsers: dict[str, argparse.ArgumentParser] = {}  # one per session: argparse parses again and again
    for entry in _entries(trigger):
        argv = _argv(step, _matrix_values(entry))
        assert argv[0] == "nox"
        session = argv[argv.index("-s") + 1]
        assert session == entry["session"]
        if session not in parsers:
            parsers[session] = session_parser(session)
        args = parsers[session].parse_args(argv[argv.index("--") + 1:])
        assert args.package == [entry["package"]]
        assert load_matrix().expand_gfx(args.gfx) == tuple(entry["gfx"].split(","))
        assert args.family == entry["sdk_family"]  # only a per-family SDK index takes one
        builds = load_matrix().pair_builds(entry["python"], entry["rocm"], args.package)
        assert entry["id"] in {b.id for b in builds}
        # the session's own options plan the entry's build for the entry's family (a family
        # given for a multi-arch index is refused, one for a system install would be ignored)
        matrix, opts = options_from(args)
        build = next(b for b in builds if b.id == entry["id"])
        planned = plan(matrix, build, opts, HostFacts(), Layout(Path("/w"), Path("/c")))
        assert planned.family == (entry["sdk_family"] or None), entry["id"]
        assert list(planned.targets) == entry["gfx"].split(","), entry["id"]


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
    step = _step(wf, "test", "invoke smoke")
    entry = _entries("schedule")[0]
    argv = _argv(step, {**_matrix_values(entry), "steps.provision.outputs.env": "/env"})
    assert argv[:2] == ["invoke", "smoke"]
    assert argv[argv.index("--build") + 1] == entry["id"]
    assert argv[argv.index("--env") + 1] == "/env", "the environment the wheel was installed in"
    assert argv[argv.index("--gfx") + 1] == entry["test_gfx"]
    assert "--require-gpu" in argv and argv[argv.index("--junit") + 1] == "junit.xml"
    steps = _steps(wf, "test")
    install = _step(wf, "test", "--find-links")
    assert steps.index(down[0]) < steps.index(_step(wf, "test", "toolkit provision")) \
        < steps.index(install) < steps.index(step), "download, provision, install, smoke"
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


# ----------------------------------------------------------------------------- find-links install
def _wheel(dest: Path, dist: str, version: str) -> Path:
    from packaging.utils import canonicalize_name
    from wheel.wheelfile import WheelFile

    stem = canonicalize_name(dist).replace("-", "_")
    dest.mkdir(parents=True, exist_ok=True)
    path = dest / f"{stem}-{version}-py3-none-any.whl"
    with WheelFile(path, "w") as wf:
        wf.writestr(f"{stem}_probe/__init__.py", "OK = True\n")
        wf.writestr(f"{stem}-{version}.dist-info/METADATA",
                    f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n\n")
        wf.writestr(f"{stem}-{version}.dist-info/WHEEL",
                    "Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
    return path


def _bash(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "GITHUB_"))}
    full.update(env, PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1",
                PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    return subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script], cwd=cwd, env=full,
                          capture_output=True, text=True, timeout=300)


def _env_with_this_pip(env: Path) -> None:
    """A venv whose ``python -m pip`` is the real pip this interpreter runs, seen through a .pth
    file: ensurepip would unpack a copy of it (about 10 s on a loaded 2-core machine)."""
    import pip

    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True, timeout=300)
    shelf = env.parent / "pip-only"
    shelf.mkdir()
    (shelf / "pip").symlink_to(Path(pip.__file__).parent)
    (site,) = (env / "lib").glob("python*/site-packages")
    (site / "pip-only.pth").write_text(f"{shelf}\n")


def test_install_step_installs_the_wheel_through_the_find_links_page(
        wf: dict[str, Any], tmp_path: Path) -> None:
    """The build job's index step and the test job's install step, run as written, on the
    artifact's layout: dist/index.html, dist/<id>/<wheel>, artifacts/<id>/manifest.json."""
    from toolkit.run.manifest import recipe_facts

    entry = next(e for e in _entries("schedule") if e["package"] == "fbgemm_gpu")
    build = load_matrix().build(entry["id"])
    assert build.package.dist != entry["package"], "the install must name the dist, not the package"
    version = f"{entry['version']}+rocm{entry['rocm']}gitdeadbeef"
    wheel = _wheel(tmp_path / "dist" / entry["id"], build.package.dist, version)
    manifest = tmp_path / "artifacts" / entry["id"] / "manifest.json"
    manifest.parent.mkdir(parents=True)
    manifest.write_text(json.dumps(recipe_facts(build)))
    values = {**_matrix_values(entry), "steps.provision.outputs.env": str(tmp_path / "env")}

    (tmp_path / "tasks.py").symlink_to(ROOT / "tasks.py")  # the checkout's root, as in CI
    index = _step(wf, "build", "invoke index")
    res = _bash(index["run"], tmp_path, _step_env(index, values))
    assert res.returncode == 0, res.stdout + res.stderr
    assert f"{entry['id']}/{wheel.name.replace('+', '%2B')}#sha256=" in \
        (tmp_path / "dist" / "index.html").read_text()

    _env_with_this_pip(tmp_path / "env")
    install = _step(wf, "test", "--find-links")
    assert "${{" not in install["run"]
    res = _bash(install["run"], tmp_path, _step_env(install, values))
    assert res.returncode == 0, res.stdout + res.stderr
    probe = subprocess.run(
        [str(tmp_path / "env" / "bin" / "python"), "-c",
         "import importlib.metadata as m, sys; print(m.version(sys.argv[1]))", build.package.dist],
        capture_output=True, text=True, timeout=120)
    assert probe.stdout.strip() == version, probe.stderr

    wheel.write_bytes(wheel.read_bytes() + b"\0")  # changed after indexing: refused
    res = _bash(install["run"].replace("pip install", "pip install --force-reinstall"), tmp_path,
                _step_env(install, values))
    assert res.returncode != 0 and "DO NOT MATCH THE HASHES" in res.stdout + res.stderr


# ----------------------------------------------------------------------------- hardening
def test_every_action_is_pinned_to_a_commit_sha_with_its_version(wf: dict[str, Any]) -> None:
    lines = [ln for p in sorted(WORKFLOWS.glob("*.y*ml"))
             for ln in p.read_text().splitlines() if re.match(r"^\s*(-\s+)?uses:", ln)]
    assert lines
    local = [ln.strip() for ln in lines if re.fullmatch(r"\s*uses: \./\.github/workflows/[\w-]+\.yml", ln)]
    assert local == ["uses: ./.github/workflows/wheels-shard.yml"], "the one call of our own workflow"
    bad = [ln.strip() for ln in lines if not PINNED_USES.match(ln) and ln.strip() not in local]
    assert bad == [], "pin as owner/repo@<40 hex> # vX.Y.Z"
    used = {str(s["uses"]) for job in wf["jobs"] for s in _steps(wf, job) if "uses" in s}
    assert all(re.fullmatch(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}", u) for u in used), used
    versions: dict[str, set[str]] = {}
    for ln in lines:
        if ln.strip() in local:
            continue
        m = PINNED_USES.match(ln)
        assert m is not None
        versions.setdefault(m.group(1), set()).add(f"{m.group(2)} {m.group(3)}")
    assert all(len(v) == 1 for v in versions.values()), f"one pin per action: {versions}"


def test_container_images_are_pinned_by_digest(wf: dict[str, Any]) -> None:
    images = {job: wf["jobs"][job]["container"]["image"] for job in ("build", "test")}
    for job, image in images.items():
        assert re.fullmatch(re.escape(MANYLINUX) + r"@sha256:[0-9a-f]{64}", image), (job, image)
    assert len(set(images.values())) == 1, "build and test run in the same image"
    for job, spec in wf["jobs"].items():
        if "container" in spec:
            image = spec["container"]["image"] if isinstance(spec["container"], dict) else spec["container"]
            assert "@sha256:" in image, job


def test_no_expression_inside_a_run_script(wf: dict[str, Any]) -> None:
    scripts = {(job, s.get("name", s.get("id", "?"))): s["run"]
               for job in wf["jobs"] for s in _steps(wf, job) if "run" in s}
    assert scripts
    assert {k: v for k, v in scripts.items() if "${{" in v} == {}, "pass values through env:"


def test_checkouts_do_not_persist_credentials(wf: dict[str, Any]) -> None:
    for job in wf["jobs"]:
        for step in _uses(wf, job, "actions/checkout"):
            assert step.get("with", {}).get("persist-credentials") is False, job


def test_permissions_are_least_privilege(wf: dict[str, Any], shard: dict[str, Any]) -> None:
    assert wf["permissions"] == {}, "nothing at the top; each job asks for what it needs"
    assert shard["permissions"] == {}
    for name, job in wf["jobs"].items():
        assert job.get("permissions") == {"contents": "read"}, name


def _zizmor() -> str:
    exe = Path(sys.executable).with_name("zizmor")
    found = str(exe) if exe.exists() else shutil.which("zizmor")
    if found is None:
        pytest.fail("zizmor is not installed; it is a dev dependency (pip install -e '.[dev]')")
    return found


def _zizmor_run(folder: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("GH_TOKEN", "GITHUB_TOKEN", "ZIZMOR_CONFIG")}
    return subprocess.run([_zizmor(), "--offline", "--no-progress", "--min-severity", "medium", str(folder)],
                          capture_output=True, text=True, timeout=300, env=env)


def test_zizmor_reports_no_findings() -> None:
    res = _zizmor_run(WORKFLOWS)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "No findings to report" in res.stdout + res.stderr


def test_zizmor_catches_a_regression(tmp_path: Path) -> None:
    """The check is live: a script expression, a tag pin and a floating image are findings."""
    folder = tmp_path / ".github" / "workflows"
    folder.mkdir(parents=True)
    text = SHARD.read_text()
    text = text.replace('--build "$BUILD_ID"', "--build ${{ matrix.id }}")
    text = re.sub(r"actions/download-artifact@[0-9a-f]{40} # v[\d.]+", "actions/download-artifact@v4", text)
    text = re.sub(r"(manylinux_2_28_x86_64)@sha256:[0-9a-f]{64}", r"\1:latest", text)
    (folder / "wheels.yml").write_text(text)
    res = _zizmor_run(folder)
    out = res.stdout + res.stderr
    assert res.returncode != 0
    for audit in ("template-injection", "unpinned-uses", "unpinned-images"):
        assert audit in out, audit
