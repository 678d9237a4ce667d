"""The recipe registry's two refusals name what was given and why (toolkit.plan.recipes):
``register`` of a name already taken names that recipe; a ``TOOLKIT_RECIPES`` item that does
not import as ``module:Class`` names the item, the variable and Python's own reason
(``ModuleNotFoundError: No module named 'x'`` and ``AttributeError: module 'm' has no
attribute 'A'`` are CPython's words for a failed import and a missing attribute)."""

from __future__ import annotations

import pytest

from toolkit.core.errors import UsageError
from toolkit.plan import recipes
from toolkit.plan.recipes.generic import GenericRecipe


def test_a_recipe_name_taken_already_is_named_in_the_refusal() -> None:
    assert "generic" in recipes.REGISTRY
    with pytest.raises(UsageError) as err:
        recipes.register(GenericRecipe())
    assert err.value.message.startswith("recipe 'generic' is registered already"), err.value.message
    assert err.value.exit_code == 2
    assert isinstance(recipes.REGISTRY["generic"], GenericRecipe)  # the first one kept


def test_a_toolkit_recipes_module_that_does_not_import_is_named_with_pythons_reason() -> None:
    item = "no_such_recipe_module_xq:Thing"
    with pytest.raises(UsageError) as err:
        recipes.register_named(f" {item} ")  # items are stripped
    msg = err.value.message
    assert msg.startswith(f"TOOLKIT_RECIPES: {item!r} is not module:Class of a recipe ("), msg
    assert msg.endswith("(ModuleNotFoundError: No module named 'no_such_recipe_module_xq')"), msg


def test_a_toolkit_recipes_class_the_module_lacks_is_named_with_pythons_reason() -> None:
    item = "tests.fixtures.third_recipe:NoSuchRecipe"
    with pytest.raises(UsageError) as err:
        recipes.register_named(f"toolkit.plan.recipes.generic:GenericRecipe,{item}")
    msg = err.value.message
    assert msg.startswith(f"TOOLKIT_RECIPES: {item!r} is not module:Class"), msg
    assert msg.endswith(": module 'tests.fixtures.third_recipe' has no attribute "
                        "'NoSuchRecipe')"), msg
    assert "(AttributeError: module" in msg, msg
