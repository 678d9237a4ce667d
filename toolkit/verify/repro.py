"""Reproduce a build from its manifest, and prove it.

A manifest comes from a CI artifact: it is untrusted input. It is schema-validated, and
``repro`` never runs a command it holds: it re-plans the build from the recorded *inputs*
(build id, options, targets, the source commit or tree, the lock files) with this toolkit,
in this machine's work folder (the current one, or ``--workdir``), cache and interpreter.
It compares the build's *identity* (``toolkit.run.identity``: what decides the wheel's bits,
host paths written as tokens) with the recorded one and refuses in one line (exit 2) where
they differ; the host's differences (interpreter path, glibc, compilers, cores ...) are only
shown, unless one makes the comparison meaningless (no such Python, another ROCm release:
refused, exit 2, unless ``--force``). Then it runs its own plan (every step but ``publish``: the
published wheel is never touched), and compares the rebuilt wheel with the recorded one:
``identical: <sha256>`` (exit 0) or ``differs:`` with the members, and for shared libraries
the sections, that differ (exit 1).

Credentials are never recorded (URLs are masked); repro takes them from the environment:
``TOOLKIT_ROCM_INDEX_URL`` (the variable builds read) when its masked form equals the
recorded index, otherwise the masked part is dropped and uv/pip find them in ``~/.netrc``.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import sysconfig
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from toolkit.core.errors import CheckFailed, EnvironmentProblem, UsageError, suggestion
from toolkit.core.reporter import Reporter
from toolkit.core.text import escape
from toolkit.core.urls import mask
from toolkit.data.matrix import Build
from toolkit.plan.layout import Layout
from toolkit.plan.model import Options, Plan
from toolkit.plan.recipes import REGISTRY, load_matrix, standalone_build
from toolkit.run.context import Run
from toolkit.run.identity import host_paths
from toolkit.verify.failures import Failure, judge
from toolkit.verify.variant_repro import rerun, variant_verdict


@dataclass(frozen=True)
class Difference:
    what: str
    manifest: str
    here: str
    fatal: bool


def _major_minor(version: str | None) -> str | None:
    if not version:
        return None
    return ".".join(version.split(".")[:2])


def _build(data: Mapping[str, Any], source: str | None, workdir: Path) -> Build:
    """The build the manifest names, made here: a build outside the matrix that a recipe
    recognises (the bundled sample; a project read again from ``source``), else the
    matrix's."""
    info = data["build"]
    logs = workdir / "build" / "source-metadata.log"
    return standalone_build(str(info["id"]), data, source, logs) or load_matrix().build(info["id"])


def _source(data: Mapping[str, Any], given: str | None) -> str | None:
    """Where the build's sources are here: ``--source``, the bundled sample of this toolkit,
    or the recorded checkout when it exists here."""
    if given:
        return str(Path(given).expanduser().resolve())
    bundled = REGISTRY[data["recipe"]].bundled_source if data.get("recipe") in REGISTRY else None
    if bundled is not None:
        return str(bundled)
    recorded = (data.get("options") or {}).get("source")
    if not isinstance(recorded, str) or not recorded:
        return None
    if not Path(recorded).is_dir():
        raise UsageError(f"the recorded --source {escape(recorded)} is not here; pass --source PATH "
                         "(a checkout of the same tree)")
    return recorded


def _interpreter(data: Mapping[str, Any], python: str) -> str | None:
    """An absolute interpreter when the recorded plan named one (the demo's): this toolkit's
    own when it is that Python, else the one discovery finds; None: the name, as recorded."""
    check = next((s for s in data["plan"]["steps"] if s.get("name") == "check-env"), None)
    interp = ((check or {}).get("action") or {}).get("interpreter")
    if not (isinstance(interp, str) and os.path.isabs(interp)):
        return None
    if python == f"{sys.version_info.major}.{sys.version_info.minor}" \
            and not sysconfig.get_config_var("Py_GIL_DISABLED"):
        return sys.executable
    from toolkit.env.interpreters import find

    try:
        return find(python).path
    except EnvironmentProblem:
        return None  # said by ``differences``


def with_credentials(url: str | None, environ: Mapping[str, str]) -> str | None:
    """A recorded (masked) URL with its credentials from the environment, or without them
    (then uv/pip use ~/.netrc for that host)."""
    if url is None or "***@" not in url:
        return url
    given = environ.get("TOOLKIT_ROCM_INDEX_URL", "")
    if given and mask(given) == url:
        return given
    return url.replace("***@", "", 1)


