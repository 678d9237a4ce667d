"""fbgemm_gpu's TBB: where its source is read from (the package's TOML), and that the
provide-tbb step finds libtbb where the build looks (PyPI's wheel or the system's multiarch folder)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from toolkit.core.steps.env import ProvideLibrary
from toolkit.data.matrix import Build, load_matrix
from toolkit.data.matrix import load_matrix as load_data_matrix
from toolkit.env.host import HostFacts
from toolkit.plan.layout import Layout
from toolkit.plan.model import Options, render
from toolkit.plan.planner import plan
from toolkit.plan.recipes import load_matrix as load_checked_matrix
from toolkit.plan.recipes.fbgemm_gpu import tbb_source

LAYOUT = Layout(Path("/w"), Path("/c"))


@pytest.mark.parametrize(("build_id", "provider"), [("fbgemm_gpu-1.3.0-cp312-rocm6.4", "pypi"),
                                                    ("fbgemm_gpu-1.5.0-cp313-rocm7.0", "pypi"),
                                                    ("fbgemm_gpu-1.5.0-cp313-rocm7.0", "system")])
def test_tbb_is_libtbb_found_where_the_build_looks(build_id: str, provider: str) -> None:
    import dataclasses

    m = load_matrix()
    build = m.build(build_id)
    if provider == "system":  # the data may say so (no shipped entry does today)
        pv = build.pkg_version
        assert tbb_source(pv) is not None
        pv = dataclasses.replace(pv, recipe_data={**pv.recipe_data, "tbb": {"provider": "system"}})
        build = dataclasses.replace(build, pkg_version=pv)
    p = plan(m, build, Options(gfx=("gfx90a",)), HostFacts(cores=16, mem_available_gib=64.0), LAYOUT)
    tbb = p.step("provide-tbb").action
    assert isinstance(tbb, ProvideLibrary)
    # -ltbb makes ld look for libtbb.so (ld(1), -l namespec); either header is TBB's
    assert tbb.library == "libtbb.so" and set(tbb.headers) == {"tbb/tbb.h", "oneapi/tbb.h"}
    spec = tbb_source(p.build.pkg_version)
    assert spec is not None
    if spec.provider == "pypi":
        env_dir = str(LAYOUT.env_dir(p.build))
        assert tbb.source == f"pypi {spec.spec}" and tbb.lib_dirs == (f"{env_dir}/lib",)
        assert tbb.include_dirs == (f"{env_dir}/include",)
    else:
        assert tbb.install is None and tbb.source == "system" and tbb.include_dirs == ("/usr/include",)
        assert "/usr/lib/x86_64-linux-gnu" in tbb.lib_dirs  # Debian's multiarch folder
        assert p.step("provide-tbb").description.startswith("use the system's libtbb;")
    env = dict(p.step("build-wheel").action.build.env)  # type: ignore[union-attr]
    assert env["LIBRARY_PATH"] == env["CMAKE_LIBRARY_PATH"] == tbb.placeholder == "{TBB_LIB_DIR}"
    text = render(p)
    assert "#   {TBB_LIB_DIR} = the folder holding libtbb.so (learned by provide-tbb)" in text
    assert "\n# placeholders filled while running:" in text


HOST = HostFacts(cores=16, mem_available_gib=64.0)


def test_a_system_tbb_is_looked_for_where_the_system_keeps_it_and_says_why() -> None:
    """fbgemm_gpu's setup.py links -ltbb (fbgemm_gpu.toml's evidence): a system tbb is looked
    for in the system's library and header folders, and a miss names that reason."""
    m = load_data_matrix()
    build = m.build("fbgemm_gpu-1.3.0-cp311-rocm6.3")
    assert tbb_source(build.pkg_version) is not None and tbb_source(build.pkg_version).provider == "pypi"
    pv = dataclasses.replace(build.pkg_version, recipe_data={"tbb": {"provider": "system"}})
    system = Build(build.package, pv, build.python, build.rocm)
    pypi_step = plan(m, build, Options(), HOST, LAYOUT).step("provide-tbb")
    step = plan(m, system, Options(), HOST, LAYOUT).step("provide-tbb")
    action = step.action
    assert isinstance(action, ProvideLibrary) and isinstance(pypi_step.action, ProvideLibrary)
    assert (action.install, action.source, action.name) == (None, "system", "tbb")
    assert action.include_dirs == ("/usr/include",)
    assert "/usr/lib/x86_64-linux-gnu" in action.lib_dirs  # Debian's multiarch folder
    assert "-ltbb" in action.why and action.why == pypi_step.action.why
    assert step.description == ("use the system's libtbb; fbgemm_gpu links -ltbb outside Nova "
                                "(checked here, before the build)")
    assert pypi_step.description.startswith(
        "install tbb-devel==2022.2.0 (libtbb and its headers) into the build environment; ")


def test_a_packages_tbb_source_is_read_from_its_toml() -> None:
    import tomllib

    from toolkit.data.matrix import DATA_DIR

    doc = tomllib.loads((Path(DATA_DIR) / "fbgemm_gpu.toml").read_text())
    want = {v["version"]: v.get("tbb") for v in doc["versions"]}
    assert any(want.values())
    got = {pv.version: tbb_source(pv) for pv in load_checked_matrix().packages["fbgemm_gpu"].versions}
    assert set(got) == set(want)
    for version, tbb in want.items():
        g = got[version]
        assert (None if g is None else {"provider": g.provider, "spec": g.spec}) == (
            None if tbb is None else {"provider": tbb["provider"], "spec": tbb.get("spec")})
