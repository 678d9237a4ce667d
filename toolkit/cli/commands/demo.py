"""`python -m toolkit demo [--workdir DIR] ...`: the main job on the bundled sample
(what ``nox -s demo`` runs; works from an installed, non-editable toolkit too)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("demo", help="build, check and smoke-test the bundled sample",
                       add_help=False)
    p.add_argument("rest", nargs=argparse.REMAINDER)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        demo_main(args.rest, "python -m toolkit demo")
    except argparse.ArgumentError as err:
        from toolkit.core.errors import UsageError

        raise UsageError(str(err)) from None
    return 0


def demo_main(argv: Sequence[str], prog: str) -> None:
    """The demo's body, shared by ``nox -s demo`` and ``python -m toolkit demo``."""
    import dataclasses

    from toolkit.cli.running import run_and_summarise
    from toolkit.env.host import SystemRocm, discover
    from toolkit.plan.layout import Layout
    from toolkit.plan.model import Options, render
    from toolkit.plan.planner import plan
    from toolkit.plan.recipes import load_matrix
    from toolkit.plan.recipes.sample import DEMO_TARGETS, EXAMPLE, demo_build, detect_hip

    p = argparse.ArgumentParser(prog=prog, exit_on_error=False,
                                description="Build, check and smoke-test the bundled sample.")
    p.add_argument("--gfx", action="append", default=[], help="default: gfx90a,gfx908")
    p.add_argument("--dry-run", action="store_true", help="print the plan, run nothing")
    p.add_argument("--json", action="store_true", help="with --dry-run: the plan as JSON")
    p.add_argument("--workdir", default=None, help="where dist/, artifacts/, build/ go")
    p.add_argument("--cpu", action="store_true", help="build the CPU variant even with hipcc")
    p.add_argument("--no-smoke", action="store_true", help="stop after the checks")
    p.add_argument("--rebuild", action="store_true",
                   help="build the wheel even when nothing it depends on changed")
    args = p.parse_args(list(argv))
    matrix = load_matrix()
    hip = None if args.cpu else detect_hip()
    python = f"{sys.version_info.major}.{sys.version_info.minor}"
    build = demo_build(python, hip)
    host = discover()
    host = dataclasses.replace(
        host, interpreters={python: sys.executable},
        system_rocm=SystemRocm(hip[0], hip[1]) if hip else None)
    gfx = matrix.expand_gfx(args.gfx) if args.gfx else DEMO_TARGETS
    opts = Options(gfx=gfx, rocm_from="system", source=str(EXAMPLE), smoke=not args.no_smoke,
                   rebuild=args.rebuild)
    layout = Layout.default(args.workdir)
    the_plan = plan(matrix, build, opts, host, layout, toolkit_python=sys.executable)
    if args.dry_run:
        print(the_plan.to_json() if args.json else render(the_plan))
        return
    if hip:
        print(f"demo: HIP {hip[1]} compiler found under {hip[0]}: building GPU code")
    else:
        print("demo: no ROCm/HIP compiler on this machine: building the CPU variant "
              "(install Debian's hipcc for real GPU code)")
    run_and_summarise([the_plan], layout)
