"""`python -m toolkit smoke`: does it import, match my torch and ROCm, run on my GPU?"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, TextIO

from toolkit.cli.commands.plan import path_value
from toolkit.core.errors import CheckFailed
from toolkit.verify import smoke_limits as limits
from toolkit.verify.smoke import SmokeOutcome, SmokeTarget


def register(subparsers: Any) -> None:
    p: argparse.ArgumentParser = subparsers.add_parser(
        "smoke",
        help="run the smoke tests of a build inside its environment (installed wheels)",
        description=(
            "Run smoke_tests/ with the build environment's Python against the installed wheel: "
            "imports, torch/ROCm consistency, GPU code for --gfx, and (with an AMD GPU of "
            "that target) small numeric checks. Default build: the newest successful one of "
            "the work folder. Time limits: --test-timeout per test, --timeout for the whole "
            "run; past either, the run ends in one line naming the test and the limit. "
            "Exit 0 only if nothing failed; 1 failed, 2 bad input, 4 environment, "
            "9 a test or the run passed its time limit."
        ),
    )
    add_smoke_options(p)
    p.add_argument("--build", default=None, metavar="ID",
                   help="build id (default: the newest successful build, named; failed, "
                        "running or interrupted ones are passed over)")
    p.add_argument("--manifest", default=None, type=path_value, metavar="FILE",
                   help="the build's manifest (default: artifacts/<id>/manifest.json); a "
                        "build's smoke step passes its run's own")
    p.add_argument("--env", default=None, type=path_value, metavar="PATH",
                   help="the environment to test (default: the build's own)")
    p.add_argument("--json", action="store_true", help="print the results as one JSON object")
    p.set_defaults(func=run)


def add_smoke_options(p: argparse.ArgumentParser) -> None:
    """Options shared with `nox -s smoke-<py>-rocm<rocm> --`."""
    p.add_argument("--gfx", action="append", default=[], metavar="TARGETS",
                   help="gfx ids or family names, comma list (default: the build's targets)")
    p.add_argument("--workdir", default=None, type=path_value, metavar="DIR",
                   help="work folder holding artifacts/ (default: the current folder)")
    p.add_argument("-n", "--numprocesses", dest="workers", default=None, metavar="N",
                   help="run tests in N processes (pytest-xdist; 'auto' = one per CPU)")
    p.add_argument("--junit", default=None, type=path_value, metavar="FILE", help="write JUnit XML here (CI)")
    p.add_argument("--require-gpu", action="store_true",
                   help="fail, not skip, the GPU runtime tests without a GPU of the target")
    p.add_argument("--test-timeout", default=None, metavar="S",
                   help=f"limit of one test in seconds (default: ${limits.TEST_TIMEOUT_ENV}, "
                        f"else {limits.DEFAULT_TEST_TIMEOUT_S:g}; 0: none); a test past it is "
                        "failed (stuck in native code: the run is ended), exit 9")
    p.add_argument("--timeout", default=None, metavar="S",
                   help=f"limit of the whole pytest run in seconds (default: "
                        f"${limits.TIMEOUT_ENV}, else {limits.DEFAULT_TIMEOUT_S:g}; 0: none); "
                        "past it the run is stopped: exit 9")


def run(args: argparse.Namespace) -> int:
    from toolkit.plan.layout import Layout
    from toolkit.verify.smoke import check_targets, resolve

    gfx = check_targets(args.gfx) if args.gfx else None  # bad ids: exit 2 before anything
    workdir = Layout.default(args.workdir).root
    target = resolve(workdir, args.build, args.env, args.manifest)
    if args.env is None and target.manifest_path is not None and not _ready(target):
        # a fresh runner: only dist/<id>/ and artifacts/<id>/ here
        import dataclasses

        from toolkit.cli.console import StreamReporter
        from toolkit.verify.fresh import prepare, usable_manifest

        layout = Layout.default(args.workdir)
        data = usable_manifest(target.manifest_path, layout, target.build_id)
        if data is not None:
            env_dir = prepare(data, target.manifest_path, layout,
                              StreamReporter(sys.stderr if args.json else sys.stdout))
            target = dataclasses.replace(target, env_dir=env_dir)
    # --json: stdout holds the JSON only; progress and pytest's output go to stderr
    outcome = smoke_one(target, gfx, args, out=sys.stderr if args.json else sys.stdout)
    if args.json:
        json.dump(outcome.to_json(), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        show([outcome])
    return finish([outcome])


def _ready(target: SmokeTarget) -> bool:
    """Does the build's recorded environment hold its package (else: a fresh runner)?"""
    from toolkit.core.errors import EnvironmentProblem
    from toolkit.verify.smoke import check_environment

    try:
        check_environment(target)
    except EnvironmentProblem:
        return False
    return True


