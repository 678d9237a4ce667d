"""The recipe interface."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from toolkit.core.steps import Step
    from toolkit.data.matrix import Build, PackageVersion
    from toolkit.plan.model import Context, Options


class Recipe(Protocol):
    name: str
    needs_torch: bool  # False: no torch in the env, no --with torch/lib for the checks

    def carries_gpu_code(self, build: Build, options: Options) -> bool:
        """Whether the wheel must carry code for the requested gfx targets."""
        ...

    def build_steps(self, ctx: Context) -> list[Step]:
        """Steps from sources to a wheel in ``ctx.wheelhouse`` (after get-sources)."""
        ...

    def expected_wheel(self, ctx: Context) -> tuple[str, str]:
        """(distribution, version) of the wheel ``build_steps`` make, before name-wheel:
        what the package's own setup.py produces for the planned argv and environment
        (``{SHA8}`` may stand for the source commit)."""
        ...

    def expected_modules(self, version: PackageVersion,
                         options: Options | None = None) -> tuple[str, ...]:
        """Modules the installed wheel must provide (``options``: how it was built)."""
        ...

    def required_symbols(self, version: PackageVersion) -> tuple[str, ...]:
        """Demangled symbol prefixes some library of the wheel must define."""
        ...
