"""Reproduce a build from its manifest, and prove it.

A manifest comes from a CI artifact: it is untrusted input. It is schema-validated, and
``repro`` never runs a command it holds: it re-plans the build from the recorded *inputs*
(build id, options, targets, the source commit or tree, the lock files) with this toolkit,
compares that plan with the recorded one (host-dependent values aside) and refuses in one
line (exit 2) where they differ. Then it runs its own plan (every step but ``publish``: the
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
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from toolkit.core.errors import CheckFailed, EnvironmentProblem, UsageError
from toolkit.core.reporter import Reporter
from toolkit.core.urls import mask
from toolkit.data.matrix import Build
from toolkit.plan.layout import Layout
from toolkit.plan.model import Options, Plan
from toolkit.plan.recipes import load_matrix, standalone_build

# values that depend on the host, not on the build: never a reason to refuse
_HOST_ENV = {"MAX_JOBS", "CMAKE_C_COMPILER_LAUNCHER", "CMAKE_CXX_COMPILER_LAUNCHER",
             "CMAKE_HIP_COMPILER_LAUNCHER"}
_DERIVED = {"definition", "does", "description", "force"}  # force: repro always rebuilds


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
    return standalone_build(str(info["id"]), data) or load_matrix().build(info["id"])


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
                layout: Layout | None = None) -> tuple[Plan, Layout]:
    """Plan the build again from the manifest's recorded inputs (never its commands): the
    build, its options and targets, the sources pinned to the recorded commit; in the
    recorded work folder and cache unless ``layout`` says where."""
    from toolkit.env.host import SystemRocm, discover
    from toolkit.env.rocm import with_system_rocm
    from toolkit.plan.locks import read_locks
    from toolkit.plan.planner import plan

    build = _build(data)
    sha = data["source"].get("sha")
    options = _options(data, os.environ if environ is None else environ)
    if layout is None:
        layout = Layout(Path(data["workdir"]), Path(data["env_dir"]).parent.parent)
    if sha and not options.source:
        build = dataclasses.replace(build, pkg_version=dataclasses.replace(build.pkg_version,
                                                                           ref=sha))
    options = dataclasses.replace(
        options, gfx=tuple(data["targets"]), rebuild=True,
        locks=() if options.no_lock else read_locks(layout.locks()))
    host = discover()
    check = next((s for s in data["plan"]["steps"] if s.get("name") == "check-env"), None)
    interp = ((check or {}).get("action") or {}).get("interpreter")
    if isinstance(interp, str) and os.path.isabs(interp) and os.path.exists(interp):
        host = dataclasses.replace(host, interpreters=MappingProxyType({build.python: interp}))
    root = data["sdk"].get("root")
    if data["sdk"].get("provider") == "system" and build.rocm.version != "cpu":
        host = (dataclasses.replace(host, system_rocm=SystemRocm(root, build.rocm.version))
                if isinstance(root, str) and os.path.isdir(root)
                else with_system_rocm(host, build.rocm.version))
    return plan(load_matrix(), build, options, host, layout, toolkit_python=sys.executable), layout


def _normal(steps: Any, tools: Mapping[str, str]) -> list[Any]:
    """A plan's steps without what depends on the host (tool paths, job counts) or on the
    credentials given (never recorded)."""
    text = json.dumps(steps, sort_keys=True).replace("://***@", "://")  # credentials aside
    for path, token in tools.items():
        if path:
            text = text.replace(json.dumps(path)[1:-1], token)

    def clean(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: clean(v) for k, v in node.items()
                    if k not in _DERIVED and k not in _HOST_ENV}
        if isinstance(node, list):
            return [clean(v) for v in node]
        return node

    return list(clean(json.loads(text)))


def _tools(steps: Any) -> dict[str, str]:
    """The toolkit's python and uv as a plan names them."""
    out: dict[str, str] = {}
    for s in steps if isinstance(steps, list) else []:
        action = s.get("action") if isinstance(s, dict) else None
        if not isinstance(action, dict):
            continue
        if isinstance(action.get("toolkit_python"), str):
            out[action["toolkit_python"]] = "<toolkit-python>"
        if action.get("kind") == "create-env" and isinstance(action.get("uv"), str):
            out[action["uv"]] = "<uv>"
    return out


