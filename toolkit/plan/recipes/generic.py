"""Any setuptools/pyproject project given with ``--source PATH`` that is neither apex nor
fbgemm_gpu: ``python -m build --wheel --no-isolation`` in the build's environment (so a torch
extension builds against the environment's ROCm torch), after installing what the project's
build backend asked for (``toolkit.env.project``; torch left out: the environment provides
it, or the project has none).

The distribution name and version are the project's own metadata; the wheel is named
``<name>-<version>+rocm<r>git<sha8>`` (a source that is no git checkout: the first 8 hex
digits of its tree hash). The modules smoke imports are the top-level packages and modules
the installed wheel lists in its RECORD.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from toolkit.core.step_names import INSTALL_REQUIREMENTS
from toolkit.core.steps import Step
from toolkit.data.matrix import Build, Package, PackageVersion, RocmRelease
from toolkit.plan.model import Context, Options
from toolkit.plan.recipes.base import RecipeDefaults

# provided by the build's environment, never installed over it from an index
PROVIDED = frozenset({"torch"})


def _requirement_name(req: str) -> str:
    m = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", req)
    return re.sub(r"[-_.]+", "-", m.group(1)).lower() if m else ""


class GenericRecipe(RecipeDefaults):
    name = "generic"
    build_styles: tuple[str, ...] = ("setuptools",)  # outside the matrix: no data file names it
    needs_torch = False  # a project may use torch; the checks then resolve against it too

    def carries_gpu_code(self, build: Build, options: Options) -> bool:
        return build.rocm.sdk.provider != "none"

    def build_steps(self, ctx: Context) -> list[Step]:
        v = ctx.build.pkg_version
        requires = [r for r in v.build_requires if _requirement_name(r) not in PROVIDED]
        env = dict(ctx.base_env)
        return [
            Step(INSTALL_REQUIREMENTS,
                 f"install what {ctx.build.package.dist}'s build backend asks for "
                 f"({', '.join(requires) or 'nothing'}), and the build front-end",
                 ctx.uv_pip("build", *requires)),
            ctx.build_wheel(
                f"build {ctx.build.package.dist} {v.version} for " + ";".join(ctx.targets),
                (ctx.env_python, "-m", "build", "--wheel", "--no-isolation",
                 "--outdir", ctx.wheelhouse, ctx.source_dir),
                env=env, cwd=ctx.source_dir),
        ]

    pins_recorded_source = False  # the project folder given is the source

    def standalone(self, build_id: str, recorded: Mapping[str, Any] | None,
                   source: str | None = None, logs: Path | None = None) -> Build | None:
        """The recorded project outside the matrix, its metadata read again from ``source``
        (it must still be the recorded name and version)."""
        if recorded is None or recorded.get("recipe") != self.name:
            return None
        from toolkit.core.errors import UsageError
        from toolkit.env.project import read_project

        info = recorded["build"]
        if source is None or logs is None:
            raise UsageError("the manifest's project has no source here: give --source PATH")
        project = read_project(source, logs)
        if (project.name, project.version) != (recorded.get("dist"), info["version"]):
            raise UsageError(f"refusing: the project at {source} is {project.name} "
                             f"{project.version}; the manifest built {recorded.get('dist')} "
                             f"{info['version']}")
        return generic_build(project.package, project.name, project.version, project.path,
                             info["python"], _recorded_rocm(recorded), info.get("torch") or "",
                             project.requires)

    def expected_wheel(self, ctx: Context) -> tuple[str, str]:
        return ctx.build.package.dist, ctx.build.version

    def expected_modules(self, version: PackageVersion,
                         options: Options | None = None) -> tuple[str, ...]:
        return ()  # read from the installed wheel's RECORD by the smoke suite

    def required_symbols(self, version: PackageVersion) -> tuple[str, ...]:
        return ()


def generic_build(package: str, dist: str, version: str, source: str, python: str,
                  rocm: RocmRelease, torch: str = "",
                  requires: tuple[str, ...] = ()) -> Build:
    """A project outside the matrix as a build for one (Python, ROCm) pair."""
    pv = PackageVersion(package, version, "HEAD", torch, (rocm.version,), (python,),
                        "setuptools", build_requires=requires)
    return Build(Package(package, dist, source, "generic", (pv,)), pv, python, rocm)


def _recorded_rocm(recorded: Mapping[str, Any]) -> RocmRelease:
    """A recorded generic build's ROCm release: the matrix's (a session build, with torch),
    else the system install the demo used."""
    from toolkit.plan.recipes.sample import demo_rocm

    info = recorded["build"]
    if info.get("torch"):
        from toolkit.data.matrix import load_matrix

        return load_matrix().rocm[info["rocm"]]
    return demo_rocm((recorded["sdk"].get("root") or "/opt/rocm", info["rocm"])
                     if info["rocm"] != "cpu" else None)


def torch_of_pair(builds: list[Build]) -> str:
    """The torch a project outside the matrix builds against in a pair: the newest of the
    pair's builds (their environments are the pair's)."""
    from toolkit.core.versions import version_sort_key

    versions = sorted({b.pkg_version.torch for b in builds}, key=version_sort_key)
    return versions[-1] if versions else ""

