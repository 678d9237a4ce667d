"""The main job: run the plans of a session, one build after another, and summarise.

Each build runs provision -> source -> build -> name -> check -> smoke through
``toolkit.run.executor``; a failed build is reported (failing command, exit code, output tail)
and the next build still runs; the final table shows package, wheel, checks, smoke, time.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from toolkit.core.errors import ToolkitError
from toolkit.plan.layout import Layout
from toolkit.plan.planner import Plan, Step
from toolkit.run import executor as execute


def _learn_wheel(step: Step, run: execute.Run) -> None:
    dest = run.layout.dist(run.plan.build)
    wheels = sorted(dest.glob("*.whl"), key=lambda p: p.stat().st_mtime)
    if wheels:
        run.values["WHEEL"] = str(wheels[-1])


execute.register("name-wheel", after=_learn_wheel)

KEY_FILE = ".build-key"


def _hash_tree(h: Any, root: Path) -> None:
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in {".git", "__pycache__", "build"})
        for name in sorted(filenames):
            path = Path(dirpath) / name
            h.update(str(path.relative_to(root)).encode() + b"\0")
            try:
                h.update(path.read_bytes())
            except OSError:
                h.update(b"<unreadable>")


def build_key(step: Step, run: execute.Run) -> str:
    """What a wheel depends on: sources, the exact command and environment, installed dists."""
    h = hashlib.sha256()
    h.update(json.dumps([run.resolve(a) for a in step.argv]).encode())
    h.update(json.dumps(execute.step_environment(step, run, {}), sort_keys=True).encode())
    _hash_tree(h, run.layout.worktree(run.plan.build))
    # The environment as defined: its provisioning stamp and every step before this one
    # (not a listing of site-packages: smoke runs add pytest there, which changes no wheel).
    stamp = run.layout.env_dir(run.plan.build) / ".toolkit-env.json"
    h.update(stamp.read_bytes() if stamp.exists() else b"<no stamp>")
    for earlier in run.plan.steps:
        if earlier.name == step.name:
            break
        h.update(json.dumps([earlier.name, list(earlier.argv), dict(earlier.env)]).encode())
    return h.hexdigest()


def _wheelhouse(run: execute.Run) -> Path:
    return run.layout.build_dir(run.plan.build) / "wheelhouse"


_RPATH_FLAG = re.compile(r"^-Wl,(-rpath[,=]|-R)(/.*)$")


def sanitized_ldshared(python: str) -> str:
    """The interpreter's LDSHARED without absolute ``-Wl,-rpath`` flags.

    Interpreters built with an rpath in LDFLAGS (pyenv, some distros) stamp that build-machine
    path as RUNPATH into every extension they link; the check rightly fails such wheels.
    """
    code = "import sysconfig; print(sysconfig.get_config_var('LDSHARED') or '')"
    res = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=120)
    words = shlex.split(res.stdout.strip()) if res.returncode == 0 else []
    kept = [w for w in words if not _RPATH_FLAG.match(w)]
    return " ".join(shlex.quote(w) for w in kept) or "gcc -shared"


def _before_build(step: Step, run: execute.Run) -> str | None:
    if "{LDSHARED}" in step.env.get("LDSHARED", ""):
        run.values["LDSHARED"] = sanitized_ldshared(str(run.layout.env_python(run.plan.build)))
    key = build_key(step, run)
    house = _wheelhouse(run)
    key_file = house / KEY_FILE
    wheels = list(house.glob("*.whl"))
    forced = os.environ.get("TOOLKIT_REBUILD") == "1"
    if not forced and len(wheels) == 1 and key_file.exists() and key_file.read_text() == key:
        return f"up to date: sources, command and environment unchanged ({key[:12]})"
    shutil.rmtree(house, ignore_errors=True)  # a stale wheel never gets renamed as new
    run.values["_BUILD_KEY"] = key
    return None


def _after_build(step: Step, run: execute.Run) -> None:
    key = run.values.pop("_BUILD_KEY", "")
    if key:
        (_wheelhouse(run) / KEY_FILE).write_text(key)


execute.register("build-wheel", before=_before_build, after=_after_build)


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


def _status(run: execute.Run | None, name: str) -> str | None:
    if run is None:
        return None
    for r in run.results:
        if r.name == name:
            return f"skipped: {r.skipped}" if r.skipped else "passed"
    return None


def run_plans(plans: list[Plan], layout: Layout, out: TextIO | None = None) -> list[Outcome]:
    out = out or sys.stdout
    outcomes: list[Outcome] = []
    for p in plans:
        o = Outcome(p.build.id, p.build.package.name)
        print(f"\n=== {p.build.id} (targets: {', '.join(p.targets)})", file=out, flush=True)
        print(f"    reproduce with: {repro_command(layout, p.build.id)}", file=out, flush=True)
        start = time.monotonic()
        run: execute.Run | None = None
        try:
            run = execute.execute(p, layout, out=out,
                                  on_start=_manifest_at_start)
        except ToolkitError as err:
            o.error = str(err)
            o.exit_code = err.exit_code
            print(f"error: {err}", file=out, flush=True)
            print(f"    reproduce with: {repro_command(layout, p.build.id)}", file=out, flush=True)
            run = execute.LAST_RUN
        o.seconds = time.monotonic() - start
        if run is not None:
            if "WHEEL" in run.values:
                o.wheel = Path(run.values["WHEEL"]).name
            failed = run.failed_step
            o.checks = _status(run, "check") or ("FAILED" if failed == "check" else "not run")
            o.smoke = _status(run, "smoke") or ("FAILED" if failed == "smoke" else "not run")
            if not any(s.name == "smoke" for s in p.steps):
                o.smoke = "not planned"
            write_manifest(run, o)
        outcomes.append(o)
    return outcomes


def summary(outcomes: list[Outcome], out: TextIO | None = None) -> None:
    from rich.table import Table

    from toolkit.cli.console import console

    table = Table(title="Builds")
    for col in ("Build", "Wheel", "Checks", "Smoke", "Time", "Result"):
        table.add_column(col)
    for o in outcomes:
        table.add_row(o.build_id, o.wheel, o.checks, o.smoke, f"{o.seconds:.1f}s",
                      "ok" if o.error is None else "FAILED")
    console(out).print(table)


def exit_code(outcomes: list[Outcome]) -> int:
    return next((o.exit_code for o in outcomes if o.exit_code), 0)


def write_manifest(run: execute.Run, outcome: Outcome | None,
                   name: str = "manifest.json") -> Path:
    """``artifacts/<build-id>/manifest.json`` (see toolkit.run.manifest); ``outcome`` None = running."""
    from toolkit import __version__
    from toolkit.plan.recipes import recipe_for
    from toolkit.run import manifest

    p = run.plan
    b = p.build
    recipe = recipe_for(b.package.recipe)
    env_python = str(run.layout.env_python(b))
    plan_json = p.as_json()
    finished = outcome is not None
    data = {
        "schema_version": manifest.SCHEMA_VERSION,
        "toolkit_version": __version__,
        "build": b.as_json(),
        "recipe": b.package.recipe,
        "dist": b.package.dist,
        "targets": list(p.targets),
        "family": p.family,
        "source": {"repo": b.package.repo, "ref": b.pkg_version.ref, "path": p.source,
                   "sha": run.values.get("SHA")},
        "workdir": str(run.layout.root),
        "env_dir": str(run.layout.env_dir(b)),
        "wheel": run.values.get("WHEEL"),
        "wheel_sha256": manifest._sha256(run.values["WHEEL"]) if "WHEEL" in run.values else None,
        "expected_modules": list(recipe.expected_modules(b.pkg_version)),
        "required_symbols": list(recipe.required_symbols(b.pkg_version)),
        "sdk": manifest.sdk_facts(plan_json, run.values),
        "installed": manifest.installed(env_python) if finished else [],
        "environment": {s.name: dict(s.env) for s in p.steps if s.env},
        "unset": sorted({v for s in p.steps for v in s.unset}),
        "tools": manifest.tool_versions(env_python, run.values.get("ROCM_BIN"))
        if finished else {},
        "host": manifest.host_facts() if finished else {},
        "learned": {k: v for k, v in run.values.items() if not k.startswith("_")},
        "steps": [
            {"name": r.name, "argv": r.argv, "env": r.env, "returncode": r.returncode,
             "seconds": round(r.seconds, 3), "skipped": r.skipped}
            for r in run.results
        ],
        "plan": plan_json,
        "outcome": "running" if outcome is None else ("ok" if outcome.error is None else "failed"),
        "failed_step": run.failed_step,
        "error": outcome.error if outcome else None,
        "repro": repro_command(run.layout, b.id),
    }
    return manifest.write(run.layout.artifacts(b) / name, data)


def _manifest_at_start(run: execute.Run) -> None:
    write_manifest(run, None)


def repro_command(layout: Layout, build_id: str) -> str:
    return f"invoke repro {layout.artifacts_rel(build_id)}/manifest.json"
