"""Does it import? Every expected module, from the environment's site-packages."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest


def test_runs_in_build_environment(build):
    """The suite runs under the build environment's Python, not the host's."""
    if build.env_dir is None:
        pytest.skip("the manifest names no environment")
    assert Path(sys.prefix).resolve() == build.env_dir.resolve(), (
        f"running under {sys.prefix}, but {build.id}'s environment is {build.env_dir}")


def test_distribution_installed(build):
    version = build.installed_version()
    assert version.split("+")[0] == build.version.split("+")[0], (
        f"{build.dist} {version} is installed, the build made {build.version}")


def test_import(build, module, load, site_packages):
    mod = load(module)
    where = getattr(mod, "__file__", None)
    assert where, f"{module} has no __file__ (a namespace package? the wheel lacks it)"
    path = Path(where).resolve()
    assert any(path.is_relative_to(sp) for sp in site_packages), (
        f"{module} was imported from {path}, not from the environment's site-packages "
        f"({', '.join(map(str, site_packages))}): a source tree is shadowing the wheel")


@pytest.mark.package("apex")
@pytest.mark.apex_jit
def test_apex_ops_installed(build, module, load):
    """apex 1.8's top-level names always import; installed_ops says what was really built."""
    info = load("apex.git_version_info")
    ops = getattr(info, "installed_ops", None)
    assert isinstance(ops, dict), "apex.git_version_info.installed_ops is missing"
    name = module.split(".", 1)[1]
    assert ops.get(name) is True, (
        f"apex op {name} was not prebuilt (installed_ops[{name!r}] = {ops.get(name, 'absent')}); "
        f"built: {', '.join(sorted(k for k, v in ops.items() if v)) or 'none'}")


@pytest.mark.package("fbgemm_gpu")
def test_fbgemm_variant(build, load):
    fbgemm_gpu = load("fbgemm_gpu")
    variant = getattr(fbgemm_gpu, "__variant__", None)
    assert variant == "rocm", f"fbgemm_gpu.__variant__ is {variant!r}, expected 'rocm'"


@pytest.mark.package("fbgemm_gpu")
@pytest.mark.parametrize("op", ["jagged_2d_to_dense", "asynchronous_inclusive_cumsum"])
def test_fbgemm_op_registered(build, load, op):
    load("fbgemm_gpu")
    import torch

    try:
        packet = getattr(torch.ops.fbgemm, op)
    except (AttributeError, RuntimeError) as err:
        pytest.fail(f"torch.ops.fbgemm.{op} is not registered ({err})", pytrace=False)
    assert callable(packet)


@pytest.mark.package("sample")
def test_sample_variant(build, load):
    """VARIANT and ARCHS say what the library really carries (read by the checks engine)."""
    from toolkit.inspect.checks import load_file

    hip_sample = load("hip_sample")
    carried = set(load_file(hip_sample._native.__file__).gpu_targets)
    if build.carries_gpu_code:
        assert hip_sample.VARIANT == "hip", (
            f"hip_sample.VARIANT is {hip_sample.VARIANT!r}: the wheel was built without GPU code")
        assert set(hip_sample.ARCHS) == carried, (
            f"hip_sample.ARCHS is {', '.join(hip_sample.ARCHS)}, but its library carries code "
            f"for {', '.join(sorted(carried)) or 'nothing'}")
    else:
        assert hip_sample.VARIANT == "cpu"
        assert hip_sample.ARCHS == ()
        assert not carried, f"the CPU variant carries GPU code for {', '.join(sorted(carried))}"
