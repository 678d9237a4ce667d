"""`python -m toolkit matrix`: the matrix as a table (seed-table shape) or JSON."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence

from toolkit.matrix import Build, load_matrix, python_sort_key, version_sort_key

FORMATS = ("table", "json")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("matrix", help="show the build matrix")
    add_filters(p)
    p.add_argument("--format", default="table", help=f"one of: {', '.join(FORMATS)}")
    p.set_defaults(func=run)


def add_filters(p: argparse.ArgumentParser) -> None:
    p.add_argument("--package", action="append", default=[], help="package name(s), comma list")
    p.add_argument("--rocm", action="append", default=[], help="ROCm version(s)")
    p.add_argument("--python", action="append", default=[], help="Python version(s), e.g. 3.12")


def select(args: argparse.Namespace) -> list[Build]:
    return load_matrix().select(packages=args.package, rocm=args.rocm, python=args.python)


def python_range(pythons: Sequence[str]) -> str:
    """``cp39-cp313 + cp313t`` (the seed table's notation)."""
    from toolkit.matrix import python_tag

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
    from toolkit.errors import UsageError

    if args.format not in FORMATS:
        raise UsageError(f"unknown format {args.format!r}; valid: {', '.join(FORMATS)}")
    builds = select(args)
    if args.format == "json":
        print(json.dumps([b.as_json() for b in builds], indent=1))
        return 0
    from rich.table import Table

    from toolkit.console import console

    table = Table(title="Build matrix")
    for col in ("Package", "Version", "Torch", "ROCm", "Python", "Wheels"):
        table.add_column(col, justify="right" if col == "Wheels" else "left")
    for row in table_rows(builds):
        style = "bold" if row[4] in {"total", "grand total"} else None
        table.add_row(*row, style=style, end_section=row[4] == "total")
    console().print(table)
    return 0
