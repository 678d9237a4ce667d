"""A failing toolkit session, run by real nox: nox's own failure model (``session.error``).

``nox --report r.json -s A B`` where A fails: nox records A as aborted with the toolkit's
line (``error: ... (exit N)``, README "Exit codes"), still runs B, writes r.json, and exits
non-zero; ``python -m toolkit report --nox-report r.json`` shows A's exit code and reason.
The noxfile is a small one in tmp_path calling the toolkit's own session bodies.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures.nox_runs import failures
from toolkit.plan.recipes import load_matrix

ROOT = Path(__file__).resolve().parents[2]

NOXFILE = '''
import nox

from toolkit.cli import sessions


@nox.session(python=False)
def bad_source(session):
    sessions.demo(session, ["--source", {missing!r}, "--workdir", {work!r}])


@nox.session(python=False)
def bad_package(session):
    sessions.build(session, "3.12", "7.0", ["--package", "nosuch", "--workdir", {work!r}])


@nox.session(python=False)
def bad_option(session):
    sessions.build(session, "3.12", "7.0", ["--no-such-option"])


@nox.session(python=False)
def help(session):
    sessions.demo(session, ["--help"])


@nox.session(python=False)
def after(session):
    session.log("after: ran")
'''


def nox(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TOOLKIT_CACHE_DIR": str(folder / "cache")}
    env.pop("NOXSESSION", None)
    return subprocess.run([sys.executable, "-m", "nox", "-f", str(folder / "noxfile.py"), *args],
                          cwd=folder, env=env, capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("noxfails")
    (folder / "noxfile.py").write_text(NOXFILE.format(missing=str(folder / "no-such-project"),
                                                      work=str(folder / "work")))
    return folder


@pytest.fixture(scope="module")
def ran(folder: Path) -> tuple[subprocess.CompletedProcess[str], Path]:
    report = folder / "r.json"
    res = nox(folder, "--report", str(report), "-s", "bad_source", "bad_package", "bad_option",
              "help", "after")
    return res, report


def test_failed_sessions_are_recorded_and_the_next_ones_run(
        ran: tuple[subprocess.CompletedProcess[str], Path]) -> None:
    res, report = ran
    assert res.returncode == 1, res.stderr[-3000:]  # nox: a session failed
    assert "Traceback" not in res.stdout + res.stderr
    assert "after: ran" in res.stderr  # sessions after the failed ones still ran
    assert "usage: nox -s demo --" in res.stdout + res.stderr  # --help: exit 0, a success
    doc = json.loads(report.read_text())  # written although sessions failed
    results = {s["name"]: (s["result"], s["reason"]) for s in doc["sessions"]}
    assert doc["result"] == 0
    assert results["after"] == ("success", None) and results["help"] == ("success", None)
    for name in ("bad_source", "bad_package", "bad_option"):
        assert results[name][0] == "aborted"
    # the toolkit's own code, in the session's last line and in the report
    seen = failures(res.stderr)
    assert set(seen) == {"bad_source", "bad_package", "bad_option"}
    message, code = seen["bad_source"]
    assert code == 2 and message.startswith("--source ") and "no such folder" in message
    valid = ", ".join(sorted(load_matrix().packages))  # the data's packages, whatever they are
    assert seen["bad_package"] == (f"unknown package 'nosuch'; valid: {valid}", 2)
    assert seen["bad_option"] == ("nox -s build-3.12-rocm7.0 --: unrecognized arguments: "
                                  "--no-such-option", 2)
    assert results["bad_package"][1] == f"error: unknown package 'nosuch'; valid: {valid} (exit 2)"
    # each failed session ends with nox's line: nothing of the toolkit's after it
    lines = res.stderr.splitlines()
    for name in seen:
        start = lines.index(f"nox > Running session {name}")
        end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("nox > Session"))
        assert lines[end].startswith(f"nox > Session {name} aborted: error: ")
        assert not [ln for ln in lines[start:end] if ln.startswith("error:")]


def test_toolkit_report_shows_the_exit_code_and_reason(
        ran: tuple[subprocess.CompletedProcess[str], Path], tmp_path: Path) -> None:
    _, report = ran
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("GITHUB_STEP_SUMMARY", None)
    md = tmp_path / "summary.md"
    res = subprocess.run([sys.executable, "-m", "toolkit", "report", "--nox-report", str(report),
                          "--json", "--markdown", str(md)],
                         capture_output=True, text=True, timeout=120, env=env)
    assert res.returncode == 0, res.stderr  # the summary only (README: --strict fails)
    rows = {r["name"]: r for r in json.loads(res.stdout)["rows"]}
    assert rows["bad_package"]["outcome"] == "failed" and rows["bad_package"]["exit_code"] == 2
    valid = ", ".join(sorted(load_matrix().packages))
    assert rows["bad_package"]["reason"] == f"unknown package 'nosuch'; valid: {valid}"
    assert rows["after"]["outcome"] == "passed" and rows["after"]["exit_code"] is None
    text = md.read_text()
    assert f"- `bad_package` (r.json): exit 2: unknown package 'nosuch'; valid: {valid}" in text
    assert "| ❌ | nox | `r.json` | `bad_package` | failed | 2 |" in text
    table = subprocess.run([sys.executable, "-m", "toolkit", "report", "--nox-report",
                            str(report), "--strict"],
                           capture_output=True, text=True, timeout=120, env=env)
    assert table.returncode == 1, table.stderr  # --strict: a session failed
    row = next(ln for ln in table.stdout.splitlines() if "bad_package" in ln)
    assert " failed " in row and " 2 " in row and "unknown package 'nosuch'" in row


def test_the_cli_keeps_its_exit_codes(folder: Path) -> None:
    """The same bodies from ``python -m toolkit``: the exit code itself, one ``error:`` line."""
    res = subprocess.run([sys.executable, "-m", "toolkit", "demo", "--source",
                          str(folder / "no-such-project")], capture_output=True, text=True,
                         timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert res.returncode == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: --source ")
    assert "(exit 2)" not in lines[0]
