"""invoke tasks: `invoke NAME` is `python -m toolkit NAME`, with the same options and help.

Each task is derived from the subcommand's own argparse definition
(``toolkit.cli.frontends.invoke_task``): an option added to the CLI is an invoke option too.
Repeatable options repeat (``--gfx gfx90a --gfx gfx942``); a positional the CLI takes several
of is one comma list (``invoke check dist/a.whl,dist/b.whl``).
"""

from __future__ import annotations

from invoke.collection import Collection

from toolkit.cli.frontends import invoke_task
from toolkit.cli.main import build_parser

TASKS = ("matrix", "plan", "check", "report", "smoke", "repro", "index", "variants", "upstream")

_parsers = build_parser().commands
ns = Collection(*(invoke_task(name, _parsers[name]) for name in TASKS))
globals().update(ns.tasks)  # tasks.smoke(...) etc., as plain module attributes too
