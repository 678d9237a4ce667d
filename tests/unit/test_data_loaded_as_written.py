"""The matrix holds what its data files say: each package file read with tomllib (the judge)
is what ``load_matrix`` returns, field by field; a rule across files (a release's default
family must have a member its compilers build) is enforced for every release."""

from __future__ import annotations

from pathlib import Path

import pytest
import tomllib

from toolkit.core.errors import DataError
from toolkit.data.matrix import data_dir, load_matrix
from toolkit.data.specs import RESERVED_FILES
from toolkit.plan.recipes.fbgemm_gpu import tbb_source


def test_every_package_file_is_loaded_as_written() -> None:
    m = load_matrix()
    files = [f for f in sorted(data_dir().glob("*.toml")) if f.name not in RESERVED_FILES]
    assert {f.stem for f in files} == set(m.packages)
    submodules = 0
    for f in files:
        raw = tomllib.loads(f.read_text())
        pkg = m.packages[f.stem]
        head = raw["package"]
        assert (pkg.name, pkg.dist, pkg.repo, pkg.recipe, pkg.subdir) == (
            head["name"], head["dist"], head["repo"], head["recipe"], head.get("subdir", "")), f.name
        assert [v.version for v in pkg.versions] == [v["version"] for v in raw["versions"]]
        for v, rv in zip(pkg.versions, raw["versions"], strict=True):
            where = f"{f.name} {rv['version']}"
            assert (v.ref, v.torch, list(v.rocm), list(v.python), v.build_style, v.evidence) == (
                rv["ref"], rv["torch"], rv["rocm"], rv["python"], rv["build_style"], rv["evidence"]), where
            assert dict(v.submodules) == rv.get("submodules", {}), where
            assert {k: list(t) for k, t in v.default_targets.items()} == rv.get("default_targets", {}), where
            tbb = rv.get("tbb")
            if tbb:
                got = tbb_source(v)
                assert got is not None, where
                assert (got.provider, got.spec) == (tbb["provider"], tbb.get("spec")), where
            else:
                assert tbb_source(v) is None, where
            submodules += len(v.submodules)
    assert submodules  # fbgemm_gpu records the submodules its CMake build reads


def test_a_default_family_outside_the_releases_era_is_refused(data_copy: Path) -> None:
    rocm = data_copy / "rocm.toml"
    text = rocm.read_text()
    head = '[releases."6.4"]\ngpus = "rocm-6"\nhip = "6.4"\ndefault_family = "gfx94X-dcgpu"\n'
    assert head in text  # 6.4 lists no served families: gpus.toml's are its families
    rocm.write_text(text.replace(head, head.replace("gfx94X-dcgpu", "gfx950-dcgpu")))
    # gfx950 is not among the rocm-6 era's targets (gpus.toml, TheRock@e3d9525e4)
    assert "gfx950" not in tomllib.loads((data_copy / "gpus.toml").read_text())["eras"]["rocm-6"]["targets"]
    with pytest.raises(DataError, match=r'releases\."6\.4"\.default_family.*'
                                        r"'gfx950-dcgpu' has no member in the rocm-6 era's targets"):
        load_matrix(data_copy)


def test_a_data_file_past_its_cap_or_not_a_file_is_named_as_a_data_file(data_copy: Path) -> None:
    rocm = data_copy / "rocm.toml"
    with rocm.open("a") as fh:  # still valid TOML: a comment past the data files' 4 MiB cap
        fh.write("#" * (4 << 20) + "\n")
    size = rocm.stat().st_size
    with pytest.raises(DataError) as err:
        load_matrix(data_copy)
    assert str(err.value) == f"data file {rocm}: larger than 4 MiB ({size} bytes)"
    rocm.unlink()
    rocm.mkdir()
    with pytest.raises(DataError) as err:
        load_matrix(data_copy)
    assert str(err.value) == f"data file {rocm}: not a regular file (a folder)"


def test_schema_messages_name_the_place_and_what_is_allowed() -> None:
    from toolkit.data.schema import Flag, Ref, Table, Text, check

    file = Path("x.toml")
    spec = Table({"kind": Text(choices=Ref("kinds"), note="the kinds of y.toml"), "on": Flag()},
                 optional=("on",))
    cases = [
        ([1], spec, {"kinds": ["a"]}, "x.toml: (top level): must be a table, got array [1]"),
        # a closed set with nothing in it yet says so, and why its values are these
        ({"kind": "a"}, spec, {"kinds": []},
         "x.toml: kind: 'a' is not allowed; valid: (none) (the kinds of y.toml)"),
        # a long value is cut to 57 characters of its repr and "..."
        ({"kind": "a", "on": "y" * 100}, spec, {"kinds": ["a"]},
         f"x.toml: on: must be true or false, got string {repr('y' * 100)[:57]}..."),
    ]
    for doc, sp, refs, message in cases:
        with pytest.raises(DataError) as err:
            check(sp, doc, file, refs)
        assert str(err.value) == message
    assert len(repr("y" * 100)[:57] + "...") == 60  # the same width as any shorter value shown
