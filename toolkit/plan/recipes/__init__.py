"""Per-package knowledge, one small class each behind one interface."""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolkit.core.errors import UsageError

if TYPE_CHECKING:
    from toolkit.plan.recipes.base import Recipe


def recipe_for(name: str) -> Recipe:
    from toolkit.plan.recipes.apex import ApexRecipe
    from toolkit.plan.recipes.fbgemm_gpu import FbgemmGpuRecipe
    from toolkit.plan.recipes.generic import GenericRecipe
    from toolkit.plan.recipes.sample import SampleRecipe

    recipes: dict[str, Recipe] = {"apex": ApexRecipe(), "fbgemm_gpu": FbgemmGpuRecipe(),
                                  "sample": SampleRecipe(), "generic": GenericRecipe()}
    try:
        return recipes[name]
    except KeyError:
        raise UsageError(f"unknown recipe {name!r}; valid: {', '.join(sorted(recipes))}") from None
