"""Every timeout fires whether or not the child prints, and stops the child's whole group.

Real children (sh, sleep, python), real process groups: a group is stopped when none of its
processes still runs (``/proc``: what is left is zombies waiting for PID 1); elapsed times
are measured against sleeps far longer than the limits.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from toolkit.core import errors, proc
from toolkit.core.errors import CheckFailed, TimedOut
from toolkit.core.reporter import ListReporter
from toolkit.core.steps import Command, Smoke, Step
from toolkit.data.matrix import load_matrix
from toolkit.env.host import HostFacts
from toolkit.plan.layout import Layout
from toolkit.plan.model import Options
from toolkit.plan.planner import plan
from toolkit.plan.recipes.sample import demo_build
from toolkit.run.executor import execute

# prints its process group id, starts a grandchild in the group, then sleeps silently
SILENT = 'echo "$$"; sleep 300 & exec sleep 300'


def running_in_group(pgid: int) -> list[int]:
    """The processes of group ``pgid`` that still run: a killed one stays a zombie until its
    new parent (PID 1) reaps it, which can take a second or more; a zombie runs nothing
    (state ``Z`` in ``/proc/PID/stat``, proc(5))."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):  # gone while read
            continue
        state, pgrp = fields[0], int(fields[2])
        if pgrp == pgid and state not in ("Z", "X"):
            found.append(int(stat.parent.name))
    return found


def group_alive(pgid: int, wait: float = 5.0) -> bool:
    """Whether a process of group ``pgid`` still runs after ``wait`` seconds."""
    deadline = time.monotonic() + wait
    while True:
        if not running_in_group(pgid):
            return False
        if time.monotonic() > deadline:
            return True
        time.sleep(0.05)


def test_a_silent_child_is_stopped_at_its_limit_with_its_whole_group() -> None:
    lines: list[str] = []
    start = time.monotonic()
    with pytest.raises(errors.CommandFailed) as exc:
        proc.stream(["sh", "-c", SILENT], on_line=lines.append, timeout=1.5)
    elapsed = time.monotonic() - start
    assert 1.5 <= elapsed < 10, elapsed  # not after the 300 s sleep
    assert exc.value.timed_out and exc.value.limit == 1.5 and exc.value.returncode is None
    assert str(exc.value).startswith("timed out after 1.5 s: sh -c")
    pgid = int(lines[0])
    assert not group_alive(pgid)  # the grandchild `sleep 300` too


def test_a_child_that_never_stops_printing_is_stopped_at_its_limit() -> None:
    count = [0]

    def on_line(_: str) -> None:
        count[0] += 1

    start = time.monotonic()
    with pytest.raises(errors.CommandFailed) as exc:
        proc.stream([sys.executable, "-c", "import os\nprint(os.getpgid(0), flush=True)\n"
                     "while True: print('x' * 50, flush=True)"], on_line=on_line, timeout=1.0)
    assert time.monotonic() - start < 10
    assert exc.value.timed_out and count[0] > 100
    assert exc.value.tail[-1] == "x" * 50


def test_a_child_ignoring_sigterm_is_killed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(proc, "KILL_GRACE_S", 1.0)
    lines: list[str] = []
    start = time.monotonic()
    with pytest.raises(errors.CommandFailed) as exc:
        proc.stream(["sh", "-c", "trap '' TERM; echo $$; sleep 300 & wait"],
                    on_line=lines.append, timeout=1.0)
    assert exc.value.timed_out and time.monotonic() - start < 10
    assert not group_alive(int(lines[0]))


def test_run_stops_the_group_even_when_a_grandchild_holds_the_pipe() -> None:
    start = time.monotonic()
    with pytest.raises(errors.CommandFailed) as exc:
        proc.run(["sh", "-c", SILENT], timeout=1.0)
    assert time.monotonic() - start < 15
    assert exc.value.timed_out and exc.value.tail[0].isdigit()
    assert not group_alive(int(exc.value.tail[0]))


def test_within_the_limit_nothing_changes() -> None:
    lines: list[str] = []
    assert proc.stream(["sh", "-c", "echo a; sleep 0.2; printf b"], on_line=lines.append,
                       timeout=30) == 0
    assert lines == ["a\n", "b"]
    with pytest.raises(errors.CommandFailed) as exc:
        proc.stream(["sh", "-c", "echo a; exit 3"], on_line=lines.append, timeout=30)
    assert exc.value.returncode == 3 and not exc.value.timed_out
    assert proc.run(["sh", "-c", "echo out; echo err >&2"], timeout=30).stderr == "err\n"