def _options(data: Mapping[str, Any], environ: Mapping[str, str]) -> Options:
    from toolkit.plan.model import options_from_json

    options = options_from_json(data.get("options") or {})
    return dataclasses.replace(
        options, index_url=with_credentials(options.index_url, environ),
        find_links=tuple(with_credentials(u, environ) or u for u in options.find_links))


def reconstruct(data: Mapping[str, Any], environ: Mapping[str, str] | None = None, *,
                layout: Layout | None = None, source: str | None = None) -> tuple[Plan, Layout]:
    """Plan the build again from the manifest's recorded inputs (never its commands): the
    build, its options and targets, the sources pinned to the recorded commit; in this
    machine's work folder, cache and interpreter (``layout``: where; default the current
    folder and this machine's cache)."""
    from toolkit.env.host import SystemRocm
    from toolkit.plan.request import Request, prepare, resolve

    layout = layout or Layout.default()
    src = _source(data, source)
    build = _build(data, src, layout.root)
    sha = data["source"].get("sha")
    recorded = _options(data, os.environ if environ is None else environ)
    if sha and not recorded.source and REGISTRY[build.package.recipe].pins_recorded_source:
        build = dataclasses.replace(build, pkg_version=dataclasses.replace(build.pkg_version,
                                                                           ref=sha))
    # the checkout's changes were compared (``_tree_check``) before it runs: allowed here
    given = dataclasses.replace(
        recorded, gfx=tuple(data["targets"]), rebuild=True,
        source=src if recorded.source else None,
        allow_dirty=True if recorded.source else recorded.allow_dirty)
    matrix = load_matrix()
    options = resolve(given, matrix, layout)
    interp = _interpreter(data, build.python)
    root = data["sdk"].get("root")
    request = Request(matrix, (build,), options, layout,
                      interpreters=MappingProxyType({build.python: interp} if interp else {}))
    if data["sdk"].get("provider") != "system" or build.rocm.version == "cpu":
        request = dataclasses.replace(request, rocm="given", system_rocm=None)
    elif isinstance(root, str) and os.path.isdir(root):
        request = dataclasses.replace(request, rocm="given",
                                      system_rocm=SystemRocm(root, build.rocm.version))
    the_plan, layout, _ = prepare(request)
    return the_plan, layout


def plan_differences(data: Mapping[str, Any], again: Plan, layout: Layout) -> list[str]:
    """Where the recorded build's identity and the one planned here from its inputs differ:
    the build, targets and output options, then step by step (host paths as tokens)."""
    from toolkit.run.identity import (
        identity_differences,
        normal_steps,
        plan_sha256,
        planned_identity,
    )

    here = planned_identity(again, layout)
    recorded = data.get("identity") or {}
    out = [d for d in identity_differences(recorded, here) if not d.startswith("plan_sha256")]
    paths = (data.get("host") or {}).get("paths") or {}
    steps = data["plan"].get("steps", [])
    # never trust the recorded digest alone: it must be the recorded plan's own
    if recorded.get("plan_sha256") != plan_sha256(steps, paths):
        out.append("the manifest's identity is not the digest of its own plan")
    old = normal_steps(steps, paths)
    new = normal_steps(json.loads(again.to_json())["steps"], host_paths(again, layout))
    return out if old == new else [*out, *_step_differences(old, new)]


def _step_differences(old: list[Any], new: list[Any]) -> list[str]:
    """Recorded and planned steps (normalised): other step names, else each step's fields
    that differ."""
    names_old = [s.get("name") for s in old if isinstance(s, dict)]
    names_new = [s.get("name") for s in new]
    if names_old != names_new:
        return [f"steps {', '.join(map(str, names_old))} recorded; {', '.join(names_new)} planned here"]
    return [f"step {b['name']}: {', '.join(_fields_differing(a, b))} differ"
            for a, b in zip(old, new, strict=True) if a != b]


def _fields_differing(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[str]:
    return sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))


def _abi(facts: Mapping[str, Any]) -> str:
    return f"{facts.get('implementation')} {facts.get('version')} ({facts.get('abi')})"