def plan_differences(recorded: Mapping[str, Any], again: Plan) -> list[str]:
    """Where the recorded plan and the plan made here from its inputs disagree."""
    old_steps = recorded.get("steps", [])
    new_steps = json.loads(again.to_json())["steps"]
    old = _normal(old_steps, _tools(old_steps))
    new = _normal(new_steps, _tools(new_steps))
    if old == new:
        return []
    names_old = [s.get("name") for s in old if isinstance(s, dict)]
    names_new = [s.get("name") for s in new]
    if names_old != names_new:
        return [f"steps {', '.join(map(str, names_old))} recorded; {', '.join(names_new)} "
                "planned here"]
    out = []
    for a, b in zip(old, new, strict=True):
        if a != b:
            keys = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
            out.append(f"step {b['name']}: {', '.join(keys)} differ")
    return out


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


def _tree_check(data: Mapping[str, Any], plan: Plan, force: bool,
                reporter: Reporter) -> bool:
    """A --source build: is the checkout the recorded tree? (False: it is not, forced.)"""
    recorded = data["source"].get("tree")
    if not plan.source or not recorded:
        return True
    from toolkit.run.sources import IGNORED, tree_hash

    source = Path(plan.source)
    if not source.is_dir():
        raise UsageError(f"the recorded --source {plan.source} is not here")
    here = tree_hash(source, IGNORED)
    if here == recorded:
        return True
    if not force:
        raise UsageError(f"the source tree {plan.source} differs from the recorded one "
                         f"(tree {here[:12]}, recorded {recorded[:12]})",
                         hint="restore it, or pass --force (the result is then never "
                              "called identical)")
    reporter.info(f"note: the source tree differs from the recorded one ({here[:12]} vs "
                  f"{recorded[:12]}); going on because of --force")
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


def reproduce(path: str, reporter: Reporter, *, step: str | None = None, dry_run: bool = False,
              force: bool = False) -> int:
    from toolkit.plan.model import render
    from toolkit.run import executor, jobs, manifest
    from toolkit.run.context import Run

    data = manifest.load(path)
    plan, layout = reconstruct(data)
    changed = plan_differences(data["plan"], plan)
    if changed:
        raise UsageError("refusing: the recorded plan differs from the plan this toolkit makes "
                         "from the manifest's inputs: " + "; ".join(changed),
                         hint="rebuild with this toolkit version, or inspect the manifest")
    names = [s.name for s in plan.steps if s.name != "publish"]
    if step is not None and step not in names:
        raise UsageError(f"unknown step {step!r}; this build's steps: {', '.join(names)}")
    diffs = differences(data)
    for d in diffs:
        mark = "REFUSE" if d.fatal else "note"
        reporter.info(f"{mark:>6}  {d.what}: manifest {d.manifest}; this machine {d.here}")
    fatal = [d for d in diffs if d.fatal]
    if fatal and not force:
        raise EnvironmentProblem(
            "reproduction would be meaningless here: "
            + "; ".join(f"{d.what} {d.manifest} in the manifest, {d.here} here" for d in fatal),
            hint="run it on a matching machine, or pass --force")
    same_tree = _tree_check(data, plan, force, reporter)
    last = names.index(step) if step else len(names) - 1
    wanted = set(names[: last + 1])
    if dry_run:
        reporter.info(render(dataclasses.replace(
            plan, steps=tuple(s for s in plan.steps if s.name in wanted))))
        return 0
    outcome = jobs.Outcome(plan.build.id, plan.build.package.name)
    runs: list[Run] = []
    with jobs.build_locks(plan, layout, reporter):
        try:
            run = executor.execute(plan, layout, reporter=reporter, run_out=runs,
                                   only=lambda s: s.name in wanted,
                                   log_name="repro.log")
        except Exception as err:
            outcome.error = str(err)
            if runs:
                jobs.write_manifest(runs[0], outcome, "repro-manifest.json")
            raise
        again = jobs.write_manifest(run, outcome, "repro-manifest.json")
    reporter.info(f"repro manifest: {again}")
    if step is not None and step != names[-1]:
        reporter.info(f"stopped after {step} as asked: no wheel to compare")
        return 0
    code = _verdict(data, run.values.get("WHEEL"), same_tree, reporter)
    if code:
        raise CheckFailed("the rebuilt wheel is not identical to the recorded one")
    return 0
