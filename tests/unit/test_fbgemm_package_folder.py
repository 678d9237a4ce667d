"""fbgemm_gpu is built from a folder of its repository (``subdir`` in fbgemm_gpu.toml): pypa/build
is pointed at it, its requirements.txt read from it, and the plan names it the same way
however the data file writes the folder (``fbgemm_gpu``, ``fbgemm_gpu/``, or the root)."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest
from build.__main__ import main_parser as build_parser

from toolkit.core.steps import BuildWheel, Command
from toolkit.env.host import HostFacts
from toolkit.plan.layout import Layout
from toolkit.plan.model import Options
from toolkit.plan.planner import plan
from toolkit.plan.recipes import load_matrix

LAYOUT = Layout(Path("/w"), Path("/c"))


@pytest.mark.parametrize(("subdir", "folder"), [("fbgemm_gpu", "fbgemm_gpu"), ("fbgemm_gpu/", "fbgemm_gpu"),
                                                ("", "")])
def test_the_package_folder_is_named_in_normal_form(subdir: str, folder: str) -> None:
    m = load_matrix()
    build = m.build("fbgemm_gpu-1.3.0-cp312-rocm6.4")
    build = dataclasses.replace(build, package=dataclasses.replace(build.package, subdir=subdir))
    p = plan(m, build, Options(gfx=("gfx90a",)), HostFacts(cores=16, mem_available_gib=64.0), LAYOUT)
    worktree = str(LAYOUT.worktree(build))
    pkg_dir = os.path.join(worktree, folder) if folder else worktree
    wheel = p.step("build-wheel").action
    assert isinstance(wheel, BuildWheel)
    args = build_parser().parse_args(list(wheel.build.argv[3:]))
    assert args.srcdir == pkg_dir == os.path.normpath(args.srcdir)
    assert wheel.build.cwd == pkg_dir
    install = p.step("install-requirements").action
    assert isinstance(install, Command) and install.cwd == pkg_dir
    req = install.argv[install.argv.index("-r") + 1]
    assert req == os.path.join(pkg_dir, "requirements.txt") == os.path.normpath(req)


def test_the_submodules_fbgemm_gpu_toml_names_are_fetched_or_asked_of_a_checkout() -> None:
    import tomllib

    from toolkit.data.matrix import data_dir

    m = load_matrix()
    build = m.build("fbgemm_gpu-1.3.0-cp312-rocm6.4")
    raw = next(v for v in tomllib.loads((data_dir() / "fbgemm_gpu.toml").read_text())["versions"]
               if v["version"] == "1.3.0")
    paths = ", ".join(raw["submodules"])
    host = HostFacts(cores=16, mem_available_gib=64.0)
    own = plan(m, build, Options(gfx=("gfx90a",), source="/src/FBGEMM"), host, LAYOUT)
    assert own.step("get-sources").description == (
        f"use the contributor's checkout /src/FBGEMM (copied, never modified; it must hold its "
        f"submodules: {paths})")
    fetched = plan(m, build, Options(gfx=("gfx90a",)), host, LAYOUT)
    assert fetched.step("get-submodules").description == (
        f"the submodules the build needs ({paths}) at the commits {raw['ref']} records, each from a "
        "cached mirror")