def differences(data: Mapping[str, Any], again: Plan, layout: Layout) -> list[Difference]:
    """What differs between the recording host and this one: fatal where the comparison
    would be meaningless (no such Python, another ROCm release, another interpreter ABI)."""
    here_paths = host_paths(again, layout)
    host = data.get("host") or {}
    return [*_interpreter_differences(data, here_paths.get("interpreter")),
            *_rocm_differences(data),
            *_path_differences(host.get("paths") or {}, here_paths),
            *_gpu_differences(host),
            *_host_fact_differences(host),
            *_tool_differences(data)]


def _interpreter_differences(data: Mapping[str, Any], interp: str | None) -> list[Difference]:
    """Fatal: no interpreter for the recorded Python here, or one of another ABI."""
    from toolkit.env.interpreters import find
    from toolkit.run.manifest import interpreter_identity

    out: list[Difference] = []
    python = data["build"]["python"]
    try:
        interp = interp or find(python).path
    except EnvironmentProblem as err:
        out.append(Difference("Python interpreter", python, f"missing ({err.message})", True))
    recorded_abi = (data.get("identity") or {}).get("interpreter")
    if interp and isinstance(recorded_abi, dict) and recorded_abi.get("abi"):
        here_abi = interpreter_identity(interp)
        if here_abi != recorded_abi:
            out.append(Difference("Python", _abi(recorded_abi), _abi(here_abi), True))
    return out


def _rocm_differences(data: Mapping[str, Any]) -> list[Difference]:
    """Fatal: a build on the system's ROCm, and this system has none or another release."""
    sdk = data["sdk"]
    wanted = _major_minor(sdk.get("version")) or data["build"]["rocm"]
    if sdk.get("provider") != "system" or wanted == "cpu":
        return []
    from toolkit.env.rocm import find_system

    recorded = f"{sdk.get('version') or wanted}"
    try:
        found = find_system(want=wanted)
    except EnvironmentProblem:
        return [Difference("ROCm", recorded, "no system ROCm", True)]
    if _major_minor(found.version) != wanted:
        return [Difference("ROCm", recorded, f"{found.version} at {found.root}", True)]
    return []


def _path_differences(recorded: Mapping[str, Any], here: Mapping[str, str]) -> list[Difference]:
    """The host paths (work folder, cache, interpreter...) recorded with other values here."""
    return [Difference(role.replace("_", " "), str(recorded[role]), path, False)
            for role, path in here.items() if role in recorded and recorded[role] != path]


def _gpu_differences(host: Mapping[str, Any]) -> list[Difference]:
    """Other GPUs here than on the recording host (in any order)."""
    from toolkit.env.gpus import detect

    gpus = [g.gfx for g in detect().gpus]
    if sorted(host.get("gpus", [])) == sorted(gpus):
        return []
    return [Difference("GPUs", ", ".join(host.get("gpus", [])) or "none", ", ".join(gpus) or "none",
                       False)]


def _host_fact_differences(host: Mapping[str, Any]) -> list[Difference]:
    """The recorded glibc, OS and core count that differ here (unrecorded ones are not compared)."""
    from toolkit.run.manifest import host_facts

    here = host_facts()
    return [Difference(key, str(host.get(key)), str(here.get(key)), False)
            for key in ("glibc", "os", "cores") if host.get(key) and host.get(key) != here.get(key)]


def _tool_differences(data: Mapping[str, Any]) -> list[Difference]:
    """Another hipcc, clang or gcc version here than recorded ("none": not found)."""
    from toolkit.run.manifest import tool_versions

    sdk = data["sdk"]
    recorded = data.get("tools") or {}
    rocm_bin = f"{sdk['root']}/bin" if isinstance(sdk.get("root"), str) else None
    here = tool_versions(sys.executable, rocm_bin)
    return [Difference(key, str(recorded.get(key) or "none"), str(here.get(key) or "none"), False)
            for key in ("hipcc", "clang", "gcc") if recorded.get(key) != here.get(key)]


def _changes(source: str | Path) -> str | None:
    """The sha256 of the uncommitted changes of the checkout at ``source``; None: none."""
    from toolkit.env.project import source_changes

    changes = source_changes(source)
    return changes.diff_sha256 if changes else None


def _dirty_difference(recorded: object, here: str | None) -> list[str]:
    """Where a build of uncommitted changes (the manifest's ``source.diff``) and this
    checkout's changes disagree, in words: a dirty build is never matched by a clean tree."""
    if recorded == here:
        return []
    if not isinstance(recorded, str):
        return [f"this checkout has uncommitted changes (diff {here and here[:12]}); the "
                "recorded build had none"]
    if here is None:
        return [f"the manifest records a build of uncommitted changes (diff {recorded[:12]}); "
                "this checkout has none"]
    return [f"other uncommitted changes: diff {here[:12]}, recorded {recorded[:12]}"]