def smoke_one(target: SmokeTarget, gfx: tuple[str, ...] | None, args: argparse.Namespace,
              *, out: TextIO, junit: Path | None = None) -> SmokeOutcome:
    """Run the suite for one build (``gfx`` None: the targets it was built for); progress
    lines and pytest's output go to ``out``."""
    from toolkit.cli.console import StreamReporter
    from toolkit.core.errors import UsageError
    from toolkit.verify.smoke import run as run_suite

    targets = gfx or target.targets
    if not targets:
        raise UsageError(f"{target.build_id} names no gfx targets; give --gfx")
    reporter = StreamReporter(out)
    reporter.info(f"smoke: {target.build_id} in {target.env_dir} for {', '.join(targets)}"
                  + (f" ({target.picked})" if target.picked else ""))
    if junit is None and args.junit:
        junit = Path(args.junit)
    return run_suite(target, targets, require_gpu=args.require_gpu, workers=args.workers,
                     junit=junit, reporter=reporter, out=out,
                     test_timeout=limits.seconds(args.test_timeout, "--test-timeout",
                                                 limits.TEST_TIMEOUT_ENV,
                                                 limits.DEFAULT_TEST_TIMEOUT_S),
                     timeout=limits.seconds(args.timeout, "--timeout", limits.TIMEOUT_ENV,
                                            limits.DEFAULT_TIMEOUT_S))


def show(outcomes: list[SmokeOutcome], out: TextIO | None = None) -> None:
    """A summary table, then every failure and every skip reason (skips are never passes)."""
    from rich.table import Table

    from toolkit.cli.console import console

    con = console(out)
    table = Table(title="Smoke tests")
    for col in ("Build", "Targets", "Passed", "Failed", "Skipped", "Result"):
        table.add_column(col)
    for o in outcomes:
        failed = o.count("failed") + o.count("error")
        table.add_row(o.build_id, ", ".join(o.targets), str(o.count("passed")), str(failed),
                      str(o.count("skipped")), "ok" if o.ok else "FAILED")
    con.print(table)
    for o in outcomes:
        for c in o.cases:
            if c.outcome in ("failed", "error"):
                first = c.message.strip().splitlines()[0] if c.message.strip() else "(no message)"
                con.print(f"  FAILED {c.name}: {first}", highlight=False, markup=False)
        for reason, n in o.skip_reasons().items():
            con.print(f"  skipped ({n}): {reason}", highlight=False, markup=False)
        if not o.cases:
            con.print(f"  {o.build_id}: no test ran (pytest exit {o.returncode})",
                      highlight=False, markup=False)
        if o.junit:
            con.print(f"  JUnit XML: {o.junit}", highlight=False, markup=False)


def finish(outcomes: list[SmokeOutcome]) -> int:
    bad = [o for o in outcomes if not o.ok]
    if not bad:
        return 0
    parts = []
    for o in bad:
        failed = [c.name for c in o.cases if c.outcome in ("failed", "error")]
        parts.append(f"{o.build_id}: " + (", ".join(failed) if failed
                                            else f"no test ran (pytest exit {o.returncode})"))
    raise CheckFailed("smoke tests failed: " + "; ".join(parts))


def pair_parser(prog: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=prog, exit_on_error=False,
                                description="Smoke-test every build of this pair that has a manifest.")
    add_smoke_options(p)
    p.add_argument("--package", action="append", default=[], help="only these packages (comma list)")
    return p


