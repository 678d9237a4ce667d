"""A manifest's build identity is validated field by field: a missing key, an empty string or
an id its fields do not make is a tampered manifest (README: "A manifest's ids, folders and
source path follow rules (the id its fields make ...); a violation is a tampered manifest,
exit 2"), in one line naming the field.

The ``build`` objects are written by hand here (the id is spelt out, never made by the code);
the rest of the manifest is a complete one (tests.fixtures.manifests) so that only the build
decides."""

from __future__ import annotations

import copy
import functools
from typing import Any

import pytest

from toolkit.core.errors import UsageError
from toolkit.run.manifest_schema import validate

BUILD = {"id": "apex-1.8.0-cp312-rocm7.0", "package": "apex", "version": "1.8.0",
         "python": "3.12", "rocm": "7.0", "torch": None}


@functools.cache
def _base() -> dict[str, Any]:
    from tests.fixtures.manifests import HOST, for_plan
    from toolkit.data.matrix import load_matrix
    from toolkit.env.host import HostFacts
    from toolkit.plan.model import Options
    from toolkit.plan.planner import plan

    m = load_matrix()
    p = plan(m, m.build(BUILD["id"]), Options(gfx=("gfx942",)), HostFacts(uv="/usr/bin/uv"), HOST,
             toolkit_python="/usr/bin/python3")
    return for_plan(p)


def _with(build: dict[str, Any]) -> dict[str, Any]:
    data = copy.deepcopy(_base())
    data["build"] = build
    return data


def _refusal(build: dict[str, Any]) -> str:
    with pytest.raises(UsageError) as caught:
        validate(_with(build), "m.json")
    assert caught.value.exit_code == 2
    message = str(caught.value)
    assert "\n" not in message and message.startswith("m.json: "), message
    return message


def test_the_hand_written_build_is_accepted() -> None:
    validate(_with(dict(BUILD)), "m.json")


@pytest.mark.parametrize("key", ["id", "package", "version", "python", "rocm"])
def test_a_missing_build_key_is_refused_naming_it(key: str) -> None:
    build = {k: v for k, v in BUILD.items() if k != key}
    message = _refusal(build)
    assert "build" in message and repr(key) in message or f"build.{key}" in message, message


@pytest.mark.parametrize("key", ["id", "package", "version", "python", "rocm"])
def test_an_empty_build_field_is_refused_naming_it(key: str) -> None:
    message = _refusal({**BUILD, key: ""})
    assert f"build.{key}" in message, message


@pytest.mark.parametrize(("field", "value"), [
    ("id", "fbgemm_gpu-1.8.0-cp312-rocm7.0"),   # another package's id
    ("id", "apex-1.8.1-cp312-rocm7.0"),         # another version
    ("id", "apex-1.8.0-cp311-rocm7.0"),         # another Python
    ("id", "apex-1.8.0-cp312-rocm7.1"),         # another ROCm minor
    ("rocm", "7.1"),                            # the fields moved, the id did not
    ("python", "3.13"),
])
def test_an_id_its_fields_do_not_make_is_refused(field: str, value: str) -> None:
    message = _refusal({**BUILD, field: value})
    assert "build" in message and "tampered" in message, message


@pytest.mark.parametrize("bad", ["../apex-1.8.0-cp312-rocm7.0", "apex-1.8.0-cp312-rocm7.0/..",
                                 "apex 1.8.0", "apex-1.8.0-cp312-rocm7.0\n"])
def test_an_id_that_is_no_build_id_is_refused(bad: str) -> None:
    message = _refusal({**BUILD, "id": bad})
    assert "build.id" in message and "\n" not in message, message
