"""`python -m toolkit preflight hip-match --hipcc H --python P`."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("preflight", help="checks before a build (e.g. hipcc vs torch HIP)")
    p.add_argument("check", choices=("hip-match",))
    p.add_argument("--hipcc", required=True)
    p.add_argument("--python", required=True, help="the build environment's python")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from toolkit.run.preflight import hip_match

    print(f"hipcc and torch agree: HIP {hip_match(args.hipcc, args.python)}")
    return 0
