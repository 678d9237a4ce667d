"""`python -m toolkit matrix`: the matrix as a table (seed-table shape), JSON, or the
GitHub Actions matrix (``--format github --trigger EVENT [--families F,...]
[--include-known-failures] [--changed-since SOURCE]``; ``--format github-shards``: the same
entries cut into a list of matrices of at most 256, GitHub's limit per matrix); ``--explain
ID``: one build's facts, each with the upstream evidence it was read from, or one known
failure (``toolkit.cli.commands.known``)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

from toolkit.cli.commands.plan import path_value
from toolkit.core.steps import ExpectWheel
from toolkit.core.versions import version_sort_key
from toolkit.data.matrix import Build, Matrix, python_sort_key
from toolkit.plan.recipes import load_matrix, recipe_for

if TYPE_CHECKING:
    from toolkit.data.ci import CiEntry
    from toolkit.data.releases import SdkSource

FORMATS = ("table", "json", "github", "github-shards")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("matrix", help="show the build matrix")
    add_filters(p)
    p.add_argument("--format", default="table", help=f"one of: {', '.join(FORMATS)}")
    p.add_argument("--ids", action="store_true",
                   help="print the selected builds' ids, one per line, in matrix order (the "
                        "--package, --rocm and --python filters apply)")
    p.add_argument("--trigger", default=None,
                   help="with --format github: the GitHub event (pull_request, push, schedule, "
                        "workflow_dispatch; rules in toolkit/data/ci.toml); default: "
                        "workflow_dispatch")
    p.add_argument("--families", action="append", default=[],
                   help="with --format github: GPU families to build and test for (comma list); "
                        "default: each ROCm release's default family")
    p.add_argument("--explain", default=None, metavar="ID",
                   help="print one build's facts (sources, flags, targets) with their evidence, "
                        "or one known failure (an id of toolkit/data/known_failures.toml)")
    p.add_argument("--include-known-failures", action="store_true",
                   help="with --format github and --trigger workflow_dispatch or schedule: keep "
                        "the builds known to fail (to see whether upstream fixed them)")
    p.add_argument("--changed-since", default=None, type=path_value, metavar="SOURCE",
                   help="with --format github: only the builds whose identity digest no "
                        "published build has. SOURCE: a folder of manifests (manifest.json, "
                        "*.manifest.json: the artifacts/<id>/ folders CI uploads), or an index "
                        "URL (PEP 503 simple index or find-links page) on which each wheel's "
                        "manifest sits beside it as <wheel file name>.manifest.json. Nothing "
                        "changed: an empty matrix ({\"include\": []}) and a note")
    p.add_argument("--allow-insecure-index", action="store_true",
                   help="with --changed-since: allow a plain http:// index that is not on "
                        "loopback")
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


def _pythons_cell(builds: Sequence[Build]) -> str:
    """The Python tags of ``builds``; an abi3 wheel's tag with the Pythons it serves."""
    served = python_range([py for b in builds for py in b.pythons])
    abi3 = builds[0].pkg_version.abi3
    return f"{abi3}-abi3 ({served})" if abi3 else served


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
            rows.append((pkg, ver, bs[0].pkg_version.torch, rocm, _pythons_cell(bs),
                         str(len(bs))))
        rows.append((pkg, ver, "", "", "total", str(len(items))))
    rows.append(("", "", "", "", "grand total", str(len(builds))))
    return rows


def explain(build_id: str) -> list[tuple[str, str, str]]:
    """(fact, value, evidence or note) rows for one build, in the order a build uses them."""
    m = load_matrix()
    b = m.build(build_id)
    pv, sdk, torch = b.pkg_version, b.rocm.sdk, b.torch_source
    rows = [("package", f"{b.package.name} {pv.version} ({b.package.dist}) from {b.package.repo} "
             f"at {pv.ref}, build style {pv.build_style}", f"evidence: {pv.evidence}")]
    rows.append(("rocm sdk", _sdk_where(sdk), f"evidence: {sdk.evidence}"))
    if sdk.note:
        rows.append(("", "", f"note: {sdk.note}"))
    # TheRock's torch comes from the SDK's channel (the default one without --channel)
    source = torch.index_url or torch.find_links or (
        f"the SDK's {sdk.default_channel} channel {sdk.index_url}" if torch.kind == "therock" else "")
    rows.append(("torch", f"{torch.spec} ({torch.kind} build) from {source}",
                 f"evidence: {torch.evidence}"))
    if torch.note:
        rows.append(("", "", f"note: {torch.note}"))
    if pv.abi3:
        rows.append(("wheel", f"one {b.wheel_tag} wheel (py_limited_api) for Python "
                     f"{', '.join(b.pythons)}, built by Python {b.python}",
                     f"evidence: {pv.evidence}"))
    rows += _target_rows(m, b)
    rows.extend(_build_rows(m, b, pv.evidence))
    if pv.submodules:
        rows.append(("submodules", ", ".join(f"{p} ({u})" for p, u in pv.submodules.items()),
                     f"evidence: {pv.evidence}"))
    rows.extend((key, what, f"evidence: {pv.evidence}")
                for key, what in recipe_for(b.package.recipe).data_rows(pv))
    return rows


