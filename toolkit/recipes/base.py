"""The recipe interface."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from toolkit.matrix import PackageVersion
    from toolkit.plan import Context, Step


class Recipe(Protocol):
    name: str

    def build_steps(self, ctx: Context) -> list[Step]:
        """Steps from sources to a wheel in ``ctx.wheelhouse`` (after get-sources)."""
        ...

    def expected_modules(self, version: PackageVersion) -> tuple[str, ...]:
        """Modules the installed wheel must provide."""
        ...

    def required_symbols(self, version: PackageVersion) -> tuple[str, ...]:
        """Demangled symbol prefixes some library of the wheel must define."""
        ...
