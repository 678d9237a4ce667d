"""The main job: run the plans of a session, one build after another.

Each build holds its build lock (one run per build id and work folder: a second is refused
in one line naming the holder) and its environment's lock (a second build sharing the
environment waits), runs through ``toolkit.run.executor`` and writes its manifest at the
start (``running``) and at the end (``ok``, ``failed`` or ``interrupted`` with the step).
A failed build is reported (failing command, exit code, output tail, where the failing wheel
was kept) and the next build still runs. Ctrl-C and SIGTERM stop the build, record
``interrupted`` and propagate.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

from toolkit.core.errors import ToolkitError, UsageError, describe_os_error
from toolkit.core.reporter import NullReporter, Reporter
from toolkit.core.text import escape
from toolkit.plan.layout import Layout
from toolkit.plan.model import Plan, options_json
from toolkit.run import executor
from toolkit.run.context import ProbeVerdicts, Run
from toolkit.run.identity import host_paths, identity
from toolkit.run.locking import hold
from toolkit.run.manifest_schema import SCHEMA_VERSION
from toolkit.run.variant_steps import recorded_variants

ENV_WAIT_S = 3 * 3600.0


@dataclass
class Outcome:
    build_id: str
    package: str
    wheel: str = "-"
    checks: str = "not run"
    smoke: str = "not run"
    seconds: float = 0.0
    error: str | None = None
    exit_code: int = 0
    failed_step: str | None = None  # the step that failed (known failures are judged by it)
    failure: dict[str, Any] | None = None  # the manifest's ``failure`` (toolkit.run.failure)


def _status(run: Run | None, name: str) -> str | None:
    if run is None:
        return None
    for r in run.results:
        if r.name == name:
            return f"skipped: {r.skipped}" if r.skipped else "passed"
    return None


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM stops a build like Ctrl-C does (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _staged_note(run: Run | None) -> str:
    wheel = run.values.get("WHEEL") if run else None
    if run and wheel and run.failed_step in ("check", "install-wheel", "smoke"):
        return f"\n  the failing wheel is kept for inspection at {wheel}"
    return ""


def _manifest_at_start(run: Run) -> None:
    write_manifest(run, None)


def _at_start(probes: ProbeVerdicts) -> Callable[[Run], None]:
    def start(run: Run) -> None:
        run.probes = probes  # the index verdicts of this run of plans, shared by its builds
        _manifest_at_start(run)
    return start


@contextlib.contextmanager
def build_locks(p: Plan, layout: Layout, reporter: Reporter) -> Iterator[None]:
    """One run per build id and work folder (a second is refused at once, naming the holder);
    one writer per cached environment (a second build sharing it waits)."""
    env_dir = layout.env_dir(p.build)
    with hold(layout.build_dir(p.build).with_name(p.build.id + ".lock"),
              f"build {p.build.id} in {layout.root}"), \
            hold(env_dir.with_name(env_dir.name + ".lock"), f"environment {env_dir}",
                 wait=ENV_WAIT_S, on_wait=reporter.info):
        yield


def run_one(p: Plan, layout: Layout, reporter: Reporter,
            probes: ProbeVerdicts | None = None) -> Outcome:
    o = Outcome(p.build.id, p.build.package.name)
    reporter.info(f"=== {p.build.id} (targets: {', '.join(p.targets)})")
    reporter.info(f"    reproduce with: {repro_command(layout, p.build.id)}")
    start = time.monotonic()
    runs: list[Run] = []
    try:
        with build_locks(p, layout, reporter):
            _recover(layout.artifacts(p.build) / "manifest.json", reporter)
            try:
                executor.execute(p, layout, reporter=reporter, run_out=runs,
                                 on_start=_at_start({} if probes is None else probes))
            except ToolkitError as err:
                o.error = (str(err) + _staged_note(runs[0] if runs else None)
                           + f"\n  its log: {layout.artifacts(p.build) / 'build.log'}")
                o.exit_code = err.exit_code
            except OSError as err:  # writing the log or the manifest: the build failed
                o.error = f"cannot write: {describe_os_error(err)}"
                o.exit_code = 5
            except KeyboardInterrupt:
                o.error = "interrupted"
                o.exit_code = 130
                if runs:
                    _finish(runs[0], o, p, start, reporter, interrupted=True)
                raise
            if runs:
                _finish(runs[0], o, p, start, reporter)
    except ToolkitError as err:  # refused: a lock is held by another run
        o.error = str(err)
        o.exit_code = err.exit_code
    o.seconds = time.monotonic() - start
    if o.error:
        reporter.info(f"error: {o.error}")
        reporter.info(f"    reproduce with: {repro_command(layout, p.build.id)}")
    return o


def _recover(path: Path, reporter: Reporter) -> None:
    """A manifest still ``running`` while we hold the build's lock: its run ended without
    being able to record it (the disk was full or read-only, the process was killed). Say
    so; this run's manifest replaces it."""
    from toolkit.run import manifest

    try:
        data = manifest.read(path)
    except ToolkitError:
        return
    if data.get("outcome") == "running":
        reporter.warning(f"{escape(path)} still says 'running': the run that wrote it ended "
                         "without recording its outcome (a full or read-only disk, or killed); "
                         "this run replaces it")


