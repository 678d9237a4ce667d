""".github/workflows/upstream.yml: the daily job that runs `invoke upstream` against the live
upstream repositories and turns drift into one pull request. Its steps run here as written
(real bash, real invoke, real git) against small hand-made upstream repositories served as the
"live" remote (``TOOLKIT_UPSTREAM_REMOTE``, partial clones in a fresh cache), on the passing
and the failing path. GitHub's schema, zizmor and the action pins: tests/unit/test_workflow.py."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.unit.test_workflow import _doc, _step_env
from tests.unit.upstream_fakes import SCRIPT, FakeRepo, World, _matrix_script

ROOT = Path(__file__).resolve().parents[2]
UPSTREAM = ROOT / ".github" / "workflows" / "upstream.yml"
_GIT_ENV = {"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


@pytest.fixture(scope="module")
def wf() -> dict[str, Any]:
    return _doc(UPSTREAM)


def _job(wf: dict[str, Any]) -> dict[str, Any]:
    assert list(wf["jobs"]) == ["drift"]
    job: dict[str, Any] = wf["jobs"]["drift"]
    return job


def _named(wf: dict[str, Any], name: str) -> dict[str, Any]:
    found = [s for s in _job(wf)["steps"] if s.get("name") == name]
    assert len(found) == 1, name
    return found[0]


def test_daily_schedule_and_manual_runs_only(wf: dict[str, Any]) -> None:
    on = wf["on"]
    assert set(on) == {"schedule", "workflow_dispatch"}
    cron = on["schedule"][0]["cron"].split()
    assert len(cron) == 5 and cron[2:] == ["*", "*", "*"], "daily"


def test_write_permissions_only_on_the_drift_job(wf: dict[str, Any]) -> None:
    assert wf["permissions"] == {"contents": "read"}
    assert _job(wf)["permissions"] == {"contents": "write", "pull-requests": "write"}
    for step in _job(wf)["steps"]:
        if str(step.get("uses", "")).startswith("actions/checkout@"):
            assert step["with"]["persist-credentials"] is False
        assert "${{" not in str(step.get("run", "")), "values reach scripts through env:"


def test_one_fixed_branch_and_one_pull_request_through_gh(wf: dict[str, Any]) -> None:
    assert wf["env"]["DRIFT_BRANCH"] == "upstream/drift"
    pr = _named(wf, "Open or update the upstream/drift pull request")
    assert pr["if"] == "${{ steps.check.outputs.drift == 'true' }}"
    assert pr["env"]["GH_TOKEN"] == "${{ github.token }}"
    assert pr["env"]["BODY"] == "${{ steps.write.outputs.body }}", "the toolkit's body"
    run = pr["run"]
    assert 'git push --force origin "HEAD:refs/heads/$DRIFT_BRANCH"' in run
    assert 'gh pr list --head "$DRIFT_BRANCH" --base "$BASE" --state open' in run
    assert 'gh pr edit "$number"' in run and '--body-file "$BODY"' in run
    assert 'gh pr create --base "$BASE" --head "$DRIFT_BRANCH"' in run
    assert "uses:" not in str([s for s in _job(wf)["steps"] if "pull" in s.get("name", "")]), \
        "no third-party action opens the pull request"


class Live:
    """The hand-made upstream as the "live" remote, a data copy, and the runner's files."""

    def __init__(self, tmp: Path, template: World) -> None:
        """``template``'s repositories (``make_upstream``) and data (``make_data``), copied."""
        self.tmp = tmp
        self.root = tmp / "remote"
        shutil.copytree(template.root, self.root, symlinks=True)
        self.c = dict(template.c)
        self.data = tmp / "data"
        shutil.copytree(template.data, self.data, symlinks=True)
        (tmp / "runner").mkdir()
        self.output = tmp / "github-output"
        self.summary = tmp / "step-summary"

    def repo(self, slug: str) -> FakeRepo:
        r = FakeRepo.__new__(FakeRepo)
        r.dir = self.root / slug.replace("/", "+") / "repo"
        return r

    def step(self, wf: dict[str, Any], name: str,
             values: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        step = _named(wf, name)
        env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
        env.update(_step_env(step, values or {}), **_GIT_ENV,
                   TOOLKIT_UPSTREAM_REMOTE=f"file://{self.root}", TOOLKIT_DATA_DIR=str(self.data),
                   TOOLKIT_CACHE_DIR=str(self.tmp / "cache"), RUNNER_TEMP=str(self.tmp / "runner"),
                   GITHUB_OUTPUT=str(self.output), GITHUB_STEP_SUMMARY=str(self.summary),
                   PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
        return subprocess.run(["bash", "-e", "-o", "pipefail", "-c", step["run"]], cwd=ROOT,
                              env=env, capture_output=True, text=True, timeout=300)

    def outputs(self) -> dict[str, str]:
        text = self.output.read_text() if self.output.exists() else ""
        return dict(line.split("=", 1) for line in text.splitlines())


@pytest.fixture
def live(tmp_path: Path, world_template: World) -> Live:
    return Live(tmp_path, world_template)


def test_no_drift_no_pull_request(wf: dict[str, Any], live: Live) -> None:
    res = live.step(wf, "toolkit upstream")
    assert res.returncode == 0, res.stderr
    assert live.outputs() == {"drift": "false"}
    assert "no drift" in res.stderr


def test_drift_writes_the_data_and_the_body(wf: dict[str, Any], live: Live) -> None:
    c26 = live.repo("pytorch/test-infra").commit(
        {SCRIPT: _matrix_script("2.6.0", ["6.1"])})[:9]  # upstream makes torch 2.6 stable on 6.1
    new = live.repo("ROCm/apex").commit({"version.txt": "1.2.0\n"}, branch="release/1.2.0",
                                        base="release/1.1.0")[:9]  # and cuts apex 1.2.0
    res = live.step(wf, "toolkit upstream")
    assert res.returncode == 0, res.stderr
    assert live.outputs() == {"drift": "true"}
    assert 'torch."2.6"' not in (live.data / "rocm.toml").read_text(), "the check writes nothing"

    res = live.step(wf, "toolkit upstream --write --pr-body")
    assert res.returncode == 0, res.stderr
    body_path = live.outputs()["body"]
    assert Path(body_path).parent == live.tmp / "runner"
    body = Path(body_path).read_text()
    assert f"pytorch/test-infra@{c26}" in body and f"release/1.2.0 @{new}" in body
    assert live.summary.read_text() == body, "the run's summary shows the body too"
    assert f'evidence = "pytorch/test-infra@{c26}' in (live.data / "rocm.toml").read_text()


def test_a_failing_check_fails_the_job(wf: dict[str, Any], live: Live) -> None:
    """Exit 1 is drift; bad data (exit 3) is no drift to open a pull request for."""
    rocm = live.data / "rocm.toml"
    rocm.write_text(rocm.read_text().replace('hip = "6.0"', 'hip = 6.0'))
    res = live.step(wf, "toolkit upstream")
    assert res.returncode == 3, res.stdout + res.stderr
    assert "drift" not in live.outputs()


def test_the_push_holds_only_the_data_change_and_is_replaced_each_run(
        wf: dict[str, Any], tmp_path: Path) -> None:
    """The pull request step's git commands, run for real on a clone of this checkout with a
    local bare repository as origin (the gh commands need GitHub: checked by reading above)."""
    def git(*args: str, cwd: Path) -> str:
        return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                              text=True, env={**os.environ, **_GIT_ENV}).stdout.strip()

    origin = tmp_path / "origin.git"
    work = tmp_path / "work"
    git("init", "--quiet", "--bare", str(origin), cwd=tmp_path)
    git("clone", "--quiet", "--no-hardlinks", str(ROOT), str(work), cwd=tmp_path)
    git("remote", "set-url", "origin", str(origin), cwd=work)
    run = _named(wf, "Open or update the upstream/drift pull request")["run"]
    script = "\n".join(ln for ln in run.replace("\\\n", " ").splitlines() if not
                       any(w in ln for w in ("gh ", "number=", "if ", "else", "fi")))
    env = {**os.environ, **_GIT_ENV, "DRIFT_BRANCH": "upstream/drift"}
    base = git("rev-parse", "HEAD", cwd=work)
    for n in (1, 2):
        git("switch", "--quiet", "--detach", base, cwd=work)
        git("branch", "--quiet", "-D", "upstream/drift", cwd=work) if n == 2 else None
        (work / "toolkit" / "data" / "rocm.toml").write_text(f"# run {n}\n")
        (work / "stray.txt").write_text("not data\n")
        res = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script], cwd=work, env=env,
                             capture_output=True, text=True, timeout=120)
        assert res.returncode == 0, res.stderr
        pushed = git("--git-dir", str(origin), "rev-parse", "refs/heads/upstream/drift", cwd=tmp_path)
        assert git("--git-dir", str(origin), "rev-parse", f"{pushed}^", cwd=tmp_path) == base
        changed = git("--git-dir", str(origin), "diff", "--name-only", base, pushed, cwd=tmp_path)
        assert changed == "toolkit/data/rocm.toml", "only the data change, never a stray file"
        (work / "stray.txt").unlink()
