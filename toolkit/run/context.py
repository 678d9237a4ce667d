"""The state of one running plan, shared by the executor and the step handlers.

``Run`` holds what earlier steps learned (``values``, for placeholders), the log file and
the reporter; ``run_command`` runs a ``Command`` with placeholders filled, its output
streamed (masked) into the log and, for ``echo`` commands, to the reporter.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TextIO

from toolkit.core.errors import (
    CommandFailed,
    CommandStepFailed,
    StepFailed,
    TimedOut,
    ToolkitError,
    status,
)
from toolkit.core.proc import stream
from toolkit.core.reporter import NullReporter, Reporter
from toolkit.core.steps import PLACEHOLDER_HELP, Command, Step
from toolkit.core.steps.placeholders import LIB_DIR
from toolkit.core.urls import mask
from toolkit.plan.layout import Layout
from toolkit.plan.model import Plan

# what the index probes of one run found, by (location, project): None reachable, else the
# error; one dict for every build of a run of plans (``toolkit.run.jobs.run_plans``), so each
# location is probed once per run, and a new dict, probed again, for the next run
ProbeVerdicts = dict[tuple[str, str | None], ToolkitError | None]

_UNFILLED = re.compile("|".join([*(re.escape(p) for p in PLACEHOLDER_HELP if "<" not in p),
                                  LIB_DIR.pattern]))


@dataclass
class StepResult:
    name: str
    kind: str
    argv: list[str]
    env: dict[str, str]
    returncode: int | None = None
    seconds: float = 0.0
    skipped: str | None = None


@dataclass
class Run:
    plan: Plan
    layout: Layout
    log: TextIO
    reporter: Reporter = field(default_factory=NullReporter)
    values: dict[str, str] = field(default_factory=dict)
    results: list[StepResult] = field(default_factory=list)
    failed_step: str | None = None
    env_reused: bool = False
    env_digest: str | None = None
    interpreter: str | None = None  # "path version" of the interpreter really used
    step_start: int = 0  # where the running step's output begins in the log (bytes)
    probes: ProbeVerdicts = field(default_factory=dict)  # this run's index verdicts

    def resolve(self, text: str) -> str:
        for key, val in self.values.items():
            text = text.replace("{" + key + "}", val)
        return text

    def note(self, text: str) -> None:
        """A line in the build log (masked)."""
        self.log.write(mask(text.rstrip("\n")) + "\n")
        self.log.flush()

    def warn(self, text: str) -> None:
        self.note(f"warning: {text}")
        self.reporter.warning(mask(text))


def command_environment(cmd: Command, run: Run, base: Mapping[str, str]) -> dict[str, str]:
    """``base`` minus ``cmd.unset`` plus ``cmd.env`` with placeholders filled."""
    env = dict(base)
    for var in cmd.unset:
        env.pop(var, None)
    values = {**run.values, "PATH": base.get("PATH", "")}
    for key, value in cmd.env.items():
        for k, v in values.items():
            value = value.replace("{" + k + "}", v)
        env[key] = value
    return env


def _unfilled(step: Step, texts: list[str]) -> None:
    for text in texts:
        m = _UNFILLED.search(text)
        if m:
            raise StepFailed(f"step '{step.name}': {m.group(0)} was never learned by an "
                             "earlier step")


def run_command(step: Step, cmd: Command, run: Run) -> StepResult:
    """Run ``cmd`` for ``step``; ``StepFailed`` with the command and output tail on failure,
    ``TimedOut`` (one line naming the step and the limit) when it ran past ``cmd.timeout``.

    Each output line goes to the log; to ``reporter.output`` for ``echo`` commands, else to
    ``reporter.step_output`` (what a live status or a CI log group shows)."""
    env = command_environment(cmd, run, os.environ)
    argv = [run.resolve(a) for a in cmd.argv]
    _unfilled(step, argv + [env[k] for k in cmd.env])
    result = StepResult(step.name, step.kind, argv, {k: env[k] for k in cmd.env})
    run.log.write(f"\n$ {mask(' '.join(argv))}\n")
    run.log.flush()
    show = run.reporter.output if cmd.echo else run.reporter.step_output

    def line(text: str) -> None:
        run.log.write(text)
        show(text)

    cwd = run.resolve(cmd.cwd) if cmd.cwd else None
    try:
        stream(argv, on_line=line, cwd=cwd, env=env, timeout=cmd.timeout)
    except CommandFailed as exc:
        run.log.flush()
        if exc.timed_out:
            raise TimedOut(f"step '{step.name}' timed out after {exc.limit:g} s (the limit of "
                           f"its command; its process group was stopped): "
                           f"{mask(' '.join(argv))}") from None
        if exc.reason:
            raise StepFailed(f"step '{step.name}': {exc.reason}: {mask(' '.join(argv))}") \
                from None
        shown = "\n".join(f"    {t}" for t in exc.tail)
        raise CommandStepFailed(
            f"step '{step.name}' failed ({status(exc.returncode)}): {mask(' '.join(argv))}\n"
            f"  last {len(exc.tail)} lines of output:\n{shown}", exc.returncode, exc.tail,
        ) from None
    run.log.flush()
    result.returncode = 0
    return result
