"""A command step that cannot start names the step and why, before the command
(``toolkit.run.context.run_command``): a placeholder no earlier step learned, a program that
is not there, a file that is no program.

The truths: ``toolkit.core.steps.placeholders.PLACEHOLDER_HELP`` ({SHA} is learned by
get-sources, an earlier step), POSIX execve(2) (ENOENT for a missing program, EACCES for a
file without an execute bit, whoever runs it), the README's exit code 5 (a build step failed).
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from toolkit.core.command import Command
from toolkit.core.errors import StepFailed
from toolkit.core.steps import Step
from toolkit.plan.layout import Layout
from toolkit.plan.model import Plan
from toolkit.plan.recipes import load_matrix
from toolkit.run.context import Run, run_command

BUILD = "apex-1.8.0-cp311-rocm7.0"


def a_run(tmp_path: Path) -> Run:
    plan = Plan(load_matrix().build(BUILD), ("gfx942",), None, ())
    return Run(plan, Layout(tmp_path / "work", tmp_path / "cache"), io.StringIO())


def failure_of(tmp_path: Path, cmd: Command, name: str = "build-wheel") -> StepFailed:
    with pytest.raises(StepFailed) as caught:
        run_command(Step(name, "d", cmd), cmd, a_run(tmp_path))
    assert caught.value.exit_code == 5
    return caught.value


def test_a_placeholder_no_earlier_step_learned_is_named_with_the_step(tmp_path: Path) -> None:
    err = failure_of(tmp_path, Command(("echo", "commit={SHA}")))
    assert err.message.startswith("step 'build-wheel': {SHA} was never learned by an earlier")


def test_a_placeholder_in_the_environment_is_refused_the_same_way(tmp_path: Path) -> None:
    err = failure_of(tmp_path, Command(("true",), env={"V": "{TORCH_LIB}/x"}), name="smoke")
    assert err.message.startswith("step 'smoke': {TORCH_LIB} was never learned")


def test_a_missing_program_is_named_with_the_step_and_the_reason(tmp_path: Path) -> None:
    missing = str(tmp_path / "no-such-tool")
    err = failure_of(tmp_path, Command((missing, "--flag")))
    assert err.message.startswith(f"step 'build-wheel': command not found: {missing}")


def test_a_file_that_is_no_program_is_named_with_the_os_reason(tmp_path: Path) -> None:
    plain = tmp_path / "plain.sh"
    plain.write_text("#!/bin/sh\nexit 0\n")
    plain.chmod(0o644)  # no execute bit: EACCES, root included
    err = failure_of(tmp_path, Command((str(plain),)))
    assert err.message.startswith("step 'build-wheel': cannot run (Permission denied): ")
    assert err.message.endswith(f": {plain}")
