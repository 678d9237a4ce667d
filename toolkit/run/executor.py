"""Run a plan's steps: the only place builds have side effects.

Each step runs with its argv (never through a shell), its environment on top of the
inherited one, placeholders filled from what earlier steps learned. Output streams to
``artifacts/<build-id>/build.log`` (credentials masked); the console shows one progress
line per step with its elapsed time; the first failing step stops the build with its
command, exit code and the last lines of its output.

Step-specific knowledge plugs in through hooks registered per step name:
``before(step, run) -> str | None`` may return a reason to skip the step (e.g. an
environment already provisioned), ``after(step, run)`` learns values (``ROCM_ROOT``,
``SHA``, ``TORCH_LIB`` ...) into ``run.values`` for later placeholders.
"""

from __future__ import annotations

import collections
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from toolkit.core.errors import StepFailed, ToolkitError
from toolkit.core.urls import mask
from toolkit.plan.layout import Layout
from toolkit.plan.planner import PLACEHOLDER_HELP, Plan, Step

TAIL_LINES = 40


@dataclass
class StepResult:
    name: str
    argv: list[str]
    env: dict[str, str]
    returncode: int | None = None
    seconds: float = 0.0
    skipped: str | None = None


@dataclass
class Run:
    plan: Plan
    layout: Layout
    values: dict[str, str] = field(default_factory=dict)
    results: list[StepResult] = field(default_factory=list)
    log_path: Path | None = None
    failed_step: str | None = None

    def resolve(self, text: str) -> str:
        for key, val in self.values.items():
            text = text.replace("{" + key + "}", val)
        return text


BeforeHook = Callable[[Step, Run], "str | None"]
AfterHook = Callable[[Step, Run], None]
_BEFORE: dict[str, list[BeforeHook]] = collections.defaultdict(list)
_AFTER: dict[str, list[AfterHook]] = collections.defaultdict(list)
_UNFILLED = re.compile("|".join(re.escape(p) for p in PLACEHOLDER_HELP))
LAST_RUN: Run | None = None  # the most recent run, also when it failed


def _load_hooks() -> None:
    """Modules that register step hooks (imported lazily: they import this module)."""
    import toolkit.run.jobs
    import toolkit.run.sources  # noqa: F401


def register(step_name: str, *, before: BeforeHook | None = None,
             after: AfterHook | None = None) -> None:
    if before:
        _BEFORE[step_name].append(before)
    if after:
        _AFTER[step_name].append(after)


def step_environment(step: Step, run: Run, base: Mapping[str, str]) -> dict[str, str]:
    env = dict(base)
    for var in step.unset:
        env.pop(var, None)
    values = {**run.values, "PATH": base.get("PATH", "")}
    for key, value in step.env.items():
        for k, v in values.items():
            value = value.replace("{" + k + "}", v)
        env[key] = value
    return env


def _progress(out: TextIO, index: int, total: int, step: Step, status: str, secs: float) -> None:
    print(f"[{index}/{total}] {step.name:<22} {status:<8} {secs:7.1f}s", file=out, flush=True)


def run_step(step: Step, run: Run, log: TextIO, out: TextIO | None = None) -> StepResult:
    env = step_environment(step, run, os.environ)
    argv = [run.resolve(a) for a in step.argv]
    leftover = [m.group(0) for a in argv for m in [_UNFILLED.search(a)] if m]
    leftover += [m.group(0) for v in env.values() for m in [_UNFILLED.search(v)] if m]
    if leftover:
        raise StepFailed(f"step '{step.name}': {leftover[0]} was never learned by an earlier step")
    result = StepResult(step.name, argv, {k: env[k] for k in step.env})
    log.write(f"\n$ {mask(' '.join(argv))}\n")
    log.flush()
    tail: collections.deque[str] = collections.deque(maxlen=TAIL_LINES)
    start = time.monotonic()
    try:
        proc = subprocess.Popen(argv, cwd=run.resolve(step.cwd) if step.cwd else None, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                errors="replace")
    except FileNotFoundError:
        raise StepFailed(f"step '{step.name}': command not found: {argv[0]}") from None
    assert proc.stdout is not None
    for line in proc.stdout:
        line = mask(line)
        log.write(line)
        if step.echo and out is not None:
            out.write("    " + line)
        tail.append(line.rstrip("\n"))
    result.returncode = proc.wait()
    result.seconds = time.monotonic() - start
    log.flush()
    if result.returncode != 0:
        shown = "\n".join(f"    {t}" for t in tail)
        raise StepFailed(
            f"step '{step.name}' failed (exit {result.returncode}): {mask(' '.join(argv))}\n"
            f"  last {len(tail)} lines of output:\n{shown}"
        )
    return result


def execute(plan: Plan, layout: Layout, *, out: TextIO | None = None,
            on_start: Callable[[Run], None] | None = None,
            only: Callable[[Step], bool] | None = None) -> Run:
    """Run every step in order; raise ``StepFailed`` at the first failure."""
    global LAST_RUN
    _load_hooks()
    out = out or sys.stdout
    run = LAST_RUN = Run(plan, layout)
    art = layout.artifacts(plan.build)
    art.mkdir(parents=True, exist_ok=True)
    run.log_path = art / "build.log"
    if on_start:
        on_start(run)
    total = len(plan.steps)
    with run.log_path.open("w", encoding="utf-8") as log:
        for i, step in enumerate(plan.steps, 1):
            if only is not None and not only(step):
                continue
            start = time.monotonic()
            reason = next((r for hook in _BEFORE[step.name] if (r := hook(step, run))), None)
            if reason:
                run.results.append(StepResult(step.name, list(step.argv), {}, skipped=reason))
                _progress(out, i, total, step, "skipped", time.monotonic() - start)
                log.write(f"\n# {step.name}: skipped: {reason}\n")
                continue
            try:
                result = run_step(step, run, log, out)
                for hook in _AFTER[step.name]:
                    hook(step, run)
            except ToolkitError:
                run.failed_step = step.name
                _progress(out, i, total, step, "FAILED", time.monotonic() - start)
                raise
            result.seconds = time.monotonic() - start
            run.results.append(result)
            _progress(out, i, total, step, "ok", result.seconds)
    return run


import toolkit.plan.provision  # noqa: E402,F401  (registers the provisioning hooks)
