"""The bundled sample extension: a HIP kernel and a Python module.

Its sources are package data (``toolkit/examples/hip_extension``).

Built with hipcc for ``PYTORCH_ROCM_ARCH`` when a ROCm compiler exists, else its CPU variant
(said plainly). It needs no torch, so the demo runs on a machine with nothing but a compiler.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from toolkit.core.step_names import INSTALL_REQUIREMENTS
from toolkit.core.steps import Step
from toolkit.data.matrix import Build, Package, PackageVersion, RocmRelease, SdkSource
from toolkit.plan.model import Context, Options
from toolkit.plan.recipes.base import RecipeDefaults

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "hip_extension"  # package data
DEMO_TARGETS = ("gfx90a", "gfx908")
VERSION = "0.1.0"


class SampleRecipe(RecipeDefaults):
    name = "sample"
    needs_torch = False
    build_styles: tuple[str, ...] = ("setuptools",)
    shown_env: tuple[str, ...] = ("HIP_SAMPLE_",)

    def carries_gpu_code(self, build: Build, options: Options) -> bool:
        return build.rocm.sdk.provider != "none"

    def build_steps(self, ctx: Context) -> list[Step]:
        env = dict(ctx.base_env)
        if ctx.build.rocm.sdk.provider == "none":
            env["HIP_SAMPLE_VARIANT"] = "cpu"
        return [
            Step(INSTALL_REQUIREMENTS, "install the build front-end",
                 ctx.uv_pip("build", "wheel", "setuptools>=61")),
            ctx.build_wheel(
                ("build hip_sample for " + ";".join(ctx.targets))
                if self.carries_gpu_code(ctx.build, ctx.options)
                else "build hip_sample's CPU variant (no GPU code)",
                (ctx.env_python, "-m", "build", "--wheel", "--no-isolation",
                 "--outdir", ctx.wheelhouse, ctx.source_dir),
                env=env, cwd=ctx.source_dir),
        ]

    def expected_wheel(self, ctx: Context) -> tuple[str, str]:
        return ctx.build.package.dist, VERSION

    def expected_modules(self, version: PackageVersion,
                         options: Options | None = None) -> tuple[str, ...]:
        return ("hip_sample", "hip_sample._native")

    pins_recorded_source = False  # the toolkit's own example
    bundled_source: Path | None = EXAMPLE

    def standalone(self, build_id: str, recorded: Mapping[str, Any] | None,
                   source: str | None = None, logs: Path | None = None) -> Build | None:
        """``hip_sample-0.1.0-cp312-rocm5.2``: the demo's build, for the host's ROCm (or the
        recorded one of its manifest); ``-cpu``: the CPU variant."""
        m = re.fullmatch(r"hip_sample-[^-]+-cp([0-9])([0-9]+)(t?)-(.+)", build_id)
        if m is None:
            return None
        python = f"{m.group(1)}.{m.group(2)}{m.group(3)}"
        if m.group(4) == "cpu":
            hip = None
        elif recorded is not None:
            root = (recorded.get("sdk") or {}).get("root") or "/opt/rocm"
            hip = (str(root), str(recorded["build"]["rocm"]))
        else:
            hip = detect_hip()
        build = demo_build(python, hip)
        return build if build.id == build_id else None


def detect_hip() -> tuple[str, str] | None:
    """(root, major.minor) of the system's ROCm/HIP install (see toolkit.env.rocm), or None."""
    from toolkit.core.errors import EnvironmentProblem
    from toolkit.env.rocm import find_system, major_minor

    try:
        found = find_system()
    except EnvironmentProblem:
        return None
    return found.root, major_minor(found.version)


def demo_rocm(hip: tuple[str, str] | None) -> RocmRelease:
    """The ROCm the demo builds with: the host's system install (root, major.minor), or none
    (the CPU variant)."""
    if hip:
        _root, version = hip
        return RocmRelease(version, version, "gfx90X-dcgpu",
                           SdkSource("system", version=version), MappingProxyType({}))
    return RocmRelease("cpu", "", "gfx90X-dcgpu", SdkSource("none"), MappingProxyType({}))


def demo_build(python: str, hip: tuple[str, str] | None) -> Build:
    """The sample as a build: for the host's Python and whatever ROCm the host has."""
    rocm = demo_rocm(hip)
    pv = PackageVersion("hip_sample", VERSION, "HEAD", "", (rocm.version,), (python,), "setuptools")
    package = Package("hip_sample", "hip-sample", str(EXAMPLE), "sample", (pv,))
    return Build(package, pv, python, rocm)
