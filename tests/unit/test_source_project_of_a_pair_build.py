"""``--source PATH`` in a build session, past the reading of the project's metadata (its
build backend's answer stands in, ``toolkit.env.project.read_project``; reading it for real is
tests/unit/test_project_metadata_through_its_backend.py): the hooks' log is
``build/source-metadata.log`` under the work folder (README: "the hooks' output is in
`build/source-metadata.log`"), a project of its own builds from its own folder in the pair's
environment, a project that is a matrix package becomes ``--package NAME`` (or is refused,
naming it, when --package named something else), and a project whose metadata cannot be read
names the matrix packages that take --package instead."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from toolkit.cli import own_project
from toolkit.core.errors import StepFailed, UsageError
from toolkit.env import project
from toolkit.env.project import ProjectInfo
from toolkit.plan.layout import Layout
from toolkit.plan.recipes import load_matrix


@pytest.fixture
def read(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[tuple[str, Path]]:
    calls: list[tuple[str, Path]] = []
    answers = {"/src/mine": ProjectInfo("/real/src/mine", "My-Ext", "0.3.1", ("setuptools",)),
               "/src/fbgemm": ProjectInfo("/real/src/fbgemm", "FBGEMM-GPU", "1.0.0", ())}

    def fake(path: str, log_path: Path) -> ProjectInfo:
        calls.append((path, log_path))
        if path not in answers:
            raise StepFailed(f"cannot read the metadata of the project at {path}")
        return answers[path]

    monkeypatch.setattr(project, "read_project", fake)
    return calls


def _pair() -> tuple[str, str]:
    m = load_matrix()
    return next((b.python, b.rocm.version) for b in m.builds
                if b.package.name == "fbgemm_gpu" and b.pkg_version.torch)


def test_a_project_of_its_own_builds_from_its_folder(read: list[tuple[str, Path]],
                                                     tmp_path: Path) -> None:
    m = load_matrix()
    python, rocm = _pair()
    layout = Layout(tmp_path / "work", tmp_path / "cache")
    args = argparse.Namespace(source="/src/mine", package=["my_ext"], versions=[])
    build = own_project.session_project(m, python, rocm, args, layout)
    assert read == [("/src/mine", tmp_path / "work" / "build" / "source-metadata.log")]
    assert build is not None
    assert (build.package.name, build.package.dist, build.version) == ("my_ext", "My-Ext", "0.3.1")
    assert build.package.repo == "/real/src/mine"  # its own folder, as the backend resolved it
    assert (build.python, build.rocm.version) == (python, rocm)
    torches = {b.pkg_version.torch for b in m.pair_builds(python, rocm) if b.pkg_version.torch}
    newest = max(torches, key=lambda t: tuple(int(x) for x in t.split(".")))
    assert build.pkg_version.torch == newest  # the pair's environment: its newest torch
    assert args.package == ["my_ext"]


def test_a_matrix_package_at_source_becomes_its_package(read: list[tuple[str, Path]],
                                                       tmp_path: Path) -> None:
    m = load_matrix()
    python, rocm = _pair()
    layout = Layout(tmp_path, tmp_path / "cache")
    args = argparse.Namespace(source="/src/fbgemm", package=[], versions=[])
    assert own_project.session_project(m, python, rocm, args, layout) is None
    assert args.package == ["fbgemm_gpu"]
    named = argparse.Namespace(source="/src/fbgemm", package=["my_ext"], versions=[])
    with pytest.raises(UsageError) as err:
        own_project.session_project(m, python, rocm, named, layout)
    assert err.value.message == ("--source /src/fbgemm is FBGEMM-GPU, a package of the matrix; "
                                 "give --package fbgemm_gpu")


def test_unreadable_metadata_names_the_packages_that_take_package(
        read: list[tuple[str, Path]], tmp_path: Path) -> None:
    m = load_matrix()
    python, rocm = _pair()
    args = argparse.Namespace(source="/src/broken", package=[], versions=[])
    with pytest.raises(StepFailed) as err:
        own_project.session_project(m, python, rocm, args, Layout(tmp_path, tmp_path / "c"))
    assert err.value.message == "cannot read the metadata of the project at /src/broken"
    packages = " or ".join(sorted(m.packages))  # apex or fbgemm_gpu (and any other recipe's)
    assert err.value.hint == (f"a checkout of {packages} (whose setup.py needs torch) takes "
                              "--package NAME")
    assert "apex or fbgemm_gpu" in packages