def _sdk_where(sdk: SdkSource) -> str:
    """Where the build's ROCm comes from: TheRock's pip SDK and its channels, or a system install."""
    channels = ", ".join(f"{name} {url}" for name, url in sdk.channels.items())
    if sdk.provider == "pip":
        return (f"TheRock pip SDK {sdk.spec} from its {sdk.default_channel} channel "
                f"{sdk.index_url} ({sdk.layout}; channels: {channels})")
    return f"system install of ROCm {sdk.version}" + (
        f" (pip SDK with --channel: {channels})" if channels else " (no pip SDK)")


def _target_rows(m: Matrix, b: Build) -> list[tuple[str, str, str]]:
    """The GPU targets built without --gfx and why; the families the release's index serves."""
    from toolkit.plan.model import Options
    from toolkit.plan.provision import default_targets, served_families

    pv, rel = b.pkg_version, b.rocm
    targets = default_targets(m, b, Options())
    if pv.targets_for(rel.version):
        why = f"evidence: {pv.evidence}"
        what = f"{b.package.name} {pv.version}'s own defaults on ROCm {rel.version}"
    else:
        why = (f"evidence: {rel.families_evidence}" if rel.families
               else "the release's default family (gpus.toml)")
        what = f"ROCm {rel.version}'s default family {rel.default_family}"
    rows = [("targets", f"{', '.join(targets)} without --gfx ({what})", why)]
    if rel.families:
        fams = served_families(m, b)
        rows.append(("families", "served by ROCm " + rel.version + "'s index: "
                     + "; ".join(f"{f} ({' '.join(t)})" for f, t in fams.items()),
                     f"evidence: {rel.families_evidence}"))
    return rows


def _build_rows(m: Matrix, b: Build, evidence: str) -> list[tuple[str, str, str]]:
    """The build command's options and the variables the recipe sets, and the wheel's name."""
    from pathlib import Path

    from toolkit.env.host import HostFacts
    from toolkit.plan.layout import Layout
    from toolkit.plan.model import Options
    from toolkit.plan.planner import plan

    p = plan(m, b, Options(), HostFacts(), Layout(Path("/work"), Path("/cache")))
    step = p.step("build-wheel")
    opts = [a.split("=", 1)[1] for a in step.argv if a.startswith(("-C", "--config-setting"))]
    recipe = recipe_for(b.package.recipe)
    env = [f"{k}={v!r}" if v == "" else f"{k}={v}" for k, v in step.env.items()
           if recipe.shown_env and k.startswith(recipe.shown_env)]
    extra: list[tuple[str, str, str]] = [("", "", note) for note in recipe.notes(step.env)]
    expect = p.step("expect-wheel").action
    rows: list[tuple[str, str, str]] = [
        ("build", " ".join([*opts, *env, *(f"unset {u}" for u in step.unset)]) or "(defaults)",
         f"evidence: {evidence}"), *extra]
    if isinstance(expect, ExpectWheel):
        rows.append(("wheel", f"{expect.dist} {expect.version} from setup.py, then "
                     f"{p.step('name-wheel').description.removeprefix('name the wheel ')}",
                     f"evidence: {evidence}"))
    return rows


def run(args: argparse.Namespace) -> int:
    from toolkit.core.errors import UsageError, suggestion

    if getattr(args, "explain", None):
        return _print_explain(args)
    if args.format not in FORMATS:
        raise UsageError(f"unknown format {args.format!r}; valid: {', '.join(FORMATS)}",
                         nearest=suggestion(args.format, FORMATS))
    if args.ids:
        return print_ids(args)
    github = args.format.startswith("github")
    if not github and _github_options_given(args):
        raise UsageError("--trigger, --families, --include-known-failures and --changed-since "
                         "apply to --format github and github-shards only")
    builds = select(args)
    if github:
        return _print_github(args, builds)
    if args.format == "json":
        from toolkit.cli.known import build_json

        print(json.dumps([build_json(b) for b in builds], indent=1))
        return 0
    return _print_table(args, builds)


def _print_explain(args: argparse.Namespace) -> int:
    """``--explain ID``: each fact of one build with its evidence (alone: no other option)."""
    from toolkit.core.errors import UsageError

    if args.format != "table" or args.package or args.rocm or args.python or args.ids:
        raise UsageError("--explain ID takes no other option")
    from toolkit.cli.known import explain_known, known_rows

    rows = explain_known(args.explain) or explain(args.explain) + known_rows(args.explain)
    print(args.explain)
    for fact, value, why in rows:
        if fact:
            print(f"  {fact:<11} {value}")
        if why:
            print(f"  {'':<11}   {why}")
    return 0


