"""Builds made outside the matrix (the bundled sample, a project given with ``--source``) keep
the contracts a build loaded from the data files keeps: every field has its declared type,
the build style is one its recipe declares (what the loader checks in a data file), the SDK
provider is one the planner knows.

The truths: the dataclasses' own type hints, the registry's closed sets, and the data schema.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from toolkit.data import matrix as data
from toolkit.data.matrix import Build
from toolkit.data.specs import ROCM
from toolkit.plan.model import Options
from toolkit.plan.provision import sdk_provider
from toolkit.plan.recipes import REGISTRY
from toolkit.plan.recipes.generic import generic_build
from toolkit.plan.recipes.sample import demo_build, demo_rocm


def _conforms(value: Any, hint: Any, where: str) -> list[str]:
    """Where ``value`` is not of the type ``hint`` (the subset of typing the data classes use)."""
    origin = typing.get_origin(hint)
    if hint is Any:
        return []
    if hint is type(None):
        return [] if value is None else [f"{where}: {value!r} is not None"]
    if origin in (typing.Union, types.UnionType):
        results = [_conforms(value, h, where) for h in typing.get_args(hint)]
        return [] if any(not r for r in results) else [f"{where}: {value!r} is not {hint}"]
    if origin is tuple:
        if not isinstance(value, tuple):
            return [f"{where}: {value!r} is not a tuple"]
        item = typing.get_args(hint)[0]
        return [e for i, v in enumerate(value) for e in _conforms(v, item, f"{where}[{i}]")]
    if origin is not None and isinstance(origin, type) and issubclass(origin, Mapping):
        if not isinstance(value, Mapping):
            return [f"{where}: {value!r} is not a mapping"]
        key_t, val_t = typing.get_args(hint)
        return [e for k, v in value.items()
                for e in (*_conforms(k, key_t, f"{where} key"), *_conforms(v, val_t, f"{where}[{k!r}]"))]
    if dataclasses.is_dataclass(hint):
        if not isinstance(value, hint):
            return [f"{where}: {value!r} is not a {hint.__name__}"]
        hints = typing.get_type_hints(hint, vars(data))
        return [e for f in dataclasses.fields(hint)
                for e in _conforms(getattr(value, f.name), hints[f.name], f"{where}.{f.name}")]
    assert isinstance(hint, type), hint
    return [] if isinstance(value, hint) else [f"{where}: {value!r} is not {hint.__name__}"]


def test_the_checker_finds_a_wrong_field() -> None:
    good = demo_rocm(None)
    assert _conforms(good, data.RocmRelease, "rocm") == []
    assert _conforms(dataclasses.replace(good, hip=None), data.RocmRelease, "rocm") == [  # type: ignore[arg-type]
        "rocm.hip: None is not str"]
    assert _conforms(dataclasses.replace(good, torch=None), data.RocmRelease, "rocm")  # type: ignore[arg-type]


def _outside(tmp: Path) -> list[Build]:
    cpu, system = demo_rocm(None), demo_rocm(("/opt/rocm-6.4.3", "6.4"))
    return [demo_build("3.12", None), demo_build("3.13t", ("/opt/rocm", "5.2")),
            generic_build("my_ext", "my-ext", "1.2.3", str(tmp), "3.12", cpu),
            generic_build("my_ext", "my-ext", "1.2.3", str(tmp), "3.12", system, "2.8",
                          requires=("setuptools>=64",))]


def test_a_build_outside_the_matrix_has_the_declared_type_in_every_field(tmp_path: Path) -> None:
    for build in _outside(tmp_path):
        assert _conforms(build, Build, build.id) == []


def test_its_build_style_is_one_its_recipe_declares(tmp_path: Path) -> None:
    # the loader refuses any other in a data file ("build_styles", toolkit.data.matrix)
    for build in _outside(tmp_path):
        assert build.pkg_version.build_style in REGISTRY[build.package.recipe].build_styles


def _sdk_providers() -> set[str]:
    """The SDK providers rocm.toml may name (its schema)."""
    sdk = ROCM.fields["releases"].value.fields["sdk"]  # type: ignore[attr-defined]
    return set(sdk.variants)


def test_the_demos_rocm_is_the_systems_install_or_none(tmp_path: Path) -> None:
    system = demo_rocm(("/opt/rocm", "6.4"))
    assert system.sdk.provider in _sdk_providers() and system.sdk.version == "6.4"
    # without --rocm-from, a build of the sample on a host with ROCm uses that install
    assert sdk_provider(demo_build("3.12", ("/opt/rocm", "6.4")), Options()) == "system"
    assert demo_rocm(None).sdk.provider == "none"
    with pytest.raises(Exception, match="unknown ROCm SDK provider 'none'; valid: pip, system"):
        sdk_provider(demo_build("3.12", None), Options())  # the CPU variant has no SDK to install


def test_the_cpu_variant_planned_without_targets_takes_its_releases_family() -> None:
    from toolkit.env.host import HostFacts
    from toolkit.plan.layout import Layout
    from toolkit.plan.planner import plan
    from toolkit.plan.recipes import load_matrix

    m = load_matrix()
    build = demo_build("3.12", None)
    assert build.pkg_version.targets_for("cpu") == ()  # no ROCm: no version's own defaults
    p = plan(m, build, Options(rocm_from="system"), HostFacts(), Layout(Path("/w"), Path("/c")))
    assert p.targets == m.family_targets[build.rocm.default_family]  # gpus.toml's members
