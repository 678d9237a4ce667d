"""`python -m toolkit report`: one table of nox sessions and JUnit test suites.

``--nox-report FILE`` (from ``nox --report FILE``), ``--junit FILE`` and ``--manifests PATH``
(a build's manifest or ``artifacts/``: a failed build's signature) may repeat. In GitHub
Actions the same summary is appended, as markdown, to ``$GITHUB_STEP_SUMMARY``.
"""

from __future__ import annotations

import argparse
import json

from toolkit.cli.commands.plan import path_value


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("report", help="summarise nox --report JSON and JUnit XML files")
    p.add_argument("--nox-report", action="append", default=[], type=path_value, metavar="FILE",
                   help="a `nox --report FILE` JSON file (repeatable)")
    p.add_argument("--junit", action="append", default=[], type=path_value, metavar="FILE",
                   help="a JUnit XML file, e.g. from `pytest --junit-xml` (repeatable)")
    p.add_argument("--manifests", action="append", default=[], type=path_value, metavar="PATH",
                   help="a build's manifest.json, or a folder of them (artifacts/): one row "
                        "per build, a failed one with its step, exit code and signature "
                        "(repeatable)")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--markdown", default=None, type=path_value, metavar="FILE",
                   help="also write the markdown summary to FILE")
    p.add_argument("--title", default="Sessions and tests", help="table and summary title")
    p.add_argument("--strict", action="store_true",
                   help="exit 1 when a session or test failed (default: 0, the summary only)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from toolkit.cli.console import StreamReporter, console
    from toolkit.core.errors import ToolkitError
    from toolkit.verify.report import append_step_summary, markdown, summarise, table, write_markdown

    # every file is read before anything is shown
    summary = summarise(args.nox_report, args.junit, args.manifests)
    text = markdown(summary, args.title)
    if args.markdown:
        write_markdown(args.markdown, text)  # asked for: an unwritable file is exit 2
    if args.json:
        print(json.dumps(summary.as_json(), indent=2))
    else:
        console().print(table(summary, args.title))
    try:
        append_step_summary(text)
    except ToolkitError as err:  # the summary is shown already; CI's extra copy is not the job
        StreamReporter().warning(str(err))
    return 1 if args.strict and not summary.ok else 0
