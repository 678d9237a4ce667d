"""A manifest that breaks the schema is refused in one line naming the field, what was found
and what is valid (``toolkit.run.manifest_schema.validate``; README: a malformed or tampered
manifest is exit 2). Every expected line is written here by hand from the schema's rules."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from tests.unit.test_manifest_build_identity import _base
from toolkit.core.errors import UsageError
from toolkit.run.manifest_schema import type_error, validate


def _refused(change: Callable[[dict[str, Any]], object]) -> str:
    data = copy.deepcopy(_base())
    change(data)
    with pytest.raises(UsageError) as caught:
        validate(data, "m.json")
    assert caught.value.exit_code == 2
    return str(caught.value)


def _set(key: str, value: object) -> Callable[[dict[str, Any]], object]:
    def change(data: dict[str, Any]) -> None:
        *parents, last = key.split(".")
        node = data
        for p in parents:
            node = node[p]
        node[last] = value
    return change


FAILURE = {"step": "build-wheel", "exit_code": 5, "signature": ["e"], "log": None}


@pytest.mark.parametrize("key, value, said", [
    # one JSON type
    ("toolkit_version", 5, "toolkit_version: 5 is an integer, expected a string"),
    ("recipe", [], "recipe: [] is an array, expected a string"),
    ("steps", {}, "steps: {} is an object, expected an array"),
    ("host.mem_available_gib", "3", "host.mem_available_gib: '3' is a string, expected a number "
                                    "or null"),
    # a list of types
    ("build.torch", 5, "build.torch: 5 is an integer, expected a string or null"),
    ("host.cores", "x", "host.cores: 'x' is a string, expected an integer or null"),
    ("host.cores", True, "host.cores: true is a boolean, expected an integer or null"),
    # null or an object (anyOf)
    ("options", 5, "options: 5 is an integer, expected null or an object"),
    ("failure", [], "failure: [] is an array, expected null or an object"),
    # a pattern, an enum, bounds
    ("targets", ["sm_80"], "targets.0: 'sm_80' does not match ^gfx[0-9a-f]+(:.*)?$"),
    ("wheel_sha256", "ab", "wheel_sha256: 'ab' does not match ^[0-9a-f]{64}$"),
    ("outcome", "done", "outcome: 'done' is not one of \"running\", \"ok\", \"failed\", "
                        "\"interrupted\""),
    ("failure", {**FAILURE, "exit_code": 0}, "failure.exit_code: 0 is beyond the minimum 1"),
    ("failure", {**FAILURE, "exit_code": 256},
     "failure.exit_code: 256 is beyond the maximum 255"),
    ("failure", {**FAILURE, "signature": ["s"] * 21},
     "failure.signature: " + ", ".join(['["s"'] + ['"s"'] * 19 + ['"s"]'])
     + " is beyond the maxItems 20"),
])
def test_a_wrong_field_is_one_line_naming_it_and_what_is_valid(
        key: str, value: object, said: str) -> None:
    assert _refused(_set(key, value)) == f"m.json: manifest field {said}"


def test_a_missing_required_field_is_named() -> None:
    assert _refused(lambda d: d.pop("recipe")) == (
        "m.json: manifest field (top level): 'recipe' is a required property")


def test_a_document_that_is_no_object_is_refused_at_the_top_level() -> None:
    with pytest.raises(UsageError) as caught:
        validate([], "m.json")
    assert str(caught.value) == (
        "m.json: manifest field (top level): [] is an array, expected an object")


@pytest.mark.parametrize("value, said", [
    ("5", "'5' is a string"), (True, "true is a boolean"), (None, "null is null"),
    ([5], "[5] is an array"), ({"v": 5}, '{"v": 5} is an object'), (5.5, "5.5 is a number"),
])
def test_a_schema_version_of_another_type_asks_for_the_integer(value: object,
                                                               said: str) -> None:
    assert _refused(_set("schema_version", value)) == (
        f"m.json: manifest schema_version {said}, expected the integer 5")


@pytest.mark.parametrize("version", [3, 6])
def test_an_unread_schema_version_names_the_ones_read(version: int) -> None:
    assert _refused(_set("schema_version", version)) == (
        f"m.json: manifest schema_version {version}; this toolkit reads 4 and 5")


def test_schema_5_without_failure_is_refused_and_schema_4_without_it_read() -> None:
    assert _refused(lambda d: d.pop("failure")) == (
        "m.json: manifest field failure: missing (a schema 5 manifest records it, null "
        "unless the build failed)")
    data = copy.deepcopy(_base())
    del data["failure"]
    data["schema_version"] = 4
    validate(data, "m.json")  # schema 4 had no failure


def test_a_value_of_no_json_type_is_named_a_value() -> None:
    assert type_error((1, 2)) == "[1, 2] is a value"
    assert type_error(2.5) == "2.5 is a number"