def _github_options_given(args: argparse.Namespace) -> bool:
    """Was an option given that only the github formats take?"""
    return bool(args.trigger or any(f.strip() for f in args.families)
                or args.include_known_failures or args.changed_since is not None)


def _print_github(args: argparse.Namespace, builds: list[Build]) -> int:
    """The GitHub Actions matrix (``github``) or its shards (``github-shards``) as JSON."""
    from toolkit.data.ci import github_json, github_matrix, github_shards, load_ci

    matrix = load_matrix()
    entries = github_matrix(matrix, load_ci(matrix), getattr(args, "trigger", None) or "workflow_dispatch",
                            families=getattr(args, "families", []), builds=builds,
                            include_known_failures=bool(getattr(args, "include_known_failures", False)))
    since = getattr(args, "changed_since", None)
    if since is not None:
        entries = changed_entries(matrix, entries, since,
                                  bool(getattr(args, "allow_insecure_index", False)))
        if not entries:  # nothing to build: the workflow skips an empty include
            print(json.dumps({"include": []} if args.format == "github" else []))
            return 0
    doc = github_json(entries) if args.format == "github" else github_shards(entries)
    print(json.dumps(doc))
    return 0


def _print_table(args: argparse.Namespace, builds: list[Build]) -> int:
    """The rich table of builds with totals and known failures, then the notes."""
    from rich.table import Table

    from toolkit.cli.console import console
    from toolkit.cli.known import known_notes, row_failures

    table = Table(title="Build matrix")
    for col in ("Package", "Version", "Torch", "ROCm", "Python", "Wheels", "Known failure"):
        table.add_column(col, justify="right" if col == "Wheels" else "left")
    for row in table_rows(builds):
        style = "bold" if row[4] in {"total", "grand total"} else None
        table.add_row(*row, row_failures(builds, row), style=style, end_section=row[4] == "total")
    console().print(table)
    for line in [*source_notes(builds), *known_notes(builds), *waiting_notes(args)]:
        console().print(line, markup=False, highlight=False)
    return 0


def print_ids(args: argparse.Namespace) -> int:
    """``--ids``: one build id per line (cibuildwheel's --print-build-identifiers)."""
    from toolkit.core.errors import UsageError

    if args.format != "table" or getattr(args, "trigger", None) or getattr(args, "families", []) \
            or getattr(args, "include_known_failures", False) \
            or getattr(args, "changed_since", None) is not None:
        raise UsageError("--ids takes only --package, --rocm and --python")
    for b in select(args):
        print(b.id)
    return 0


def waiting_notes(args: argparse.Namespace) -> list[str]:
    """The selected packages' versions that have no build yet, and what each awaits."""
    from toolkit.data.waiting import waiting

    names = [v.strip() for item in args.package for v in item.split(",") if v.strip()]
    return [f"{pv.package} {pv.version}: no build yet: {pv.waiting}"
            for pv in waiting(load_matrix(), names)]


def changed_entries(matrix: Matrix, entries: list[CiEntry], source: str,
                    allow_insecure: bool) -> list[CiEntry]:
    """The entries whose identity no build published at ``source`` has; one note on stderr
    (stdout is the matrix) saying how many of how many, and what was left out."""
    import sys

    from toolkit.core.text import clean
    from toolkit.core.urls import mask
    from toolkit.verify.changed import changed
    from toolkit.verify.published import read_published

    published = read_published(source, allow_insecure=allow_insecure,
                               projects={n for e in entries
                                         for n in (e.build.package.dist, e.build.package.name)})
    out = changed(matrix, entries, published.digests)
    print(clean(f"changed since {mask(source)}: {len(out)} of {len(entries)} builds "
                f"({published.read} manifests read, {len(published.digests)} identities "
                f"published, {len(published.left_out)} left out)"), file=sys.stderr)
    for line in published.left_out[:20]:
        print(clean(f"  left out: {line}"), file=sys.stderr)
    return out


def source_notes(builds: Sequence[Build]) -> list[str]:
    """Why some ROCm releases need a system install and some torch comes from AMD's builds."""
    lines: list[str] = []
    for rocm in sorted({b.rocm.version for b in builds}, key=version_sort_key):
        rel = next(b.rocm for b in builds if b.rocm.version == rocm)
        sdk = ("system install" if rel.sdk.provider == "system"
               else f"TheRock pip SDK ({rel.sdk.layout} index)")
        lines.append(f"ROCm {rocm}: {sdk}" + (f": {rel.sdk.note}" if rel.sdk.note else ""))
        for tv in sorted({b.pkg_version.torch_minor for b in builds if b.rocm.version == rocm},
                         key=version_sort_key):
            src = rel.torch[tv]
            if src.note:
                lines.append(f"  torch {tv}: {src.kind} build: {src.note}")
    return lines
