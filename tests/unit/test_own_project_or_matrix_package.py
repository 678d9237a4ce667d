"""A `--source` project in a session: the matrix's own package (by name, or by distribution
name in PEP 503 normal form: ``Apex``, ``fbgemm-gpu``, ``FBGEMM.gpu`` are fbgemm_gpu) or a
project of its own, and the options that make no sense for the latter (README: bad input is
exit 2)."""

from __future__ import annotations

import argparse

import pytest

from toolkit.cli import own_project
from toolkit.core.errors import UsageError
from toolkit.data.matrix import Build
from toolkit.plan.recipes import load_matrix
from toolkit.plan.recipes.generic import generic_build, torch_of_pair


@pytest.mark.parametrize(("name", "normal"), [
    ("fbgemm-gpu", "fbgemm_gpu"), ("FBGEMM.gpu", "fbgemm_gpu"), ("a--b__c..d", "a_b_c_d"), ("Apex", "apex"),
])
def test_names_compare_in_normal_form(name: str, normal: str) -> None:
    assert own_project._norm(name) == normal


def _build(package: str, dist: str) -> Build:
    m = load_matrix()
    return generic_build(package, dist, "0.1.0", "/src", "3.12", next(iter(m.rocm.values())))


@pytest.mark.parametrize(("package", "dist", "of_matrix"), [
    ("apex", "whatever", True), ("x", "apex", True), ("x", "FBGEMM-GPU", True),
    ("fbgemm_gpu", "x", True), ("my_ext", "my-ext", False),
])
def test_a_project_is_the_matrixs_by_name_or_distribution(package: str, dist: str, of_matrix: bool) -> None:
    assert own_project._of_the_matrix(load_matrix(), _build(package, dist)) is of_matrix


def test_a_project_of_its_own_takes_only_its_own_name_and_no_version() -> None:
    m = load_matrix()
    build = _build("my_ext", "my-ext")
    args = argparse.Namespace(source="/src", versions=[])
    own_project._refuse_matrix_selection(m, build, ["my_ext", "my-ext"], args)
    with pytest.raises(UsageError) as err:
        own_project._refuse_matrix_selection(m, build, ["my_ext", "apex", "zzz"], args)
    assert err.value.message.startswith("--package apex,zzz: the project at /src is my-ext")
    # the matrix's packages, whichever recipes are registered (a third one in some runs)
    assert f"valid: my_ext or {', '.join(sorted(m.packages))}" in err.value.message
    # the matrix's packages are valid only as themselves: built from their own checkouts
    assert err.value.message.endswith(f"{', '.join(sorted(m.packages))} (with their own checkouts)")
    with pytest.raises(UsageError) as err:
        own_project._refuse_matrix_selection(m, build, [],
                                             argparse.Namespace(source="/src", versions=["1.0"]))
    # --version picks matrix builds (docs/command-line.md: "package version(s)"); the project's
    # own version is the one it builds, named in the refusal
    assert err.value.message.startswith("--version selects matrix builds; ")
    assert err.value.message.endswith("the project at --source has its own version (0.1.0)")


def test_without_source_or_with_matrix_packages_no_project_is_read() -> None:
    m = load_matrix()
    python, rocm = next((b.python, b.rocm.version) for b in m.builds)
    layout = None
    assert own_project.session_project(m, python, rocm, argparse.Namespace(source=None, package=[]),
                                       layout) is None  # type: ignore[arg-type]
    # --package names only matrix packages: the checkout replaces their sources
    args = argparse.Namespace(source="/does/not/matter", package=["apex,fbgemm_gpu", " "])
    assert own_project.session_project(m, python, rocm, args, layout) is None  # type: ignore[arg-type]


def test_a_project_builds_against_the_pairs_newest_torch() -> None:
    m = load_matrix()
    pair = m.pair_builds(*next((b.python, b.rocm.version) for b in m.builds if b.pkg_version.torch))
    torches = {b.pkg_version.torch for b in pair}
    newest = torch_of_pair(pair)
    assert newest in torches
    assert all(tuple(int(x) for x in t.split(".")) <= tuple(int(x) for x in newest.split("."))
               for t in torches if t)
    assert torch_of_pair([]) == ""