def _finish(run: Run, o: Outcome, p: Plan, start: float, reporter: Reporter | None = None, *,
            interrupted: bool = False) -> None:
    o.seconds = time.monotonic() - start
    if "WHEEL" in run.values:
        o.wheel = Path(run.values["WHEEL"]).name
    failed = run.failed_step
    o.failed_step = failed
    o.checks = _status(run, "check") or ("FAILED" if failed == "check" else "not run")
    o.smoke = _status(run, "smoke") or ("FAILED" if failed == "smoke" else "not run")
    if not any(s.name == "smoke" for s in p.steps):
        o.smoke = "not planned"
    try:
        write_manifest(run, o, interrupted=interrupted)
    except (OSError, UsageError) as err:  # the outcome cannot be recorded: say so; the next
        # run recovers (write_atomic: a failed write or a symlink/FIFO there is a UsageError)
        why = describe_os_error(err) if isinstance(err, OSError) else err.message
        note = (f"the manifest could not record the outcome ({why}); the next run of this "
                "build says so and replaces it")
        if reporter is not None:
            reporter.warning(note)
        if o.error is None:
            o.error, o.exit_code = note, 5


def run_plans(plans: list[Plan], layout: Layout,
              reporter: Reporter | None = None) -> list[Outcome]:
    reporter = reporter or NullReporter()
    check_folders(layout)
    outcomes: list[Outcome] = []
    probes: ProbeVerdicts = {}  # each index or find-links location probed once in this run
    with sigterm_as_interrupt():
        for p in plans:
            outcomes.append(run_one(p, layout, reporter, probes))
    return outcomes


def check_folders(layout: Layout) -> None:
    """The work folder and the cache are folders we can create and write (else exit 2 in
    one line, before any build starts): a file where a folder should be, a path too long, a
    read-only place."""
    from toolkit.core.files import usable_folder

    usable_folder(layout.root, "work folder (--workdir)")
    usable_folder(layout.cache, "cache folder (TOOLKIT_CACHE_DIR)")


def exit_code(outcomes: list[Outcome]) -> int:
    return next((o.exit_code for o in outcomes if o.exit_code), 0)


def write_manifest(run: Run, outcome: Outcome | None, name: str = "manifest.json", *,
                   interrupted: bool = False) -> Path:
    """``artifacts/<build-id>/manifest.json`` (see toolkit.run.manifest); ``outcome`` None = running."""
    from toolkit import __version__
    from toolkit.run import manifest

    p = run.plan
    b = p.build
    target = run.layout.artifacts(b) / name
    if outcome is None and p.options is not None and p.options.dirty:
        manifest.keep_clean(target)  # the clean wheel stays in dist/: so does its manifest
    run.values.setdefault("MANIFEST", str(target))  # the smoke step reads this run's own
    env_python = str(run.layout.env_python(b))
    plan_json = p.as_json()
    finished = outcome is not None and not interrupted
    sdk = manifest.sdk_facts(plan_json, run.values, p.channel)
    installed = manifest.installed(env_python) if finished else []
    data = {
        "schema_version": SCHEMA_VERSION,
        "toolkit_version": __version__,
        **manifest.recipe_facts(b, p.targets, p.options),
        "options": options_json(p.options) if p.options else None,
        "family": p.family,
        "source": {"repo": b.package.repo, "ref": b.pkg_version.ref, "path": p.source,
                   "sha": run.values.get("SHA"), "tree": run.values.get("TREE"),
                   **manifest.dirty_fields(run.values)},
        "workdir": str(run.layout.root),
        "env_dir": str(run.layout.env_dir(b)),
        "wheel": run.values.get("WHEEL"),
        "wheel_sha256": manifest.file_sha256(run.values["WHEEL"]) if "WHEEL" in run.values else None,
        "variants": recorded_variants(run.values),  # --variants: label -> wheel, sha256
        "sdk": sdk,
        "installed": installed,
        **_step_env(p),
        "tools": manifest.tool_versions(env_python, run.values.get("ROCM_BIN"))
        if finished else {},
        # what decides the wheel's bits, apart from the host's facts and paths
        "identity": identity(p, run.layout, run.values,
                             manifest.learned_identity(env_python, sdk, installed)
                             if finished else {}),
        "host": {**(manifest.host_facts() if finished else {}),
                 "paths": host_paths(p, run.layout)},
        "learned": {k: v for k, v in run.values.items() if not k.startswith("_")},
        "steps": _step_rows(run),
        "plan": plan_json,
        "outcome": _outcome_word(outcome, interrupted),
        "failed_step": run.failed_step,
        "error": outcome.error if outcome else None,
        "repro": repro_command(run.layout, b.id),
        "failure": _failure(run, outcome, interrupted),
    }
    if outcome is not None:
        outcome.failure = data["failure"]
    return manifest.write(target, data)


def _step_rows(run: Run) -> list[dict[str, Any]]:
    return [{"name": r.name, "kind": r.kind, "argv": r.argv, "env": r.env,
             "returncode": r.returncode, "seconds": round(r.seconds, 3), "skipped": r.skipped}
            for r in run.results]


def _step_env(p: Plan) -> dict[str, Any]:
    """The manifest's ``environment`` (each step's variables) and ``unset``."""
    return {"environment": {s.name: dict(s.env) for s in p.steps if s.env},
            "unset": sorted({v for s in p.steps for v in s.unset})}


def _outcome_word(outcome: Outcome | None, interrupted: bool) -> str:
    if outcome is None:
        return "running"
    if interrupted:
        return "interrupted"
    return "ok" if outcome.error is None else "failed"


def _failure(run: Run, outcome: Outcome | None, interrupted: bool) -> dict[str, Any] | None:
    """A failed build's ``failure`` object (``toolkit.run.failure``); None otherwise."""
    if outcome is None or interrupted or outcome.error is None:
        return None
    from toolkit.run import failure

    return failure.record(run, run.failed_step or "-", outcome.exit_code or 1, outcome.error)


def repro_command(layout: Layout, build_id: str) -> str:
    return f"invoke repro {layout.artifacts_rel(build_id)}/manifest.json"
