"""`python -m toolkit demo [--workdir DIR] ...`: the main job on the bundled sample
(what ``nox -s demo`` runs; works from an installed, non-editable toolkit too)."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("demo", help="build, check and smoke-test the bundled sample",
                       add_help=False)
    p.add_argument("rest", nargs=argparse.REMAINDER)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from toolkit.cli.sessions import demo_main

    try:
        demo_main(args.rest, "python -m toolkit demo")
    except argparse.ArgumentError as err:
        from toolkit.core.errors import UsageError

        raise UsageError(str(err)) from None
    return 0
