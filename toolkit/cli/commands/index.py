"""`python -m toolkit index DIR`: write ``DIR/index.html``, a find-links page of its wheels.

``pip install --find-links DIR/index.html NAME`` (or the page's http:// URL) then installs
from it, verifying each wheel's sha256. A wheel that cannot be listed (corrupt, failing
check's integrity rules, badly named, a symlink out of DIR) is one warning line and left
off; ``--strict`` makes that an error (exit 2, the page is not written). Two different
wheels under one file name are refused (exit 2). An unchanged page is not rewritten.

Wheel variants (``<name>-<ver>-<py>-<abi>-<plat>-<label>.whl``, which pip cannot select) are
not on the page: each folder holding some gets ``<name>-<version>-variants.json``, the same
document ``variantlib generate-index-json`` writes for that folder
(``toolkit.run.variant_wheels``).
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from toolkit.core.reporter import Reporter


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("index", help="write DIR/index.html, a pip --find-links page of DIR's wheels")
    p.add_argument("folder", metavar="DIR",
                   help="folder holding the wheels, e.g. dist (searched recursively)")
    p.add_argument("--strict", action="store_true",
                   help="exit 2, writing nothing, when a *.whl under DIR cannot be listed")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from toolkit.cli.console import StreamReporter
    from toolkit.core.errors import UsageError
    from toolkit.run.findlinks import render, scan, shown, write_index

    reporter = StreamReporter()
    found = scan(args.folder)
    # a wheel variant is not for pip's page: it goes into the variants JSON
    found = dataclasses.replace(found, skipped=tuple(s for s in found.skipped
                                                     if not _is_variant(s.path)))
    for skipped in found.skipped:
        reporter.warning(str(skipped))
    for note in found.notes:
        reporter.warning(note)
    if args.strict and found.skipped:
        raise UsageError(f"{len(found.skipped)} file(s) under {shown(args.folder)} cannot be "
                         "listed (see above); nothing written")
    index, written = write_index(found.root, render(found.links))
    _write_variants(reporter, found.root)
    if not found.links:
        reporter.warning(f"no wheels under {shown(args.folder)}: the page lists nothing")
    n = len(found.links)
    state = "written" if written else "unchanged"
    reporter.info(f"{shown(str(index))}: {n} wheel{'s' if n != 1 else ''} ({state})")
    return 0


def _is_variant(path: str) -> bool:
    from toolkit.core.variants import parse_name

    name = parse_name(path.rsplit("/", 1)[-1])
    return name is not None and name.label is not None


def _write_variants(reporter: Reporter, root: Path) -> None:
    from toolkit.run.findlinks import shown
    from toolkit.run.variant_wheels import write_index_documents

    paths, warnings = write_index_documents(root)
    for line in warnings:
        reporter.warning(line)
    for path in paths:
        reporter.info(f"{shown(str(path))}: the variants index (variantlib's JSON)")
