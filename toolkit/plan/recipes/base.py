"""The recipe interface: everything the toolkit knows about one package lives behind it.

A recipe says how a package's version is built (its steps, the wheel it makes, the modules
and symbols that wheel must have), which build styles its data may name, which options it
takes beyond the common ones (``--apex-ops``), which variables of its build the matrix
explanation shows, and which builds it makes outside the matrix (the bundled sample).
``RecipeDefaults`` holds the answers most recipes share.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, Protocol

from toolkit.core.errors import UsageError, suggestion
from toolkit.core.steps import Step
from toolkit.data.matrix import Build, PackageVersion
from toolkit.data.schema import Table
from toolkit.data.specs import NO_RECIPE_DATA
from toolkit.plan.model import Context, Options


@dataclass(frozen=True)
class RecipeOption:
    """An option of one recipe: ``--<name> CHOICE`` (the first choice is the default)."""

    choices: tuple[str, ...]
    help: str


class Recipe(Protocol):
    name: str
    needs_torch: bool  # False: no torch in the env, no --with torch/lib for the checks
    build_styles: tuple[str, ...]  # what a data file's build_style may say, in upstream order
    options: Mapping[str, RecipeOption]  # name -> its choices ("apex-ops": prebuilt, jit)
    shown_env: tuple[str, ...]  # prefixes of the build variables `invoke matrix --explain` shows
    # the keys it adds to a version of its data file (``PackageVersion.recipe_data``), all
    # optional: checked by this spec when the matrix loads
    version_data: Table

    def data_rows(self, version: PackageVersion) -> tuple[tuple[str, str], ...]:
        """(key, what it says) of its own data for ``version``, for `invoke matrix --explain`."""
        ...

    def smoke_expectations(self, version: str, modules: tuple[str, ...]) -> dict[str, Any]:
        """What the smoke suite checks of an installed wheel beyond its modules (a build of
        ``version`` expecting ``modules``), as JSON for the manifest's ``smoke`` facts:
        ``markers`` (the suite's optional test groups it runs: ``apex_jit``) and
        ``recorded_torch`` (where the installed package records the torch it was built for:
        ``{"module", "attribute", "key", "ignore"}``, in order)."""
        ...

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

    def notes(self, env: Mapping[str, str]) -> tuple[str, ...]:
        """Evidence lines for `invoke matrix --explain`, given the build-wheel environment."""
        ...

    def standalone(self, build_id: str, recorded: Mapping[str, Any] | None,
                   source: str | None = None, logs: Path | None = None) -> Build | None:
        """A build of this recipe outside the matrix that ``build_id`` names (the bundled
        sample, a project given by its source), else None; ``recorded``: its manifest when
        there is one; ``source``: the project's folder here; ``logs``: where reading the
        project's metadata may log."""
        ...

    pins_recorded_source: bool
    """On repro, the manifest's source commit pins the build's ref (False: the source is the
    toolkit's own sample or the project folder given)."""

    bundled_source: Path | None
    """The sources this toolkit ships for the recipe's builds (the sample's), which repro
    uses when no ``--source`` is given; None: the recorded or fetched sources."""


class RecipeDefaults:
    """What most recipes answer: no options, no symbols, no notes, no builds outside the matrix."""

    options: Mapping[str, RecipeOption] = MappingProxyType({})
    shown_env: tuple[str, ...] = ()
    version_data: Table = NO_RECIPE_DATA
    bundled_source: Path | None = None

    def data_rows(self, version: PackageVersion) -> tuple[tuple[str, str], ...]:
        return ()

    def smoke_expectations(self, version: str, modules: tuple[str, ...]) -> dict[str, Any]:
        return {}

    def required_symbols(self, version: PackageVersion) -> tuple[str, ...]:
        return ()

    def notes(self, env: Mapping[str, str]) -> tuple[str, ...]:
        return ()

    pins_recorded_source = True

    def standalone(self, build_id: str, recorded: Mapping[str, Any] | None,
                   source: str | None = None, logs: Path | None = None) -> Build | None:
        return None


def option(recipe: Recipe, options: Options, name: str) -> str:
    """The value of the recipe's option ``name`` in ``options.recipe_options``
    (``name=value``), else its default; a value outside its choices is a ``UsageError``."""
    spec = recipe.options[name]
    for item in options.recipe_options:
        key, _, value = item.partition("=")
        if key == name:
            if value not in spec.choices:
                raise UsageError(f"unknown {name} value {value!r}; valid: "
                                 f"{', '.join(spec.choices)}", nearest=suggestion(value, spec.choices))
            return value
    return spec.choices[0]
