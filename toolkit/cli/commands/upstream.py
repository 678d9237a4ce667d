"""`python -m toolkit upstream [DIR] [--write] [--json] [--pr-body FILE]`: the drift between
toolkit/data and the upstream repositories (ROCm/apex, pytorch/FBGEMM, pytorch/test-infra,
ROCm/TheRock).

DIR holds the repositories as ``OWNER+NAME/repo`` (the layout of ``TOOLKIT_UPSTREAM_DIR``);
without it, bare partial clones in the cache, fetched again on each run. One line per fact:
``<kind>: <what>: data <value>; upstream <value> [<owner/repo@commit path>]``.

Exit 0: no drift; 1: drift (or something that needs a recipe review); 2: DIR lacks a
repository or is not one; 3: malformed data; 4: git is missing; 8: a repository cannot be
fetched (no DIR). ``--write`` settles what upstream states outright, in place (comments and
evidence kept), and lists what still needs a review; it reads upstream again after writing,
and writes again, until nothing more is written (a new torch pair, then the version waiting
for it), and exits 0 only when nothing is left.
``--pr-body FILE`` also writes the markdown body of the pull request CI opens for the drift
(``toolkit.cli.pr_body``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from toolkit.cli.commands.plan import path_value

if TYPE_CHECKING:
    from toolkit.verify.upstream.model import Fact


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("upstream", help="show (and --write) what upstream changed")
    p.add_argument("dir", nargs="?", default=None, metavar="DIR",
                   help="folder of upstream repositories (OWNER+NAME/repo); default: partial "
                        "clones in the cache")
    p.add_argument("--write", action="store_true",
                   help="update the data files where upstream states the value")
    p.add_argument("--json", action="store_true", help="print the facts as JSON")
    p.add_argument("--pr-body", default=None, type=path_value, metavar="FILE",
                   help="also write a pull request body (markdown) to FILE: the facts written "
                        "and those left for a maintainer")
    p.set_defaults(func=run)


def _safe(text: str) -> str:
    return "".join(c if c.isprintable() else ascii(c)[1:-1] for c in text)


def run(args: argparse.Namespace) -> int:
    from toolkit.data.matrix import data_dir
    from toolkit.plan.layout import default_cache
    from toolkit.verify.upstream import rules, write

    folder = Path(args.dir) if args.dir else None
    if args.pr_body and not Path(args.pr_body).parent.is_dir():  # before --write changes data
        _unwritable(Path(args.pr_body), "no such folder")
    data = data_dir()
    def find() -> list[Fact]:
        return rules.run(data, folder=folder, cache=default_cache(), rules=rules.RULES)

    # --write: write, read again, until nothing more is written (a cascade settles in one run)
    done = write.settle(data, find) if args.write else write.Settled([], [], find())
    written = done.written
    facts = [*done.settled, *done.facts]
    settled = {id(f) for f in done.settled}
    left = [f for f in done.facts if f.fails]
    if args.pr_body:
        _write_body(Path(args.pr_body), facts, settled, written,
                    args.dir or "the upstream repositories (partial clones)")
    if args.json:
        print(json.dumps({"facts": [f.as_json() | {"written": id(f) in settled} for f in facts],
                          "written": written, "drift": len(left)}, indent=2))
    else:
        _print_facts(facts, settled, written, data, len(left), args.dir)
    return 1 if left else 0


def _print_facts(facts: list[Fact], settled: set[int], written: list[str], data: Path, left: int,
                 folder: str | None) -> None:
    """Each fact on a line (``written`` first where --write wrote it), the files written, then
    on stderr how many facts still differ from upstream and where upstream was read."""
    for f in facts:
        line = _safe(f.line())
        print(f"written {line}" if id(f) in settled else line)
    if written:
        print(f"wrote {', '.join(written)} in {data}")
    where = folder or os.environ.get("TOOLKIT_CACHE_DIR") or "the cache"
    print(f"{left} fact(s) differ from upstream ({where})" if left else f"no drift ({where})",
          file=sys.stderr)


def _write_body(path: Path, facts: list[Fact], settled: set[int], written: list[str],
                where: str) -> None:
    from toolkit.cli.pr_body import render
    from toolkit.core.files import write_atomic

    write_atomic(path, render(facts, settled, written, where), "--pr-body")


def _unwritable(path: Path, why: str) -> NoReturn:
    from toolkit.core.errors import UsageError
    from toolkit.core.text import quoted

    raise UsageError(f"--pr-body {quoted(path)}: {why}; valid: a file in an existing, "
                     "writable folder")
