"""The recipe interface."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from toolkit.core.steps import Step
    from toolkit.data.matrix import Build, PackageVersion
    from toolkit.plan.model import Context


class Recipe(Protocol):
    name: str
    needs_torch: bool  # False: no torch in the env, no --with torch/lib for the checks

    def carries_gpu_code(self, build: Build) -> bool:
        """Whether the wheel must carry code for the requested gfx targets."""
        ...

    def build_steps(self, ctx: Context) -> list[Step]:
        """Steps from sources to a wheel in ``ctx.wheelhouse`` (after get-sources)."""
        ...

    def expected_modules(self, version: PackageVersion) -> tuple[str, ...]:
        """Modules the installed wheel must provide."""
        ...

    def required_symbols(self, version: PackageVersion) -> tuple[str, ...]:
        """Demangled symbol prefixes some library of the wheel must define."""
        ...