def _tree_check(data: Mapping[str, Any], plan: Plan, force: bool,
                reporter: Reporter) -> bool:
    """A --source build: is the checkout the recorded tree, at the recorded commit (the
    wheel's name carries it)? False: it is not, and --force goes on."""
    recorded = data["source"].get("tree")
    if not plan.source or not recorded:
        return True
    from toolkit.run.sources import IGNORED, NO_COMMIT, git, tree_hash

    source = Path(plan.source)
    if not source.is_dir():
        raise UsageError(f"the recorded --source {escape(plan.source)} is not here")
    here = tree_hash(source, IGNORED)
    sha = git("-C", str(source), "rev-parse", "HEAD", check=False) or NO_COMMIT
    recorded_sha = data["source"].get("sha") or NO_COMMIT
    problems = _dirty_difference(data["source"].get("diff"), _changes(source)) \
        + ([f"tree {here[:12]}, recorded {recorded[:12]}"] if here != recorded else []) \
        + ([f"commit {sha[:12]}, recorded {recorded_sha[:12]}"] if sha != recorded_sha else [])
    if not problems:
        return True
    if not force:
        raise UsageError(f"the source {plan.source} differs from the recorded one "
                         f"({'; '.join(problems)})",
                         hint="restore it, or pass --force (the result is then never "
                              "called identical)")
    reporter.info(f"note: the source differs from the recorded one ({'; '.join(problems)}); "
                  "going on because of --force")
    return False


def _verdict(data: Mapping[str, Any], wheel: str | None, same_tree: bool,
             reporter: Reporter) -> int:
    from toolkit.core.files import sha256_file
    from toolkit.verify.compare import wheel_differences

    recorded = data.get("wheel_sha256")
    if wheel is None:
        reporter.info("differs: the rebuild made no wheel")
        return 1
    here = sha256_file(wheel)
    if recorded is None:
        reporter.info(f"differs: the manifest records no wheel (outcome {data['outcome']}); "
                      f"the rebuild made {Path(wheel).name} ({here})")
        return 1
    if here == recorded and same_tree:
        reporter.info(f"identical: {here}")
        return 0
    reporter.info(f"differs: {here} rebuilt, {recorded} recorded")
    if not same_tree:
        reporter.info("  from another source tree (--force)")
    original = data.get("wheel")
    if here != recorded and isinstance(original, str) and Path(original).is_file():
        for line in wheel_differences(Path(original), Path(wheel)):
            reporter.info(f"  {line}")
    elif here != recorded:
        reporter.info(f"  (the recorded wheel {original} is not here to compare members)")
    return 1


def _prepare(data: Mapping[str, Any], reporter: Reporter, *, force: bool,
             workdir: str | None, source: str | None) -> tuple[Plan, Layout, bool]:
    """Re-plan the build here, refuse where its identity or a fatal host difference says
    reproduction is meaningless, show the host's differences; True: the same source tree."""
    plan, layout = reconstruct(data, layout=Layout.default(workdir), source=source)
    changed = plan_differences(data, plan, layout)
    if changed:
        from toolkit import __version__

        recorded = data.get("toolkit_version")
        hint = (f"rebuild with the toolkit version the manifest names ({recorded}), or "
                "inspect the manifest" if recorded != __version__ else
                f"this is the manifest's toolkit version ({recorded}): a local change to the "
                "toolkit or its data (git status), or a plan that depends on the host (report "
                "it with the manifest); compare with --dry-run")
        raise UsageError("refusing: the build's identity differs from the manifest's: "
                         + "; ".join(changed), hint=hint)
    diffs = differences(data, plan, layout)
    if diffs:
        reporter.info("host differences (never compared; the wheel's sha256 decides):")
    for d in diffs:
        mark = "REFUSE" if d.fatal else "host"
        reporter.info(f"{mark:>6}  {d.what}: manifest {d.manifest}; this machine {d.here}")
    fatal = [d for d in diffs if d.fatal]
    if fatal and not force:
        raise UsageError(
            "refusing: reproduction would be meaningless here: "
            + "; ".join(f"{d.what} {d.manifest} in the manifest, {d.here} here" for d in fatal),
            hint="run it on a matching machine, or pass --force")
    return plan, layout, _tree_check(data, plan, force, reporter)