def run_pair(python: str, rocm: str, posargs: list[str]) -> int:
    """`nox -s smoke-<py>-rocm<rocm>`: every build of the pair with a manifest, one table."""
    from toolkit.core.errors import TimedOut
    from toolkit.verify.smoke import check_targets

    args = pair_parser(f"nox -s smoke-{python}-rocm{rocm} --").parse_args(posargs)
    gfx = check_targets(args.gfx) if args.gfx else None
    targets = _pair_builds(python, rocm, args)
    outcomes = [_smoke_or_broken(t, gfx, args, _junit_for(args.junit, t, len(targets)))
                for t in sorted(targets, key=lambda t: t.build_id)]
    show(outcomes)
    hung = [o for o in outcomes if o.returncode == TimedOut.exit_code]
    if hung:  # a time limit is exit 9 here too, in one line naming each
        raise TimedOut("; ".join(c.message for o in hung
                                 for c in o.cases if c.outcome == "error"))
    return finish(outcomes)


def _pair_builds(python: str, rocm: str, args: argparse.Namespace) -> list[SmokeTarget]:
    """The pair's successful builds with a manifest (of --package, if given); EnvironmentProblem
    when there is none, naming the builds that have one."""
    from toolkit.core.errors import EnvironmentProblem
    from toolkit.plan.layout import Layout
    from toolkit.verify.smoke import manifests

    workdir = Layout.default(args.workdir).root
    found = manifests(workdir)
    targets = _pair_targets(found, python, rocm, {p for v in args.package for p in v.split(",") if p})
    if not targets:
        raise EnvironmentProblem(
            f"no build of Python {python} / ROCm {rocm} has a manifest in {workdir / 'artifacts'} "
            f"(builds with a manifest: {', '.join(sorted(found)) or 'none'})",
            hint=f"nox -s build-{python}-rocm{rocm}" + (" -- --workdir DIR" if args.workdir else ""),
        )
    targets = _succeeded(targets)
    if not targets:
        raise EnvironmentProblem(f"no successful build of Python {python} / ROCm {rocm} in "
                                 f"{workdir / 'artifacts'} to smoke-test",
                                 hint=f"nox -s build-{python}-rocm{rocm}")
    return targets


def _pair_targets(found: dict[str, Path], python: str, rocm: str, packages: set[str]) -> list[SmokeTarget]:
    """The builds with a manifest that are of this Python and ROCm (and of ``packages``, if any)."""
    from toolkit.verify.smoke import load_target

    targets: list[SmokeTarget] = []
    for bid, path in found.items():
        t = load_target(bid, path)
        b = t.manifest["build"]
        if str(b.get("python")) == python and str(b.get("rocm")) == rocm and (
                not packages or b.get("package") in packages):
            targets.append(t)
    return targets


def _succeeded(targets: list[SmokeTarget]) -> list[SmokeTarget]:
    """The targets whose build succeeded; each other one is named, never smoked."""
    from toolkit.core.text import clean

    for t in [t for t in targets if t.manifest.get("outcome") != "ok"]:
        print(f"smoke: {t.build_id} passed over: its build did not succeed (outcome "
              f"{clean(str(t.manifest.get('outcome')))}); smoke it with "
              f"`python -m toolkit smoke --build {t.build_id}`")
    return [t for t in targets if t.manifest.get("outcome") == "ok"]


def _junit_for(junit: str | None, t: SmokeTarget, count: int) -> Path | None:
    """--junit's file for this target: as given for one target, else one per build id."""
    if not junit:
        return None
    j = Path(junit)
    return j if count == 1 else j.with_name(f"{j.stem}-{t.build_id}{j.suffix}")


def _smoke_or_broken(t: SmokeTarget, gfx: tuple[str, ...] | None, args: argparse.Namespace,
                     junit: Path | None) -> SmokeOutcome:
    """Smoke one target; a broken environment is its own error case, never hiding the others."""
    from toolkit.core.errors import ToolkitError
    from toolkit.verify.smoke import Case

    try:
        return smoke_one(t, gfx, args, out=sys.stdout, junit=junit)
    except ToolkitError as err:
        o = SmokeOutcome(t.build_id, gfx or t.targets, returncode=err.exit_code)
        o.cases.append(Case("environment", "error", str(err)))
        return o
