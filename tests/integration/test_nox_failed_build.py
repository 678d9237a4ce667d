"""A build that really fails, under real nox: ``nox --report r.json -s A B`` where A's build
fails at build-wheel (a C file that does not compile). nox records A as aborted with the
toolkit's line (``... (exit 5)``), still runs B, writes r.json; ``python -m toolkit report``
shows A's exit code and reason (the summary CI writes after its build step)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures.nox_runs import failures

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]

NOXFILE = '''
import nox

from toolkit.cli import sessions


@nox.session(python=False)
def broken(session):
    sessions.demo(session, ["--source", {source!r}, "--cpu", "--no-smoke", "--workdir", {work!r}])


@nox.session(python=False)
def after(session):
    session.log("after: ran")
'''


def test_failed_build_is_recorded_reported_and_the_next_session_runs(tmp_path: Path) -> None:
    source = tmp_path / "brk"
    (source / "brk").mkdir(parents=True)
    (source / "brk" / "__init__.py").write_text("")
    (source / "x.c").write_text("int f(void) { return undefined_thing; }\n")
    (source / "setup.py").write_text(
        "from setuptools import Extension, setup\n"
        "setup(name='brk', version='0.1', packages=['brk'],\n"
        "      ext_modules=[Extension('brk._x', ['x.c'])])\n")
    work = tmp_path / "work"
    (tmp_path / "noxfile.py").write_text(NOXFILE.format(source=str(source), work=str(work)))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TOOLKIT_CACHE_DIR": str(tmp_path / "cache"),
           "CI": "true"}
    env.pop("GITHUB_STEP_SUMMARY", None)
    report = tmp_path / "r.json"
    res = subprocess.run([sys.executable, "-m", "nox", "-f", str(tmp_path / "noxfile.py"),
                          "--report", str(report), "-s", "broken", "after"], cwd=tmp_path,
                         env=env, capture_output=True, text=True, timeout=900)
    out = res.stdout + res.stderr
    assert res.returncode == 1, out[-4000:]
    assert "Traceback" not in out
    assert "undefined_thing" in out  # the compiler's own error, streamed
    assert "after: ran" in res.stderr
    build_id = "brk-0.1-cp311-cpu" if sys.version_info[:2] == (3, 11) else None
    message, code = failures(res.stderr)["broken"]
    assert code == 5  # README: a build step failed
    assert message.startswith("1 of 1 build failed: brk-0.1-") and message.endswith(
        " at build-wheel"), message
    manifest = json.loads(next((work / "artifacts").glob("*/manifest.json")).read_text())
    assert manifest["outcome"] == "failed" and manifest["failed_step"] == "build-wheel"
    if build_id:
        assert manifest["build"]["id"] == build_id

    doc = json.loads(report.read_text())
    results = {s["name"]: s for s in doc["sessions"]}
    assert results["broken"]["result"] == "aborted" and results["after"]["result"] == "success"
    assert results["broken"]["reason"] == f"error: {message} (exit 5)"

    summary = subprocess.run([sys.executable, "-m", "toolkit", "report", "--nox-report",
                              str(report), "--json", "--strict"], cwd=tmp_path, env=env,
                             capture_output=True, text=True, timeout=120)
    assert summary.returncode == 1, summary.stderr  # --strict: a session failed
    rows = {r["name"]: r for r in json.loads(summary.stdout)["rows"]}
    assert (rows["broken"]["outcome"], rows["broken"]["exit_code"]) == ("failed", 5)
    assert rows["broken"]["reason"] == message
    assert (rows["after"]["outcome"], rows["after"]["exit_code"]) == ("passed", None)

    # the same body from the CLI (and invoke, which calls it): the exit code itself
    cli = subprocess.run([sys.executable, "-m", "toolkit", "demo", "--source", str(source),
                          "--cpu", "--no-smoke", "--workdir", str(work)], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=900)
    assert cli.returncode == 5, (cli.stdout + cli.stderr)[-3000:]
    assert not [ln for ln in (cli.stdout + cli.stderr).splitlines()
                if ln.startswith("error: ") and ln.endswith("(exit 5)")]  # nox's wording only
    assert "Traceback" not in cli.stderr