def _last_step(names: list[str], step: str | None, failed: Failure | None) -> str:
    """Where the run stops: ``--step``, else a failed build's failed step, else the end."""
    if step is not None:
        if step not in names:
            raise UsageError(f"unknown step {step!r}; this build's steps: {', '.join(names)}",
                             nearest=suggestion(step, names))
        return step
    if failed is not None:
        if failed.step not in names:
            raise UsageError(f"the manifest's failed step {failed.step!r} is not one repro "
                             f"runs; this build's steps: {', '.join(names)}")
        return failed.step
    return names[-1]


def _run(plan: Plan, layout: Layout, wanted: set[str], reporter: Reporter, *,
         keep_failure: bool) -> tuple[Run, Failure | None, Path]:
    """Run the wanted steps, recording ``repro-manifest.json``; a failing step raises
    unless ``keep_failure`` (a failed build's repro), which returns it instead."""
    from toolkit.core.errors import ToolkitError
    from toolkit.run import executor, jobs

    outcome = jobs.Outcome(plan.build.id, plan.build.package.name)
    runs: list[Run] = []
    with jobs.build_locks(plan, layout, reporter), jobs.sigterm_as_interrupt():
        try:  # the repro manifest says "running" at once: an earlier "ok" never stays
            run = executor.execute(plan, layout, reporter=reporter, run_out=runs,
                                   only=lambda s: s.name in wanted, log_name="repro.log",
                                   on_start=lambda r: jobs.write_manifest(
                                       r, None, "repro-manifest.json"))
        except KeyboardInterrupt:
            outcome.error = "interrupted"
            if runs:
                jobs.write_manifest(runs[0], outcome, "repro-manifest.json", interrupted=True)
            raise
        except Exception as err:
            outcome.error = str(err)
            outcome.exit_code = err.exit_code if isinstance(err, ToolkitError) else 5
            if not runs:
                raise
            again = jobs.write_manifest(runs[0], outcome, "repro-manifest.json")
            rec = outcome.failure  # what the repro manifest recorded of this failure
            if not keep_failure or runs[0].failed_step is None or rec is None:
                raise
            return runs[0], Failure(rec["step"], rec["exit_code"], tuple(rec["signature"])), again
        return run, None, jobs.write_manifest(run, outcome, "repro-manifest.json")


def _failure_verdict(failed: Failure, here: Failure | None, ran: list[str], reporter: Reporter) -> int:
    """A failed build's repro: 0 when the recorded failure happened again, else CheckFailed."""
    verdict = judge(failed, here, ran)
    for line in verdict.lines:
        reporter.info(line)
    if not verdict.reproduced:
        raise CheckFailed(verdict.headline)
    return 0


def reproduce(path: str, reporter: Reporter, *, step: str | None = None, dry_run: bool = False,
              force: bool = False, workdir: str | None = None, source: str | None = None) -> int:
    from toolkit.plan.model import render
    from toolkit.run import manifest

    data = manifest.load(path)
    failed = Failure.of(data)
    plan, layout, same_tree = _prepare(data, reporter, force=force, workdir=workdir,
                                       source=source)
    names = [s.name for s in plan.steps if rerun(s.name)]
    last = _last_step(names, step, failed)
    wanted = set(names[: names.index(last) + 1])
    if dry_run:
        reporter.info(render(dataclasses.replace(
            plan, steps=tuple(s for s in plan.steps if s.name in wanted))))
        return 0
    if failed is not None:
        reporter.info(f"the manifest records a failure at {failed.step}: running up to it")
    run, here, again = _run(plan, layout, wanted, reporter, keep_failure=failed is not None)
    reporter.info(f"repro manifest: {again}")
    judged = failed is not None and failed.step in wanted
    if not judged and step is not None and step != names[-1]:
        reporter.info(f"stopped after {step} as asked: nothing to compare")
        return 0
    if failed is not None:
        return _failure_verdict(failed, here, [n for n in names if n in wanted], reporter)
    code = _verdict(data, run.values.get("WHEEL"), same_tree, reporter)
    code |= variant_verdict(data, run.values, same_tree, reporter)
    if code:
        raise CheckFailed("the rebuilt wheel is not identical to the recorded one")
    return 0
