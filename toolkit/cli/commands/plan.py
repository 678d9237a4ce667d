"""`python -m toolkit plan ID`: print a build's plan (nothing runs)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from toolkit.data.matrix import Matrix
    from toolkit.plan.model import Options


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("plan", help="print the plan of one build (runs nothing)")
    p.add_argument("build_id", metavar="ID", help="a build id, e.g. apex-1.8.0-cp312-rocm7.0")
    add_build_options(p)
    p.add_argument("--json", action="store_true", help="print the plan as JSON")
    p.set_defaults(func=run)


def path_value(value: str) -> str:
    """An argparse ``type`` for a path option: an empty value is refused (it would silently
    mean "not given": ``--source ''`` built the bundled sample)."""
    from toolkit.core.text import quoted, unsafe

    if value == "":
        raise argparse.ArgumentTypeError("an empty path; give a path, or leave the option out")
    if unsafe(value):  # a newline in it would forge lines wherever the path is shown
        raise argparse.ArgumentTypeError(f"{quoted(value)} holds a control character; give a "
                                         "folder whose path has none")
    return value


def add_build_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--gfx", action="append", default=[],
                   help="gfx ids or family names (comma list); default: the ROCm release's family")
    p.add_argument("--rocm-from", choices=None, default=None, help="ROCm SDK provider: pip|system")
    p.add_argument("--index-url", default=None, help="ROCm SDK package index")
    p.add_argument("--channel", default=None,
                   help="TheRock channel of the SDK and its torch: stable|prerelease|nightly|dev "
                        "(default: the release's, rocm.toml: stable once released)")
    p.add_argument("--find-links", action="append", default=[], help="extra find-links for the SDK")
    p.add_argument("--family", default=None, help="GPU family for a per-family SDK index")
    p.add_argument("--source", default=None, type=path_value,
                   help="build from this checkout, or this sdist (never modified)")
    p.add_argument("--allow-dirty", action="store_true",
                   help="build a --source checkout with uncommitted changes (else exit 12); "
                        "its wheel is named +...dirty and never replaces the clean one")
    p.add_argument("--naming", default="toolkit", help="toolkit|upstream wheel naming")
    p.add_argument("--no-smoke", action="store_true", help="skip the smoke step")
    p.add_argument("--workdir", default=None, type=path_value,
                   help="where dist/, artifacts/, build/ go")
    p.add_argument("--no-lock", action="store_true", help="ignore locks/<py>-rocm<rocm>.txt")
    p.add_argument("--allow-insecure-index", action="store_true",
                   help="allow a plain http:// index that is not on loopback")
    p.add_argument("--allow-rocm-mismatch", action="store_true",
                   help="accept a system ROCm whose version differs from the session's")
    p.add_argument("--rocm-sdk-test", action="store_true",
                   help="run `rocm-sdk test` after installing the pip SDK")
    p.add_argument("--rebuild", action="store_true",
                   help="build the wheel even when nothing it depends on changed")
    p.add_argument("--variants", action="store_true",
                   help="also build one wheel variant per gfx target (PEP 825 draft, "
                        "amd :: gfx_arch), checked and published beside the fat wheel")
    p.add_argument("--include-known-failures", action="store_true",
                   help="plan and run builds that toolkit/data/known_failures.toml says fail; a "
                        "failure at the expected step is then an expected failure (exit 0), a "
                        "success an error (exit 1: remove the entry)")
    from toolkit.plan.recipes import recipe_options

    for name, spec in recipe_options().items():  # each recipe's own options (--apex-ops)
        p.add_argument(f"--{name}", choices=spec.choices, default=None, help=spec.help)


def options_from(args: argparse.Namespace, *, sources: bool = True) -> tuple[Matrix, Options]:
    """The matrix and the options the command line gives (``python -m toolkit``, nox posargs
    and invoke all arrive here), resolved once (``toolkit.plan.request.resolve``);
    ``sources``: a --source checkout's uncommitted changes are refused or noted;
    provisioning reads none."""
    from toolkit.plan.layout import Layout
    from toolkit.plan.recipes import load_matrix
    from toolkit.plan.request import given_options, resolve

    matrix = load_matrix()
    if getattr(args, "source", None):  # an sdist: unpacked into the work folder, then a folder
        from toolkit.env.sdist import source_folder

        args.source = source_folder(args.source, Layout.default(args.workdir).root)
    return matrix, resolve(given_options(args), matrix, Layout.default(args.workdir),
                           sources=sources)


def run(args: argparse.Namespace) -> int:
    from toolkit.plan.layout import Layout
    from toolkit.plan.model import render
    from toolkit.plan.request import Request, prepare

    matrix, opts = options_from(args)
    build = matrix.build(args.build_id)
    p, _, _ = prepare(Request(matrix, (build,), opts, Layout.default(args.workdir)))
    from toolkit.cli.known import known_for_plan, plan_header, refuse

    failing = known_for_plan(p)
    if failing and not args.include_known_failures:
        raise refuse(build.id, failing)
    from toolkit.core.text import clean

    print(p.to_json() if args.json else clean("\n".join([*plan_header(p), render(p)])))
    return 0
