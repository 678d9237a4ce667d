"""`python -m toolkit check`: inspect wheels (or folders of libraries) before shipping them."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

from toolkit.core.errors import DataError
from toolkit.core.gfx import TargetId, expand, parse_target, split_tokens, unknown_processors
from toolkit.inspect.checks import check_paths
from toolkit.inspect.report import Report


def register(subparsers: Any) -> None:
    p: argparse.ArgumentParser = subparsers.add_parser(
        "check",
        help="check wheels: manylinux policy, undefined/required symbols, GPU targets, hygiene",
        description=(
            "Check wheels or folders of .so files: symbol versions against manylinux policies, "
            "undefined symbols across the wheel, --with libraries and the system, required "
            "symbols, GPU code targets and packaging hygiene. Exit 0 ok, 1 check failed, "
            "2 bad input."
        ),
    )
    p.add_argument("paths", nargs="+", metavar="WHEEL_OR_DIR", help="wheels, folders or .so files")
    p.add_argument(
        "--gfx",
        action="append",
        default=[],
        metavar="TARGETS",
        help="gfx ids or family names (comma separated, repeatable) every GPU library must carry code for",
    )
    p.add_argument(
        "--policy",
        metavar="POLICY",
        help="require this manylinux policy (e.g. manylinux_2_28) for every input",
    )
    p.add_argument(
        "--with",
        dest="with_paths",
        action="append",
        default=[],
        metavar="PATH",
        help="more libraries to resolve against: a folder (torch/lib, ROCm lib/), a library or a wheel; "
        "repeatable",
    )
    p.add_argument(
        "--require-symbol",
        dest="required",
        action="append",
        default=[],
        metavar="SYM",
        help="a demangled name some library must define, e.g. 'fbgemm_gpu::jagged_2d_to_dense'; repeatable",
    )
    p.add_argument(
        "--allow-bundled",
        action="append",
        default=[],
        metavar="NAME",
        help="allow this torch/ROCm library inside the wheel (name or glob)",
    )
    p.add_argument("--jobs", type=int, default=None, help="worker processes (default: CPUs)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def expand_targets(tokens: Sequence[str], warnings: list[str] | None = None) -> list[TargetId]:
    """gfx ids and (when the matrix is available) family names -> target ids.

    Any well-formed gfx id is accepted; one that no family of ``gpus.toml`` lists adds a line
    to ``warnings``. Malformed ids and unknown family names are ``UsageError``s. When the
    matrix data cannot be loaded, only plain gfx ids are accepted (a family name is then a
    bad gfx id).
    """
    if not tokens:
        return []
    words = split_tokens(tokens)
    from toolkit.data.matrix import load_matrix

    try:
        matrix = load_matrix()
    except (DataError, OSError):
        return [parse_target(w) for w in words]
    known = matrix.known_targets
    ids = expand(words, matrix.family_targets, known, accept_unknown=True)
    if warnings is not None:
        warnings += [
            f"{p} belongs to no GPU family the toolkit knows (toolkit/data/gpus.toml); "
            "checked as given"
            for p in unknown_processors(ids, known)
        ]
    return [parse_target(t) for t in ids]


def run(args: argparse.Namespace) -> int:
    report = check_paths(
        args.paths,
        targets=expand_targets(args.gfx),
        policy=args.policy,
        with_paths=args.with_paths,
        required_symbols=args.required,
        allow_bundled=args.allow_bundled,
        jobs=args.jobs,
    )
    if args.json:
        json.dump(report.to_json(), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        show(report)
    return 0 if report.ok else 1


def show(report: Report) -> None:
    from rich.markup import escape
    from rich.table import Table

    from toolkit.cli.console import console

    out = console()
    for wheel in report.wheels:
        title = wheel.path if wheel.name is None else f"{wheel.name} {wheel.version}  ({wheel.path})"
        table = Table(title=escape(title), title_justify="left", show_lines=False)
        for col in ("library", "GLIBC", "GLIBCXX", "policy", "GPU targets", "problems"):
            table.add_column(col, overflow="fold")
        per_lib: dict[str, list[str]] = {}
        for f in wheel.findings:
            if f.library:
                per_lib.setdefault(f.library, []).append(f.severity)
        for lib in wheel.libraries:
            sev = per_lib.get(lib.path, [])
            errors, warnings = sev.count("error"), sev.count("warning")
            counts = (errors and f"{errors} error(s)", warnings and f"{warnings} warning(s)")
            probs = ", ".join(x for x in counts if x)
            table.add_row(
                escape(lib.path),
                lib.max_versions.get("GLIBC", "-"),
                lib.max_versions.get("GLIBCXX", "-"),
                lib.policy or "-",
                ", ".join(lib.gpu_targets) or "-",
                f"[red]{probs}[/red]" if errors else (probs or "[green]ok[/green]"),
            )
        if wheel.libraries:
            out.print(table)
        else:
            out.print(f"[bold]{escape(title)}[/bold]: no native code")
        for f in wheel.findings:
            style = {"error": "red", "warning": "yellow"}.get(f.severity, "dim")
            out.print(
                f"  [{style}]{f.severity}[/{style}] {escape(f'[{f.check}] {f.message}')}", highlight=False
            )
        status = "[green]ok[/green]" if wheel.ok else "[red]FAILED[/red]"
        out.print(f"  {status}  policy: {wheel.policy or '-'}\n")
