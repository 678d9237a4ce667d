"""Your own project (``--source PATH`` naming neither apex nor fbgemm_gpu) as a build: its
name and version from its build backend (``toolkit.env.project``), the generic recipe
(``toolkit.plan.recipes.generic``), the demo's ROCm or a session pair's environment."""

from __future__ import annotations

import argparse

from toolkit.core.errors import UsageError
from toolkit.data.matrix import Build, Matrix, RocmRelease
from toolkit.plan.layout import Layout


def project_build(source: str, python: str, rocm: RocmRelease, torch: str,
                  layout: Layout) -> Build:
    """The project at ``source`` as a build (its metadata read by its own build backend; the
    hooks' output in ``<workdir>/build/source-metadata.log``)."""
    from toolkit.env.project import read_project
    from toolkit.plan.recipes.generic import generic_build

    project = read_project(source, layout.root / "build" / "source-metadata.log")
    return generic_build(project.package, project.name, project.version, project.path, python,
                         rocm, torch, project.requires)


def session_project(matrix: Matrix, python: str, rocm: str, args: argparse.Namespace,
                    layout: Layout) -> Build | None:
    """With ``--source`` and no ``--package`` of the matrix: the project at ``--source`` built
    in the pair's environment (its newest torch), when it is not one of the matrix's packages;
    None when it is (then the checkout replaces that package's sources) or without --source."""
    from toolkit.plan.recipes.generic import torch_of_pair

    if not args.source:
        return None
    named = [p for item in args.package for p in item.split(",") if p.strip()]
    if named and all(p in matrix.packages for p in named):
        return None
    from toolkit.core.errors import StepFailed

    pair = matrix.pair_builds(python, rocm)
    try:
        build = project_build(args.source, python, matrix.rocm[rocm], torch_of_pair(pair),
                              layout)
    except StepFailed as err:
        raise StepFailed(err.message, hint=f"a checkout of {' or '.join(sorted(matrix.packages))}"
                         " (whose setup.py needs torch) takes --package NAME") from None
    if _of_the_matrix(matrix, build):
        if named:
            raise UsageError(f"--source {args.source} is {build.package.dist}, a package of the "
                             f"matrix; give --package {build.package.name}")
        args.package = [build.package.name]
        return None
    _refuse_matrix_selection(matrix, build, named, args)
    return build


def _of_the_matrix(matrix: Matrix, build: Build) -> bool:
    """Is the project one of the matrix's packages (by name or normalised dist name)?"""
    known = {n for p in matrix.packages.values() for n in (p.name, _norm(p.dist))}
    return build.package.name in known or _norm(build.package.dist) in known


def _refuse_matrix_selection(matrix: Matrix, build: Build, named: list[str],
                             args: argparse.Namespace) -> None:
    """UsageError for --package names other than the project's, or --version (the project
    at --source has its own version)."""
    unknown = [p for p in named if p not in (build.package.name, build.package.dist)]
    if unknown:
        raise UsageError(f"--package {','.join(unknown)}: the project at {args.source} is "
                         f"{build.package.dist}; valid: {build.package.name} or "
                         f"{', '.join(sorted(matrix.packages))} (with their own checkouts)")
    if args.versions:
        raise UsageError("--version selects matrix builds; the project at --source has its own "
                         f"version ({build.version})")


def _norm(name: str) -> str:
    import re

    return re.sub(r"[-_.]+", "_", name).lower()

