"""`python -m toolkit repro MANIFEST [--step NAME] [--dry-run] [--force] [--workdir DIR]
[--source PATH]`."""

from __future__ import annotations

import argparse

from toolkit.cli.commands.plan import path_value


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("repro", help="re-run a build from its manifest.json")
    p.add_argument("manifest", help="artifacts/<build-id>/manifest.json")
    p.add_argument("--step", default=None, help="stop after this step")
    p.add_argument("--dry-run", action="store_true", help="print the steps, run nothing")
    p.add_argument("--force", action="store_true",
                   help="run even where a host difference makes the comparison meaningless")
    p.add_argument("--workdir", default=None, type=path_value,
                   help="where build/, artifacts/ go (default: the current folder)")
    p.add_argument("--source", default=None, type=path_value,
                   help="a checkout of the recorded source, when the recorded path is not here")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from toolkit.cli.console import StreamReporter
    from toolkit.env.sdist import source_folder
    from toolkit.plan.layout import Layout
    from toolkit.verify.repro import reproduce

    if args.source:  # an sdist: unpacked into the work folder, then a folder
        args.source = source_folder(args.source, Layout.default(args.workdir).root)
    return reproduce(args.manifest, StreamReporter(), step=args.step, dry_run=args.dry_run,
                     force=args.force, workdir=args.workdir, source=args.source)
