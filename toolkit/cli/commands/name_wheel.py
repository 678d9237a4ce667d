"""`python -m toolkit name-wheel`: give a built wheel its final name, atomically."""

from __future__ import annotations

import argparse
from pathlib import Path


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("name-wheel", help="rename a built wheel (+rocm<r>git<sha8>) into a folder")
    p.add_argument("wheelhouse", help="folder holding the one wheel a build produced")
    p.add_argument("--rocm", required=True, help="ROCm version for the local label, e.g. 7.0")
    p.add_argument("--sha", required=True, help="source commit")
    p.add_argument("--naming", default="toolkit", choices=("toolkit", "upstream"))
    p.add_argument("--dest", required=True, help="destination folder (dist/<build-id>)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from toolkit.run.wheels import local_label, name_wheel

    label = local_label(args.rocm, args.sha) if args.naming == "toolkit" else None
    print(name_wheel(Path(args.wheelhouse), Path(args.dest), label=label))
    return 0
