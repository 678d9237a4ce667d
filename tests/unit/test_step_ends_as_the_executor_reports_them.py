"""How ``toolkit.run.executor.execute`` ends each step, as the reporter hears it and the build
log keeps it: ok, skipped (an environment reused, or a handler's reason), FAILED with the first
line of the error, ``interrupted`` for Ctrl-C, and an ``OSError`` turned into one line naming
the step (exit 5, the README's "a build step (or a command it runs) failed").

The commands are real (``true``, ``sh -c``); the truths are the README's exit-code table and
the words written here by hand.
"""

from __future__ import annotations

import errno
from pathlib import Path
from typing import Any

import pytest

from toolkit.core.command import Command
from toolkit.core.errors import DataError, StepFailed, ToolkitError, UsageError
from toolkit.core.reporter import NullReporter
from toolkit.core.steps import Step
from toolkit.plan.layout import Layout
from toolkit.plan.model import Plan
from toolkit.plan.recipes import load_matrix
from toolkit.run import executor
from toolkit.run.context import Run, StepResult

BUILD = "apex-1.8.0-cp311-rocm7.0"


class Heard(NullReporter):
    def __init__(self) -> None:
        self.started: list[tuple[int, int, str]] = []
        self.ends: list[tuple[int, int, str, str, str | None]] = []

    def step_started(self, index: int, total: int, name: str) -> None:
        self.started.append((index, total, name))

    def step(self, index: int, total: int, name: str, status: str, seconds: float,
             reason: str | None = None) -> None:
        assert 0 <= seconds < 60
        self.ends.append((index, total, name, status, reason))


def step(name: str, *argv: str, reuse_env: bool = False) -> Step:
    return Step(name, f"the {name} step", Command(tuple(argv)), reuse_env=reuse_env)


def plan(*steps: Step) -> Plan:
    return Plan(load_matrix().build(BUILD), ("gfx942",), None, tuple(steps))


@pytest.fixture
def layout(tmp_path: Path) -> Layout:
    return Layout(tmp_path / "work", tmp_path / "cache")


def log_of(layout: Layout, name: str = "build.log") -> str:
    return (layout.root / "artifacts" / BUILD / name).read_text(encoding="utf-8")


def raising(exc: BaseException) -> Any:
    def handler(s: Step, run: Run) -> StepResult | str:
        raise exc
    return handler


