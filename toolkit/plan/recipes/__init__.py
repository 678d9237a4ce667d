"""The one registry of recipes: per-package knowledge, one module each behind one interface
(``toolkit.plan.recipes.base.Recipe``).

A new version of a known package is data only (its ``<package>.toml``). A new package is one
recipe module plus its entry in ``REGISTRY`` below, and one data file. Everything else asks
the registry: the data's closed sets (recipe names and build styles, checked when the matrix
is loaded through ``load_matrix`` here), the recipes' own options (the CLI makes a flag of
each), the variables `invoke matrix --explain` shows, builds outside the matrix.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from toolkit.core.errors import UsageError, suggestion
from toolkit.data import matrix as data
from toolkit.data.matrix import Build, Matrix
from toolkit.data.specs import RecipeData
from toolkit.plan.recipes.apex import ApexRecipe
from toolkit.plan.recipes.base import Recipe, RecipeOption
from toolkit.plan.recipes.fbgemm_gpu import FbgemmGpuRecipe
from toolkit.plan.recipes.generic import GenericRecipe
from toolkit.plan.recipes.sample import SampleRecipe

_RECIPES: dict[str, Recipe] = {
    r.name: r for r in (ApexRecipe(), FbgemmGpuRecipe(), SampleRecipe(), GenericRecipe())
}
REGISTRY: Mapping[str, Recipe] = MappingProxyType(_RECIPES)  # read-only, live: sees register()


def register(recipe: Recipe) -> None:
    """Add a recipe kept outside this package (a test's fixture recipe); a name taken is a
    ``UsageError``. Matrices load again with it (``load_matrix`` caches per set of recipes)."""
    if recipe.name in _RECIPES:
        raise UsageError(f"recipe {recipe.name!r} is registered already")
    _RECIPES[recipe.name] = recipe


def register_named(spec: str) -> None:
    """Register the recipes ``spec`` names (``module:Class`` items, comma-separated: what
    ``TOOLKIT_RECIPES`` holds, read at import, so child processes see them too); one already
    registered is left as it is. A name that does not import is a ``UsageError``."""
    import importlib

    for item in filter(None, (part.strip() for part in spec.split(","))):
        module, _, attr = item.partition(":")
        try:
            recipe = getattr(importlib.import_module(module), attr)()
        except (ImportError, AttributeError, TypeError, ValueError) as exc:
            raise UsageError(f"TOOLKIT_RECIPES: {item!r} is not module:Class of a recipe "
                             f"({type(exc).__name__}: {exc})") from None
        if recipe.name not in _RECIPES:
            register(recipe)


def _register_from_env() -> UsageError | None:
    """``TOOLKIT_RECIPES`` at import; what is wrong with it is raised by the first
    ``load_matrix`` or ``recipe_for`` (inside a command: one line, exit 2, no traceback)."""
    try:
        register_named(os.environ.get("TOOLKIT_RECIPES", ""))
    except UsageError as exc:
        return exc
    return None


_NAMED_ERROR = _register_from_env()


def recipe_for(name: str) -> Recipe:
    if _NAMED_ERROR is not None:
        raise _NAMED_ERROR
    try:
        return REGISTRY[name]
    except KeyError:
        raise UsageError(f"unknown recipe {name!r}; valid: {', '.join(sorted(REGISTRY))}",
                         nearest=suggestion(name, REGISTRY)) from None


def build_styles() -> dict[str, tuple[str, ...]]:
    """recipe -> the build styles its data may name (the closed sets of the package files)."""
    return {name: r.build_styles for name, r in REGISTRY.items()}


def recipe_data() -> dict[str, RecipeData]:
    """recipe -> what its package files may say: build styles and the version keys it adds."""
    return {name: RecipeData(r.build_styles, r.version_data) for name, r in REGISTRY.items()}


def load_matrix(path: str | os.PathLike[str] | None = None) -> Matrix:
    """The validated matrix, its package files checked against the registry's recipes."""
    if _NAMED_ERROR is not None:
        raise _NAMED_ERROR
    return data.load_matrix(path, recipes=recipe_data())


def recipe_options() -> dict[str, RecipeOption]:
    """Every recipe's own options (``--apex-ops``), by name; a name two recipes share must
    mean the same."""
    out: dict[str, RecipeOption] = {}
    for r in REGISTRY.values():
        for name, spec in r.options.items():
            if out.setdefault(name, spec) != spec:
                raise UsageError(f"recipe option {name!r} is declared twice, differently")
    return out


def standalone_build(build_id: str, recorded: Mapping[str, Any] | None = None,
                     source: str | None = None, logs: Path | None = None) -> Build | None:
    """A build outside the matrix that ``build_id`` names (the bundled sample, or the
    recorded project outside the matrix read again from ``source``), else None."""
    for r in REGISTRY.values():
        build = r.standalone(build_id, recorded, source, logs)
        if build is not None:
            return build
    return None
