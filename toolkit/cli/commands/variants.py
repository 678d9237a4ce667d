"""`python -m toolkit variants DIR --gfx gfx90a --python 3.12`: the wheel a variant-aware
installer picks from DIR for that GPU and Python (``toolkit.verify.variant_pick``)."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("variants", help="the wheel of DIR a variant-aware installer picks")
    p.add_argument("folder", metavar="DIR", help="folder holding the wheels, e.g. dist/<build-id>")
    p.add_argument("--gfx", metavar="TARGET", default=None,
                   help="the GPU to pick for, e.g. gfx90a (default: the GPU rocm-bootstrap "
                        "detects here)")
    p.add_argument("--python", required=True, metavar="3.N", help="the Python version, e.g. 3.12")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from toolkit.core.text import escape
    from toolkit.verify.variant_pick import pick

    chosen = pick(Path(args.folder), args.gfx, args.python)
    print(escape(chosen.wheel or ""))
    why = (f"variant {chosen.label} (amd :: gfx_arch :: {chosen.label})" if chosen.label
           else "the wheel without a variant label: no variant fits")
    order = ", ".join(chosen.order)
    print(f"  GPU {escape(chosen.gpu)}: {why}; variantlib's order: {escape(order)}")
    return 0