def test_a_ctrl_c_in_a_step_is_reported_failed_as_interrupted_and_propagates(
        layout: Layout, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(executor.HANDLERS, Command, raising(KeyboardInterrupt()))
    heard, out = Heard(), []  # type: ignore[var-annotated]
    with pytest.raises(KeyboardInterrupt):
        executor.execute(plan(step("compile", "true"), step("check", "true")), layout,
                         reporter=heard, run_out=out)
    assert heard.started == [(1, 2, "compile")]
    assert heard.ends == [(1, 2, "compile", "FAILED", "interrupted")]
    assert out[0].failed_step == "compile"


def test_a_toolkit_error_is_reported_with_its_first_line_only(
        layout: Layout, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(executor.HANDLERS, Command,
                        raising(StepFailed("step 'compile': broke here\n  more detail")))
    heard = Heard()
    with pytest.raises(StepFailed) as err:
        executor.execute(plan(step("compile", "true")), layout, reporter=heard)
    assert err.value.exit_code == 5  # README: a build step (or a command it runs) failed
    assert heard.ends == [(1, 1, "compile", "FAILED", "step 'compile': broke here")]


@pytest.mark.parametrize("message", ["", "  \n", None])
def test_an_error_cannot_be_raised_without_a_line_for_the_user(message: object) -> None:
    """What the entry points print of a refusal is its message: an empty one (or None, which
    would print "None") is a bug at the raise, refused there with a TypeError naming the class
    -- not a refusal with exit 2 and nothing said."""
    for cls in (ToolkitError, UsageError, DataError):
        with pytest.raises(TypeError, match=cls.__name__):
            cls(message)  # type: ignore[arg-type]


def test_a_multi_line_error_is_reported_by_its_first_line(
        layout: Layout, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(executor.HANDLERS, Command, raising(ToolkitError("broke\n  detail")))
    heard = Heard()
    with pytest.raises(ToolkitError):
        executor.execute(plan(step("compile", "true")), layout, reporter=heard)
    assert heard.ends == [(1, 1, "compile", "FAILED", "broke")]


def test_an_os_error_is_one_line_naming_the_step_and_exit_5(
        layout: Layout, monkeypatch: pytest.MonkeyPatch) -> None:
    full = OSError(errno.ENOSPC, "No space left on device", "/work/dist/x.whl")
    monkeypatch.setitem(executor.HANDLERS, Command, raising(full))
    heard, out = Heard(), []  # type: ignore[var-annotated]
    with pytest.raises(StepFailed) as err:
        executor.execute(plan(step("publish", "true")), layout, reporter=heard, run_out=out)
    assert err.value.exit_code == 5
    message = err.value.message
    assert message.startswith("step 'publish': ") and "\n" not in message
    assert "/work/dist/x.whl" in message and "No space left on device" in message
    assert err.value.__suppress_context__  # one line, no chained traceback
    assert heard.ends == [(1, 1, "publish", "FAILED", message)]
    assert out[0].failed_step == "publish"


def test_steps_that_pass_are_ok_in_order_with_their_index_and_total(layout: Layout) -> None:
    heard = Heard()
    run = executor.execute(plan(step("one", "true"), step("two", "sh", "-c", "echo hi")),
                           layout, reporter=heard)
    assert heard.started == [(1, 2, "one"), (2, 2, "two")]
    assert heard.ends == [(1, 2, "one", "ok", None), (2, 2, "two", "ok", None)]
    assert [(r.name, r.returncode, r.skipped) for r in run.results] == [
        ("one", 0, None), ("two", 0, None)]
    assert all(r.seconds >= 0 for r in run.results)
    assert run.failed_step is None
    assert "$ true\n" in log_of(layout) and "hi\n" in log_of(layout)


def test_a_step_of_a_reused_environment_is_skipped_unrun_and_said_in_the_log(
        layout: Layout, monkeypatch: pytest.MonkeyPatch) -> None:
    heard = Heard()

    def reuse(run: Run) -> None:
        run.env_reused = True

    run = executor.execute(plan(step("make-env", "sh", "-c", "exit 1", reuse_env=True),
                                step("compile", "true")),
                           layout, reporter=heard, on_start=reuse)
    assert heard.started == [(2, 2, "compile")]  # the skipped step never started
    assert heard.ends == [(1, 2, "make-env", "skipped", None), (2, 2, "compile", "ok", None)]
    skipped = run.results[0]
    assert (skipped.name, skipped.argv, skipped.skipped) == (
        "make-env", ["sh", "-c", "exit 1"], "environment up to date")
    assert skipped.returncode is None
    assert "\n# make-env: skipped: environment up to date\n" in log_of(layout)


def test_a_reuse_step_runs_when_the_environment_was_not_reused(layout: Layout) -> None:
    heard = Heard()
    with pytest.raises(StepFailed):
        executor.execute(plan(step("make-env", "sh", "-c", "exit 3", reuse_env=True)),
                         layout, reporter=heard)
    assert heard.ends[0][:4] == (1, 1, "make-env", "FAILED")


def test_a_handler_reason_is_a_skip_and_only_filters_steps_keeping_their_index(
        layout: Layout, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(executor.HANDLERS, Command, lambda s, run: f"nothing to do for {s.name}")
    heard = Heard()
    run = executor.execute(plan(step("a", "true"), step("b", "true"), step("c", "true")),
                           layout, reporter=heard, only=lambda s: s.name != "b",
                           log_name="other.log")
    assert heard.ends == [(1, 3, "a", "skipped", None), (3, 3, "c", "skipped", None)]
    assert [r.skipped for r in run.results] == ["nothing to do for a", "nothing to do for c"]
    log = log_of(layout, "other.log")
    assert "# a: skipped: nothing to do for a\n" in log and "# b:" not in log
    assert not (layout.root / "artifacts" / BUILD / "build.log").exists()


def test_each_step_start_is_where_its_output_begins_in_the_log(layout: Layout) -> None:
    starts: list[int] = []

    def record(s: Step, run: Run) -> StepResult | str:
        starts.append(run.step_start)
        run.log.write(f"output of {s.name}\n")
        return "done"

    executor.HANDLERS[Command], before = record, executor.HANDLERS[Command]
    try:
        executor.execute(plan(step("a", "true"), step("b", "true")), layout)
    finally:
        executor.HANDLERS[Command] = before
    log = log_of(layout)
    assert starts[0] == 0
    assert log[starts[1]:].startswith("output of b\n")
    assert log[:starts[1]] == "output of a\n\n# a: skipped: done\n"


def test_the_log_is_utf_8_whatever_the_locale(layout: Layout) -> None:
    """A host whose locale is not UTF-8 (LC_CTYPE=C: ASCII) still logs a command naming a
    non-ASCII path: the log is written as UTF-8."""
    import locale

    before = locale.setlocale(locale.LC_CTYPE)
    locale.setlocale(locale.LC_CTYPE, "C")
    try:
        executor.execute(plan(step("compile", "true", "/src/café/‘x’")), layout)
    finally:
        locale.setlocale(locale.LC_CTYPE, before)
    raw = (layout.root / "artifacts" / BUILD / "build.log").read_bytes()
    assert raw == "\n$ true /src/café/‘x’\n".encode()
