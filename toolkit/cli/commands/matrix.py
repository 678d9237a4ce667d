"""`python -m toolkit matrix`: the matrix as a table (seed-table shape), JSON, or the
GitHub Actions matrix (``--format github --trigger EVENT [--families F,...]``)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence

from toolkit.core.versions import version_sort_key
from toolkit.data.matrix import Build, load_matrix, python_sort_key

FORMATS = ("table", "json", "github")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("matrix", help="show the build matrix")
    add_filters(p)
    p.add_argument("--format", default="table", help=f"one of: {', '.join(FORMATS)}")
    p.add_argument("--trigger", default=None,
                   help="with --format github: the GitHub event (pull_request, push, schedule, "
                        "workflow_dispatch; rules in toolkit/data/ci.toml); default: "
                        "workflow_dispatch")
    p.add_argument("--families", action="append", default=[],
                   help="with --format github: GPU families to build and test for (comma list); "
                        "default: each ROCm release's default family")
    p.set_defaults(func=run)


def add_filters(p: argparse.ArgumentParser) -> None:
    p.add_argument("--package", action="append", default=[], help="package name(s), comma list")
    p.add_argument("--rocm", action="append", default=[], help="ROCm version(s)")
    p.add_argument("--python", action="append", default=[], help="Python version(s), e.g. 3.12")


def select(args: argparse.Namespace) -> list[Build]:
    return load_matrix().select(packages=args.package, rocm=args.rocm, python=args.python)


def python_range(pythons: Sequence[str]) -> str:
    """``cp39-cp313 + cp313t`` (the seed table's notation)."""
    from toolkit.data.matrix import python_tag

    plain = sorted((p for p in pythons if not p.endswith("t")), key=python_sort_key)
    threaded = sorted((p for p in pythons if p.endswith("t")), key=python_sort_key)
    parts = []
    if plain:
        first, last = python_tag(plain[0]), python_tag(plain[-1])
        parts.append(first if first == last else f"{first}-{last}")
    parts.extend(python_tag(p) for p in threaded)
    return " + ".join(parts)


def table_rows(builds: Sequence[Build]) -> list[tuple[str, str, str, str, str, str]]:
    """Rows (package, version, torch, rocm, python tags, wheels) with per-version totals."""
    rows: list[tuple[str, str, str, str, str, str]] = []
    groups: dict[tuple[str, str], list[Build]] = {}
    for b in builds:
        groups.setdefault((b.package.name, b.version), []).append(b)
    for (pkg, ver), items in groups.items():
        by_rocm: dict[str, list[Build]] = {}
        for b in items:
            by_rocm.setdefault(b.rocm.version, []).append(b)
        for rocm in sorted(by_rocm, key=version_sort_key):
            bs = by_rocm[rocm]
            rows.append((pkg, ver, bs[0].pkg_version.torch, rocm,
                         python_range([b.python for b in bs]), str(len(bs))))
        rows.append((pkg, ver, "", "", "total", str(len(items))))
    rows.append(("", "", "", "", "grand total", str(len(builds))))
    return rows


def run(args: argparse.Namespace) -> int:
    from toolkit.core.errors import UsageError

    if args.format not in FORMATS:
        raise UsageError(f"unknown format {args.format!r}; valid: {', '.join(FORMATS)}")
    trigger = getattr(args, "trigger", None)
    families = getattr(args, "families", [])
    if args.format != "github" and (trigger or any(f.strip() for f in families)):
        raise UsageError("--trigger and --families apply to --format github only")
    builds = select(args)
    if args.format == "github":
        from toolkit.data.ci import github_json, github_matrix, load_ci

        matrix = load_matrix()
        entries = github_matrix(matrix, load_ci(matrix), trigger or "workflow_dispatch",
                                families=families, builds=builds)
        print(json.dumps(github_json(entries)))
        return 0
    if args.format == "json":
        print(json.dumps([b.as_json() for b in builds], indent=1))
        return 0
    from rich.table import Table

    from toolkit.cli.console import console

    table = Table(title="Build matrix")
    for col in ("Package", "Version", "Torch", "ROCm", "Python", "Wheels"):
        table.add_column(col, justify="right" if col == "Wheels" else "left")
    for row in table_rows(builds):
        style = "bold" if row[4] in {"total", "grand total"} else None
        table.add_row(*row, style=style, end_section=row[4] == "total")
    console().print(table)
    return 0
