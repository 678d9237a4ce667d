"""Round 2 of the plan/data mutants (issue 19, part 8): whole functions pinned against a truth
outside the code (ci.toml read with tomllib, hand-written values, the exact message a user
reads)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import tomllib
from packaging.requirements import Requirement

from toolkit.core.errors import DataError, UsageError
from toolkit.core.steps.env import ProvideLibrary
from toolkit.data.ci import github_json, load_ci
from toolkit.data.known import KnownFailure
from toolkit.data.matrix import Build, load_matrix
from toolkit.env.host import HostFacts
from toolkit.plan.layout import Layout
from toolkit.plan.model import Options
from toolkit.plan.planner import plan
from toolkit.plan.provision import sources_for
from toolkit.plan.recipes.fbgemm_gpu import tbb_source
from toolkit.plan.recipes.generic import _recorded_rocm, generic_build
from toolkit.plan.sources import Sources

CI_TOML = Path(__file__).resolve().parents[2] / "toolkit" / "data" / "ci.toml"


def test_every_family_of_a_test_class_runs_on_that_class_as_ci_toml_says() -> None:
    raw = tomllib.loads(CI_TOML.read_text())["runners"]["test"]
    config = load_ci(load_matrix())
    families = sorted(f for cls in raw.values() for f in cls["families"])
    assert config.families == families
    for name, cls in raw.items():
        for fam in cls["families"]:
            runner = config.runner_for(fam)
            assert (runner.name, runner.label, runner.gfx) == (name, cls["label"], cls["gfx"])
            assert runner.families == tuple(cls["families"])


def test_a_family_no_test_class_carries_is_refused_by_name_with_the_valid_ones() -> None:
    config = load_ci(load_matrix())
    with pytest.raises(UsageError) as err:
        config.runner_for("gfx9000")
    assert str(err.value) == ("unknown GPU family for CI 'gfx9000'; valid: "
                              + ", ".join(config.families))
    assert err.value.exit_code == 2


def test_an_empty_github_matrix_is_refused_with_its_reason_and_where_to_look() -> None:
    with pytest.raises(UsageError) as err:
        github_json([])
    assert str(err.value) == ("no build matches these filters; GitHub rejects an empty matrix"
                              " (next: invoke matrix --format json lists every build)")


def test_a_known_failures_json_names_every_field_as_the_toml_file_does() -> None:
    entry = KnownFailure(
        id="apex-smoke", package="apex", fails="smoke", reason="r", evidence="ROCm/apex@abc f",
        versions=">=1.4", rocm="", torch="", python=("3.12",), families=("gfx90X-dcgpu",),
        gfx=("gfx942",), targets=("gfx900", "gfx942"), test="test_runtime.py::test_x",
        holds="")
    assert entry.as_json() == {
        "id": "apex-smoke", "package": "apex", "versions": ">=1.4", "rocm": None, "torch": None,
        "python": ["3.12"], "families": ["gfx90X-dcgpu"], "gfx": ["gfx942"],
        "targets": ["gfx900", "gfx942"], "platform": entry.platform, "fails": "smoke",
        "test": "test_runtime.py::test_x", "reason": "r", "evidence": "ROCm/apex@abc f",
        "holds": None}


def test_sources_as_json_carries_every_input_of_the_lock() -> None:
    src = Sources("system", None, None, None, None, ("/fl",), "torch==2.5.1",
                  ("--index-url", "https://i"), system_version="6.4")
    assert src.as_json() == {
        "provider": "system", "layout": None, "family": None, "sdk_index": None,
        "sdk_spec": None, "find_links": ["/fl"], "torch_spec": "torch==2.5.1",
        "torch_args": ["--index-url", "https://i"], "system_version": "6.4"}
    pinned = Sources("pip", "multi-arch", None, "https://sdk", "rocm[devel]", (), "torch", (),
                     torch_pins=("rocm==7.0.0",))
    assert pinned.as_json()["torch_pins"] == ["rocm==7.0.0"]
    assert pinned.as_json()["system_version"] is None


def test_a_recorded_generic_build_gets_back_the_system_rocm_or_the_cpu_variant() -> None:
    rocm = _recorded_rocm({"build": {"rocm": "5.2", "python": "3.12"},
                           "sdk": {"root": "/opt/rocm-5.2"}})
    assert (rocm.version, rocm.sdk.provider, rocm.sdk.version) == ("5.2", "system", "5.2")
    # no recorded root: the default system install
    assert _recorded_rocm({"build": {"rocm": "5.2"}, "sdk": {}}).version == "5.2"
    cpu = _recorded_rocm({"build": {"rocm": "cpu"}, "sdk": {}})
    assert (cpu.version, cpu.sdk.provider) == ("cpu", "none")


def test_a_recorded_session_build_with_torch_gets_the_matrix_release() -> None:
    matrix = load_matrix()
    version = sorted(matrix.rocm)[-1]
    got = _recorded_rocm({"build": {"rocm": version, "torch": "2.9"}, "sdk": {}})
    assert got == matrix.rocm[version]


@pytest.mark.parametrize(("release", "sdk"), [
    ("7.1", 'provider = "system", version = "7.1.0"'),  # not pip
    ("7.13", 'provider = "pip", layout = "multi-arch", evidence'),  # pip, not per-family
])
def test_served_families_outside_a_per_family_index_are_refused_naming_where_they_are_valid(
        data_copy: Path, release: str, sdk: str) -> None:
    rocm = data_copy / "rocm.toml"
    text = rocm.read_text()
    assert f'[releases."{release}"]\n' in text and sdk in text
    assert f'[releases."{release}".families]' not in text
    rocm.write_text(text + f'\n[releases."{release}".families]\n'
                    'evidence = "ROCm/TheRock@de9728b3d x"\nserved."gfx94X-dcgpu" = ["gfx942"]\n')
    with pytest.raises(DataError) as err:
        load_matrix(data_copy)
    assert str(err.value) == (
        f'{rocm}: releases."{release}".families: lists the families of a per-family SDK index; '
        'valid only with sdk.layout = "per-family"')


LAYOUT = Layout(Path("/w"), Path("/c"))
HOST = HostFacts(cores=16, mem_available_gib=64.0)


def test_targets_outside_the_family_are_all_named_in_the_order_asked() -> None:
    """ROCm 7.0's per-family index served gfx94X-dcgpu = gfx942 only (rocm.toml,
    TheRock@de9728b3d): gfx908 and gfx1100 are outside it, listed in the order --gfx gave them."""
    m = load_matrix()
    p = plan(m, m.build("apex-1.8.0-cp312-rocm7.0"),
             Options(gfx=("gfx1100", "gfx942", "gfx908"), channel="nightly"), HOST, LAYOUT)
    desc = p.step("install-rocm-sdk").description
    assert ("(family gfx94X-dcgpu; its libraries do not serve gfx1100, gfx908, its compiler "
            "builds for them)") in desc
    inside = plan(m, m.build("apex-1.8.0-cp312-rocm7.0"), Options(gfx=("gfx942",), channel="nightly"),
                  HOST, LAYOUT)
    assert "(family gfx94X-dcgpu)" in inside.step("install-rocm-sdk").description


def test_a_system_tbb_is_looked_for_where_the_system_keeps_it_and_says_why() -> None:
    """fbgemm_gpu's setup.py links -ltbb (fbgemm_gpu.toml's evidence): a system tbb is looked
    for in the system's library and header folders, and a miss names that reason."""
    m = load_matrix()
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


