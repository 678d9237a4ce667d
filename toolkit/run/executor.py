"""Run a plan's steps: the only place builds have side effects.

Every step's action is dispatched through ``HANDLERS``, one explicit table from action type
to the function that carries it out; nothing registers itself, nothing reads an argv to
guess what a step means. Output streams to ``artifacts/<build-id>/build.log`` (credentials
masked); the reporter hears when each step starts, its output lines and its end; the first
failing step stops the build with its command, exit code and the last lines of its output.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from toolkit.core.errors import (
    CheckFailed,
    CommandStepFailed,
    StepFailed,
    TimedOut,
    ToolkitError,
    describe_os_error,
)
from toolkit.core.reporter import NullReporter, Reporter
from toolkit.core.steps import (
    BuildVariant,
    BuildWheel,
    CheckEnv,
    CheckWheel,
    Command,
    CopySources,
    CreateEnv,
    ExpectWheel,
    FetchSources,
    FetchSubmodules,
    InstallSdk,
    InstallTorch,
    MakeVariant,
    MarkEnvReady,
    NameWheel,
    ProbeIndexes,
    ProvideLibrary,
    Publish,
    PublishVariant,
    Smoke,
    Step,
    UseSystemRocm,
)
from toolkit.plan.layout import Layout
from toolkit.plan.model import Plan
from toolkit.run import building, prereqs, provisioning, sources, variant_steps
from toolkit.run.context import Run, StepResult, run_command

Handler = Callable[[Step, Run], "StepResult | str"]


def _command(step: Step, run: Run) -> StepResult | str:
    cmd = step.cmd
    assert cmd is not None
    if step.name == "install-requirements":  # an unreachable index or requirement: one line
        return building.install_requirements(step, run)
    return run_command(step, cmd, run)


def _verdict(step: Step, run: Run) -> StepResult | str:
    """check and smoke: a failure is a failed check (exit 1), not a broken build step; a
    smoke run that ran past its limit (``toolkit smoke`` exits 9) stays a ``TimedOut``."""
    cmd = step.cmd
    assert cmd is not None
    try:
        return run_command(step, cmd, run)
    except CommandStepFailed as err:
        if isinstance(step.action, Smoke) and err.returncode == TimedOut.exit_code:
            said = [t for t in err.tail if t.startswith("error: ")]
            raise TimedOut(f"step '{step.name}': " + (said[-1][len("error: "):] if said else
                                                      "the smoke run timed out")) from None
        raise CheckFailed(err.message, hint=_cpu_hint(step, run, err.tail) or err.hint) from None
    except StepFailed as err:
        raise CheckFailed(err.message, hint=err.hint) from None


CPU_HINT = ("a CPU-only project carries no GPU code: --cpu builds and checks it as one "
            "(nox -s demo -- --source PATH --cpu)")


def _cpu_hint(step: Step, run: Run, tail: tuple[str, ...]) -> str | None:
    """``--cpu`` named when a ``--source`` project's wheel failed the GPU-target check looking
    CPU-only (no native library carries device code or links HIP)."""
    from toolkit.inspect.rules.gpu import CPU_ONLY

    if not isinstance(step.action, CheckWheel) or not step.action.gfx or not run.plan.source:
        return None
    cpu_only = any("[gpu-targets]" in t and any(w in t for w in CPU_ONLY) for t in tail)
    return CPU_HINT if cpu_only else None


HANDLERS: dict[type, Handler] = {
    Command: _command,
    CheckEnv: provisioning.check_env,
    ProbeIndexes: provisioning.probe_indexes,
    CreateEnv: provisioning.create_env,
    InstallSdk: provisioning.install_sdk,
    UseSystemRocm: provisioning.use_system_rocm,
    InstallTorch: provisioning.install_torch,
    MarkEnvReady: provisioning.mark_env_ready,
    FetchSources: sources.fetch_sources,
    FetchSubmodules: sources.fetch_submodules,
    CopySources: sources.copy_sources,
    ProvideLibrary: prereqs.provide_library,
    BuildWheel: building.build_wheel,
    ExpectWheel: prereqs.expect_wheel,
    NameWheel: building.name_wheel_step,
    CheckWheel: _verdict,
    Smoke: _verdict,
    Publish: building.publish,
    BuildVariant: variant_steps.build_variant,
    MakeVariant: variant_steps.make_variant_step,
    PublishVariant: variant_steps.publish_variant,
}


def _failed(run: Run, i: int, total: int, step: Step, start: float, reason: str) -> None:
    run.failed_step = step.name
    run.reporter.step(i, total, step.name, "FAILED", time.monotonic() - start,
                      reason.splitlines()[0])  # never empty: ToolkitError refuses an empty message


def _one(run: Run, i: int, total: int, step: Step) -> None:
    """Run one step (or skip it: its environment is reused) and report its end."""
    reporter, start = run.reporter, time.monotonic()
    run.log.flush()
    run.step_start = run.log.tell()  # a failure's signature is read from here on
    if step.reuse_env and run.env_reused:
        outcome: StepResult | str = "environment up to date"
    else:
        reporter.step_started(i, total, step.name)
        try:
            outcome = HANDLERS[type(step.action)](step, run)
        except ToolkitError as err:
            _failed(run, i, total, step, start, err.message)
            raise
        except KeyboardInterrupt:
            _failed(run, i, total, step, start, "interrupted")
            raise
        except OSError as err:  # a full disk, a read-only dist/ ...: one line, exit 5
            failed = StepFailed(f"step '{step.name}': {describe_os_error(err)}")
            _failed(run, i, total, step, start, failed.message)
            raise failed from None
    secs = time.monotonic() - start
    if isinstance(outcome, str):
        run.results.append(StepResult(step.name, step.kind, list(step.argv), {},
                                      skipped=outcome))
        run.log.write(f"\n# {step.name}: skipped: {outcome}\n")
        reporter.step(i, total, step.name, "skipped", secs)
    else:
        outcome.seconds = secs
        run.results.append(outcome)
        reporter.step(i, total, step.name, "ok", secs)


def execute(plan: Plan, layout: Layout, *, reporter: Reporter | None = None,
            on_start: Callable[[Run], object] | None = None,
            only: Callable[[Step], bool] | None = None,
            run_out: list[Run] | None = None, log_name: str = "build.log") -> Run:
    """Run every step in order; raise at the first failure (``run_out`` keeps the ``Run``
    for the caller also then, e.g. to write the manifest)."""
    reporter = reporter or NullReporter()
    art = layout.artifacts(plan.build)
    art.mkdir(parents=True, exist_ok=True)
    log_path = art / log_name
    total = len(plan.steps)
    with log_path.open("w", encoding="utf-8") as log:
        run = Run(plan, layout, log, reporter)
        if run_out is not None:
            run_out.append(run)
        if on_start:
            on_start(run)
        for i, step in enumerate(plan.steps, 1):
            if only is not None and not only(step):
                continue
            _one(run, i, total, step)
    return run
