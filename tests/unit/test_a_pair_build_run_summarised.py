"""What a build session says once its plans ran (``toolkit.cli.running.run_and_summarise``;
the runner's outcomes stand in for builds): the table, then each failed build's signature
under it, the JUnit file when asked (one test case per build, read back with the stdlib XML
parser), and how it ends: the first failing build's exit code with the builds and steps that
failed, exit 7 naming the known failures left out when nothing else failed, 130 on Ctrl-C
with the line saying the manifest records the step that was running (README "## Exit codes")."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from toolkit.cli import running
from toolkit.cli.running import Finished
from toolkit.run import jobs
from toolkit.run.jobs import Outcome


def _plan(build_id: str) -> Any:
    return SimpleNamespace(build=SimpleNamespace(id=build_id), steps=[])


def _runs(monkeypatch: pytest.MonkeyPatch, result: list[Outcome] | BaseException) -> list[Any]:
    given: list[Any] = []

    def run_plans(plans: Any, layout: Any, reporter: Any) -> list[Outcome]:
        given.append((plans, layout, reporter))
        if isinstance(result, BaseException):
            raise result
        return result

    monkeypatch.setattr(jobs, "run_plans", run_plans)
    return given


FAILURE = {"step": "build-wheel", "exit_code": 1, "signature": ["error: no \x1b[2J hipcc", "x.cpp:1"]}


def test_a_failed_build_ends_with_its_code_its_step_and_its_signature(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    _runs(monkeypatch, [Outcome("a-1", "a", wheel="a.whl", checks="ok", smoke="ok", seconds=2.0),
                        Outcome("b-1", "b", error="compile failed", exit_code=5,
                                failed_step="build-wheel", failure=FAILURE)])
    with pytest.raises(Finished) as done:
        running.run_and_summarise([_plan("a-1"), _plan("b-1")], None)
    assert (done.value.code, done.value.reason) == (5, "1 of 2 builds failed: b-1 at build-wheel")
    out = capsys.readouterr().out.splitlines()
    at = out.index("b-1 failed at build-wheel (exit 1); its signature:")
    assert out[at + 1:] == ["    error: no \\x1b[2J hipcc", "    x.cpp:1"]
    assert any("Builds" in line for line in out[:at])  # the table above it


def test_the_junit_file_has_one_case_per_build(monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str],
                                               tmp_path: Path) -> None:
    _runs(monkeypatch, [Outcome("a-1", "a"), Outcome("b-1", "b", error="compile failed",
                                                    exit_code=5, failed_step="build-wheel")])
    junit = tmp_path / "builds.xml"
    with pytest.raises(Finished):
        running.run_and_summarise([_plan("a-1"), _plan("b-1")], None, junit=str(junit))
    cases = {c.get("name"): c for c in ET.parse(junit).getroot().iter("testcase")}
    assert set(cases) == {"a-1", "b-1"}
    assert cases["a-1"].find("failure") is None and cases["b-1"].find("failure") is not None


def test_known_failures_left_out_end_with_exit_7(monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str],
                                                 tmp_path: Path) -> None:
    _runs(monkeypatch, [Outcome("a-1", "a")])
    with pytest.raises(Finished) as done:
        running.run_and_summarise([_plan("a-1")], None, refused=2)
    assert (done.value.code, done.value.reason) == (
        7, "2 known failures left out (--include-known-failures runs them)")
    given = _runs(monkeypatch, [Outcome("a-1", "a")])
    plans, layout = [_plan("a-1")], SimpleNamespace(root=tmp_path)
    running.run_and_summarise(plans, layout)  # all well: no Finished
    # the runner is given these plans, in this work folder, and reports as it goes
    ((ran, where, reporter),) = given
    assert ran == plans and where is layout
    assert type(reporter).__name__ == "StreamReporter"


def test_ctrl_c_is_130_and_says_where_the_step_is_recorded(monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    _runs(monkeypatch, KeyboardInterrupt())
    with pytest.raises(Finished) as done:
        running.run_and_summarise([_plan("a-1")], None)
    assert (done.value.code, done.value.reason) == (130, "interrupted")
    assert capsys.readouterr().err == "interrupted: the manifest records the step that was running\n"


def test_the_reason_names_builds_without_a_step_and_counts_one_build() -> None:
    one = [Outcome("a-1", "a", exit_code=4)]
    assert running.failed_reason(one, set(), []) == "1 of 1 build failed: a-1"
    assert running.failed_reason([Outcome("a-1", "a", exit_code=1)], {"a-1"}, ["k-1", "k-2"]) == \
        "known failure no longer fails: k-1, k-2"
