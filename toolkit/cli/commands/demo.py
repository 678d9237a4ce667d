"""`python -m toolkit demo [--source PATH] [--gfx ...] ...`: the main job on the bundled sample,
or on your own project (what ``nox -s demo --`` runs, with the same options and ``--help``:
both come from ``add_demo_arguments``; works from an installed, non-editable toolkit too)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from toolkit.cli.commands.plan import path_value

DESCRIPTION = ("Build, check and smoke-test the bundled sample HIP extension, or your own "
               "project (--source PATH), with this machine's Python and ROCm.")


def add_demo_arguments(p: argparse.ArgumentParser) -> None:
    """The demo's options: one definition for ``python -m toolkit demo`` and ``nox -s demo``."""
    p.add_argument("--source", default=None, type=path_value, metavar="PATH",
                   help="build the setuptools/pyproject project at PATH (a folder, or its "
                        "sdist .tar.gz/.zip) instead of the bundled sample (copied, never "
                        "modified)")
    p.add_argument("--gfx", action="append", default=[], metavar="TARGETS",
                   help="gfx ids or family names, comma list (default: gfx90a,gfx908)")
    p.add_argument("--dry-run", action="store_true", help="print the plan, run nothing")
    p.add_argument("--json", action="store_true", help="with --dry-run: the plan as JSON")
    p.add_argument("--workdir", default=None, type=path_value, metavar="DIR",
                   help="where dist/, artifacts/, build/ go (default: the current folder)")
    p.add_argument("--cpu", action="store_true",
                   help="build the CPU variant (no GPU code), even where hipcc is installed")
    p.add_argument("--no-smoke", action="store_true", help="stop after the checks")
    p.add_argument("--rebuild", action="store_true",
                   help="build the wheel even when nothing it depends on changed")
    p.add_argument("--allow-dirty", action="store_true",
                   help="build a source with uncommitted changes (else exit 12); its wheel is "
                        "named +...dirty and never replaces the clean one")
    p.add_argument("--variants", action="store_true",
                   help="also build one wheel variant per gfx target (PEP 825 draft, "
                        "amd :: gfx_arch), checked and published beside the fat wheel")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("demo", help="build, check and smoke-test the bundled sample or --source",
                       description=DESCRIPTION)
    add_demo_arguments(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    demo(args)
    return 0


def demo_main(argv: Sequence[str], prog: str) -> None:
    """``nox -s demo -- ARGS``: the same parser, the same body."""
    from toolkit.cli.main import COMMAND_HELP, Parser, exit_codes

    p = Parser(prog=prog, exit_on_error=False, description=DESCRIPTION,
               epilog=exit_codes(COMMAND_HELP["demo"][1]))  # as `python -m toolkit demo -h`
    add_demo_arguments(p)
    demo(p.parse_args(list(argv)))


def demo(args: argparse.Namespace) -> None:
    import dataclasses

    from toolkit.cli.running import run_and_summarise
    from toolkit.env.host import SystemRocm
    from toolkit.plan.layout import Layout
    from toolkit.plan.model import render
    from toolkit.plan.recipes import load_matrix
    from toolkit.plan.recipes.sample import DEMO_TARGETS, EXAMPLE, demo_build, demo_rocm, detect_hip
    from toolkit.plan.request import Request, given_options, prepare, resolve

    matrix = load_matrix()
    layout = Layout.default(args.workdir)
    hip = None if args.cpu else detect_hip()
    python = f"{sys.version_info.major}.{sys.version_info.minor}"
    from toolkit.env.sdist import source_folder

    args.source = source_folder(args.source, layout.root)  # an sdist: unpacked, then a folder
    # the demo's own defaults: this machine's ROCm, the demo's targets, no lock files; the
    # source's uncommitted changes refused before anything is read
    given = dataclasses.replace(given_options(args, environ={}), rocm_from="system",
                                gfx=tuple(args.gfx) or DEMO_TARGETS, no_lock=True,
                                source=args.source or str(EXAMPLE))
    opts = resolve(given, matrix, layout)
    if args.source:
        from toolkit.cli.own_project import project_build

        build = project_build(args.source, python, demo_rocm(hip), "", layout)
        opts = dataclasses.replace(opts, source=build.package.repo)
    else:
        build = demo_build(python, hip)
    source = opts.source
    the_plan, _, _ = prepare(Request(
        matrix, (build,), opts, layout, interpreters={python: sys.executable}, rocm="given",
        system_rocm=SystemRocm(hip[0], hip[1]) if hip else None))
    if args.dry_run:
        from toolkit.core.text import clean

        print(the_plan.to_json() if args.json else clean(render(the_plan)))
        return
    what = f"{build.package.dist} {build.version} from {source}" if args.source else "the sample"
    if hip:
        print(f"demo: HIP {hip[1]} compiler found under {hip[0]}: building {what} for "
              f"{', '.join(the_plan.targets)}")
    elif args.cpu:
        print(f"demo: --cpu: building the CPU variant of {what}, as asked (no GPU code)")
    else:
        print(f"demo: no ROCm/HIP compiler on this machine: building the CPU variant of {what} "
              "(install Debian's hipcc for real GPU code)")
    run_and_summarise([the_plan], layout)
