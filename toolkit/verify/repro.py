"""Re-run a build from its manifest: same lock, packages, environment variables, sources.

``reproduce(manifest)`` rebuilds the recorded plan (the exact argv, env and cwd of every step;
sources at the recorded commit), says what differs between the manifest's host and this one,
refuses when a difference makes the reproduction meaningless (another ROCm major.minor, a
missing interpreter) unless forced, then runs the steps up to ``step`` and compares the
installed distributions and step commands with the manifest's.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from toolkit.core.errors import EnvironmentProblem, UsageError
from toolkit.core.reporter import Reporter
from toolkit.data.matrix import Build, load_matrix
from toolkit.plan.layout import Layout
from toolkit.plan.model import Plan


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


def _build(data: Mapping[str, Any]) -> Build:
    info = data["build"]
    if data.get("recipe") == "sample":
        from toolkit.plan.recipes.sample import demo_build

        root = data["sdk"].get("root")
        hip = (root, info["rocm"]) if info["rocm"] != "cpu" else None
        return demo_build(info["python"], hip)
    return load_matrix().build(info["id"])


def reconstruct(data: Mapping[str, Any]) -> tuple[Plan, Layout]:
    """Plan the build again from the manifest's recorded inputs (never its commands): the
    build, its options and targets, the sources pinned to the recorded commit."""
    from toolkit.env.host import SystemRocm, discover
    from toolkit.env.rocm import with_system_rocm
    from toolkit.plan.locks import read_locks
    from toolkit.plan.model import options_from_json
    from toolkit.plan.planner import plan

    build = _build(data)
    sha = data["source"].get("sha")
    options = options_from_json(data.get("options") or {})
    env_dir = Path(data["env_dir"])
    layout = Layout(Path(data["workdir"]), env_dir.parent.parent)
    if sha and not options.source:
        build = dataclasses.replace(build, pkg_version=dataclasses.replace(build.pkg_version,
                                                                           ref=sha))
    options = dataclasses.replace(
        options, gfx=tuple(data["targets"]), rebuild=True,
        locks=() if options.no_lock else read_locks(layout.locks()))
    host = discover()
    create = next((s for s in data["plan"]["steps"] if s["name"] == "check-env"), None)
    interp = ((create or {}).get("action") or {}).get("interpreter")
    if isinstance(interp, str) and os.path.isabs(interp) and os.path.exists(interp):
        host = dataclasses.replace(host, interpreters=MappingProxyType({build.python: interp}))
    root = data["sdk"].get("root")
    if data["sdk"].get("provider") == "system" and build.rocm.version != "cpu":
        host = (dataclasses.replace(host, system_rocm=SystemRocm(root, build.rocm.version))
                if root and os.path.isdir(root) else with_system_rocm(host, build.rocm.version))
    return plan(load_matrix(), build, options, host, layout, toolkit_python=sys.executable), layout


def plan_differences(recorded: Mapping[str, Any], again: Plan) -> list[str]:
    """Steps the recorded plan and the plan made here disagree on (name and kind)."""
    old = [(s.get("name"), (s.get("action") or {}).get("kind")) for s in recorded["steps"]]
    new = [(s.name, s.kind) for s in again.steps]
    if old == new:
        return []
    return [f"recorded steps {', '.join(f'{n} ({k})' for n, k in old)}; "
            f"planned here {', '.join(f'{n} ({k})' for n, k in new)}"]


def differences(data: Mapping[str, Any]) -> list[Difference]:
    from toolkit.env.gpus import detect
    from toolkit.env.interpreters import find
    from toolkit.run.manifest import host_facts

    out: list[Difference] = []
    python = data["build"]["python"]
    try:
        find(python)
    except EnvironmentProblem as err:
        out.append(Difference("Python interpreter", python, f"missing ({err.message})", True))
    sdk = data["sdk"]
    wanted = _major_minor(sdk.get("version")) or data["build"]["rocm"]
    if sdk.get("provider") == "system" and wanted != "cpu":
        from toolkit.env.rocm import find_system

        try:
            found = find_system(want=wanted)
            here = f"{found.version} at {found.root}"
            if _major_minor(found.version) != wanted:
                out.append(Difference("ROCm", f"{sdk.get('version') or wanted}", here, True))
        except EnvironmentProblem:
            out.append(Difference("ROCm", f"{sdk.get('version') or wanted}", "no system ROCm",
                                  True))
    host = data.get("host") or {}
    gpus = [g.gfx for g in detect().gpus]
    if sorted(host.get("gpus", [])) != sorted(gpus):
        out.append(Difference("GPUs", ", ".join(host.get("gpus", [])) or "none",
                              ", ".join(gpus) or "none", False))
    here_host = host_facts()
    for key in ("glibc", "os"):
        if host.get(key) and host.get(key) != here_host.get(key):
            out.append(Difference(key, str(host.get(key)), str(here_host.get(key)), False))
    return out


def compare(original: Mapping[str, Any], again: Mapping[str, Any]) -> list[str]:
    """What differs between the manifest and the reproduction (installed dists, step argv)."""
    notes: list[str] = []
    a = {d["name"]: d["version"] for d in original.get("installed", [])}
    b = {d["name"]: d["version"] for d in again.get("installed", [])}
    for name in sorted(set(a) | set(b)):
        if a.get(name) != b.get(name):
            notes.append(f"installed {name}: manifest {a.get(name) or '-'}, now {b.get(name) or '-'}")
    ran = {s["name"]: s["argv"] for s in again.get("steps", []) if not s.get("skipped")}
    for s in original.get("steps", []):
        if s["name"] in ran and not s.get("skipped") and s["argv"] != ran[s["name"]]:
            notes.append(f"step {s['name']}: argv differs")
    return notes


def reproduce(path: str, reporter: Reporter, *, step: str | None = None, dry_run: bool = False,
              force: bool = False) -> int:
    from toolkit.plan.model import render
    from toolkit.run import executor, jobs, manifest
    from toolkit.run.context import Run

    data = manifest.load(path)
    plan, layout = reconstruct(data)
    names = [s.name for s in plan.steps]
    if step is not None and step not in names:
        raise UsageError(f"unknown step {step!r}; this build's steps: {', '.join(names)}")
    diffs = differences(data)
    for d in diffs:
        mark = "REFUSE" if d.fatal else "note"
        reporter.info(f"{mark:>6}  {d.what}: manifest {d.manifest}; this machine {d.here}")
    if not diffs:
        reporter.info("host: same ROCm, interpreter, GPUs and glibc as the manifest")
    fatal = [d for d in diffs if d.fatal]
    if fatal and not force:
        raise EnvironmentProblem(
            "reproduction would be meaningless here: "
            + "; ".join(f"{d.what} {d.manifest} in the manifest, {d.here} here" for d in fatal),
            hint="run it on a matching machine, or pass --force")
    changed = plan_differences(data["plan"], plan)
    if changed:
        raise UsageError("the recorded plan differs from the plan made here from its inputs: "
                         + "; ".join(changed))
    last = names.index(step) if step else len(names) - 1
    wanted = set(names[: last + 1])
    if dry_run:
        reporter.info(render(dataclasses.replace(plan, steps=tuple(s for s in plan.steps
                                                             if s.name in wanted))))
        return 0
    outcome = jobs.Outcome(plan.build.id, plan.build.package.name)
    runs: list[Run] = []
    try:
        run = executor.execute(plan, layout, reporter=reporter, run_out=runs,
                               only=lambda s: s.name in wanted)
    except Exception as err:
        outcome.error = str(err)
        if runs:
            jobs.write_manifest(runs[0], outcome, "repro-manifest.json")
        raise
    again = jobs.write_manifest(run, outcome, "repro-manifest.json")
    notes = compare(data, manifest.load(again))
    for note in notes:
        reporter.info(f"  differs: {note}")
    if not notes:
        reporter.info(f"reproduced: same installed distributions ({len(data['installed'])}) "
                      f"and the same step commands; see {again}")
    return 1 if notes else 0