def a_plan(tmp: Path, *steps: Step) -> tuple[Layout, object]:
    layout = Layout(tmp / "work", tmp / "cache")
    p = plan(load_matrix(), demo_build("3.11", None), Options(gfx=("gfx90a",), rocm_from="system"),
             HostFacts(), layout)
    return layout, dataclasses.replace(p, steps=steps)


def test_a_step_past_its_limit_is_timed_out_naming_the_step_and_the_limit(tmp_path: Path) -> None:
    step = Step("build-wheel", "a silent hang", Command(("sh", "-c", SILENT), timeout=1.0))
    layout, p = a_plan(tmp_path, step)
    reporter = ListReporter()
    with pytest.raises(TimedOut) as exc:
        execute(p, layout, reporter=reporter)  # type: ignore[arg-type]
    assert exc.value.exit_code == 9
    assert str(exc.value) == ("step 'build-wheel' timed out after 1 s (the limit of its command; "
                              "its process group was stopped): sh -c " + SILENT)
    assert reporter.started == ["[1/1] build-wheel"]
    assert reporter.lines[-1].startswith("[1/1] build-wheel FAILED")


def test_a_smoke_step_that_timed_out_stays_a_timeout(tmp_path: Path) -> None:
    """`toolkit smoke` exits 9 with its one line: the step says it, exit 9 (not a failed
    check, exit 1); any other failure of the step is a failed check."""
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\necho 'some pytest output'\n"
                    "echo \"error: smoke test t.py::x of b timed out after 2 s (the per-test "
                    "limit, --test-timeout)\" >&2\nexit ${CODE:-9}\n")
    fake.chmod(0o755)
    action = Smoke(str(fake), str(tmp_path / "env"), "b", ("gfx90a",), str(tmp_path),
                   str(tmp_path))
    layout, p = a_plan(tmp_path, Step("smoke", "smoke", action))

    def manifest(run: Any) -> None:  # what a build's first manifest write teaches the run
        run.values["MANIFEST"] = str(tmp_path / "manifest.json")

    with pytest.raises(TimedOut) as exc:
        execute(p, layout, on_start=manifest)  # type: ignore[arg-type]
    assert str(exc.value) == ("step 'smoke': smoke test t.py::x of b timed out after 2 s (the "
                              "per-test limit, --test-timeout)")
    os.environ["CODE"] = "1"
    try:
        with pytest.raises(CheckFailed, match="step 'smoke' failed"):
            execute(p, layout, on_start=manifest)  # type: ignore[arg-type]
    finally:
        del os.environ["CODE"]



def test_a_smoke_timeout_that_said_nothing_is_still_named_a_timeout(tmp_path: Path) -> None:
    """A smoke run that exits 9 (`toolkit smoke`'s time-out code, README) without its
    ``error:`` line: the step still says it timed out, exit 9."""
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\necho 'some pytest output'\nexit 9\n")
    fake.chmod(0o755)
    action = Smoke(str(fake), str(tmp_path / "env"), "b", ("gfx90a",), str(tmp_path),
                   str(tmp_path))
    layout, p = a_plan(tmp_path, Step("smoke", "smoke", action))

    def manifest(run: Any) -> None:
        run.values["MANIFEST"] = str(tmp_path / "manifest.json")

    with pytest.raises(TimedOut) as exc:
        execute(p, layout, on_start=manifest)  # type: ignore[arg-type]
    assert exc.value.exit_code == 9
    assert str(exc.value).startswith("step 'smoke': the smoke run timed out")

def test_the_log_holds_the_output_whatever_the_reporter(tmp_path: Path) -> None:
    """The reporter hears the lines (step_output) the log keeps; the log is the same."""
    step = Step("build-wheel", "prints", Command(("sh", "-c", "echo one; echo two")))
    layout, p = a_plan(tmp_path, step)
    reporter = ListReporter()
    run = execute(p, layout, reporter=reporter)  # type: ignore[arg-type]
    assert reporter.step_lines == ["one", "two"]
    log = (layout.artifacts(run.plan.build) / "build.log").read_text()
    assert log == "\n$ sh -c echo one; echo two\none\ntwo\n"


def test_a_list_reporter_keeps_each_step_line_as_printed_less_its_newline(tmp_path: Path) -> None:
    """``ListReporter`` keeps what it hears: a step's line with its own leading and trailing
    blanks (a tab, spaces: what the command printed, as in the log) loses only the newline."""
    step = Step("build-wheel", "prints", Command(("sh", "-c", "printf '  two\\t \\n'")))
    layout, p = a_plan(tmp_path, step)
    reporter = ListReporter()
    run = execute(p, layout, reporter=reporter)  # type: ignore[arg-type]
    assert reporter.step_lines == ["  two\t "]
    log = (layout.artifacts(run.plan.build) / "build.log").read_text()
    assert log.endswith("\n  two\t \n")