def test_a_project_without_torch_gets_the_releases_sdk_requirement_or_none() -> None:
    """A setuptools project that needs no torch still installs the SDK rocm.toml names for its
    release (7.0's nightly channel: TheRock's per-family index, the line's pre-releases
    ``rocm[libraries,devel]>1.0,>=7.0.0a0,<7.1``);
    from a system ROCm there is no SDK requirement at all, and no torch either."""
    m = load_matrix()
    raw = tomllib.loads((CI_TOML.parent / "rocm.toml").read_text())["releases"]
    pip = generic_build("demo", "demo", "1.0", "/src", "3.12", m.rocm["7.0"])
    src = sources_for(m, pip, Options(gfx=("gfx942",), channel="nightly"))
    assert (src.provider, src.layout, src.family) == ("pip", "per-family", "gfx94X-dcgpu")
    assert src.sdk_spec == "rocm[libraries,devel]>1.0,>=7.0.0a0,<7.1"
    assert src.sdk_index == raw["7.0"]["channels"]["nightly"] + "gfx94X-dcgpu/"
    assert Requirement(src.sdk_spec).name == "rocm"
    assert (src.torch_spec, src.torch_args, src.torch_pins, src.system_version) == ("", (), (), None)
    system = generic_build("demo", "demo", "1.0", "/src", "3.12", m.rocm["7.1"])
    sys_src = sources_for(m, system, Options(gfx=("gfx942",)))
    assert (sys_src.provider, sys_src.sdk_spec, sys_src.sdk_index, sys_src.family) == (
        "system", None, None, None)
    assert sys_src.system_version == raw["7.1"]["sdk"]["version"]
    assert "sdk_spec" in sys_src.as_json() and sys_src.as_json()["sdk_spec"] is None
