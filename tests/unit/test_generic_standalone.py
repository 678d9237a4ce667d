"""A recorded build of a project outside the matrix is made again from its source, and only
if the source is still the project the manifest recorded (name and version, as its build
backend reports them: setup.py of tests/projects/own_flat says flat-ext 0.2.0)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from toolkit.core.errors import UsageError
from toolkit.plan.recipes import REGISTRY, standalone_build

PROJECT = Path(__file__).parent.parent / "projects" / "own_flat"


def _recorded(dist: str, version: str) -> dict[str, Any]:
    return {"recipe": "generic", "dist": dist,
            "build": {"id": f"{dist}-{version}-cp312-cpu", "version": version, "python": "3.12",
                      "rocm": "cpu", "torch": ""},
            "sdk": {"provider": "none", "root": None}}


def test_the_recorded_project_is_read_again_from_its_source(tmp_path: Path) -> None:
    build = standalone_build("flat-ext-0.2.0-cp312-cpu", _recorded("flat-ext", "0.2.0"), str(PROJECT),
                             tmp_path / "meta.log")
    assert build is not None
    assert (build.package.recipe, build.package.dist, build.version, build.python) == \
        ("generic", "flat-ext", "0.2.0", "3.12")
    assert build.rocm.version == "cpu"


def test_another_version_at_the_source_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=re.escape("is flat-ext 0.2.0; the manifest built flat-ext 0.3.0")):
        standalone_build("flat-ext-0.3.0-cp312-cpu", _recorded("flat-ext", "0.3.0"), str(PROJECT),
                         tmp_path / "meta.log")


def test_no_source_is_a_usage_error_naming_the_flag() -> None:
    with pytest.raises(UsageError, match="--source PATH"):
        standalone_build("flat-ext-0.2.0-cp312-cpu", _recorded("flat-ext", "0.2.0"))


def test_a_matrix_manifest_is_no_standalone_build() -> None:
    recorded = {"recipe": "apex", "build": {"id": "apex-1.8.0-cp312-rocm7.0"}}
    assert standalone_build("apex-1.8.0-cp312-rocm7.0", recorded) is None


def test_only_matrix_packages_are_pinned_to_the_recorded_commit() -> None:
    """apex and fbgemm_gpu are checked out at the manifest's commit; the sample is the
    toolkit's own and a project outside the matrix is the folder given."""
    from toolkit.plan.recipes import load_matrix

    pinned = {name for name, r in REGISTRY.items() if r.pins_recorded_source}
    assert pinned == {p.recipe for p in load_matrix().packages.values()} >= {"apex", "fbgemm_gpu"}
