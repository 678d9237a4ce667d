"""Per-package knowledge, one small class each behind one interface."""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolkit.errors import UsageError

if TYPE_CHECKING:
    from toolkit.recipes.base import Recipe


def recipe_for(name: str) -> Recipe:
    from toolkit.recipes.apex import ApexRecipe
    from toolkit.recipes.fbgemm_gpu import FbgemmGpuRecipe
    from toolkit.recipes.sample import SampleRecipe

    recipes: dict[str, Recipe] = {"apex": ApexRecipe(), "fbgemm_gpu": FbgemmGpuRecipe(),
                                  "sample": SampleRecipe()}
    try:
        return recipes[name]
    except KeyError:
        raise UsageError(f"unknown recipe {name!r}; valid: {', '.join(sorted(recipes))}") from None
