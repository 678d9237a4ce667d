"""The planned part of a manifest's identity names its fields as the manifest schema does
(``identity``: build, python, rocm, targets, family, options, plan_sha256) with the values a
build id states (README: "build, Python, ROCm release, targets, family, output options, the
plan's steps"): apex-1.11.0-cp312-rocm7.14 is Python 3.12 on ROCm 7.14, by hand."""

from __future__ import annotations

from pathlib import Path

from toolkit.data.matrix import load_matrix
from toolkit.env.host import HostFacts
from toolkit.plan.layout import Layout
from toolkit.plan.model import Options
from toolkit.plan.planner import plan
from toolkit.run.identity import planned_identity
from toolkit.run.manifest_schema import SCHEMA


def test_the_planned_identity_names_python_rocm_and_targets() -> None:
    m = load_matrix()
    p = plan(m, m.build("apex-1.11.0-cp312-rocm7.14"), Options(gfx=("gfx942",)),
             HostFacts(cores=8, mem_available_gib=32.0), Layout(Path("/w"), Path("/c")))
    ident = planned_identity(p, Layout(Path("/w"), Path("/c")))
    assert set(ident) == {"build", "python", "rocm", "targets", "family", "options", "plan_sha256"}
    assert set(ident) <= set(SCHEMA["properties"]["identity"]["properties"])
    assert (ident["python"], ident["rocm"], ident["targets"]) == ("3.12", "7.14", ["gfx942"])
    assert ident["build"]["id"] == "apex-1.11.0-cp312-rocm7.14"
    assert len(ident["plan_sha256"]) == 64


def test_the_identitys_build_names_the_distribution_and_recipe_as_the_data_file_does() -> None:
    """fbgemm_gpu.toml's [package]: dist = "fbgemm_gpu-rocm" (the wheel's name, not the
    package's), recipe = "fbgemm_gpu"; the identity's build carries them under those keys,
    the keys the manifest's own ``dist`` and ``recipe`` fields use."""
    m = load_matrix()
    build = next(b for b in m.builds if b.package.name == "fbgemm_gpu")
    layout = Layout(Path("/w"), Path("/c"))
    p = plan(m, build, Options(gfx=("gfx942",)), HostFacts(cores=8, mem_available_gib=32.0), layout)
    recorded = planned_identity(p, layout)["build"]
    assert (recorded["dist"], recorded["recipe"]) == ("fbgemm_gpu-rocm", "fbgemm_gpu")
    assert recorded["package"] == "fbgemm_gpu" and recorded["id"] == build.id
