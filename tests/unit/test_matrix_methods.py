"""The ``Matrix`` methods pinned against gpus.toml read with tomllib and values worked out by
hand (issue 19, part 8): family names and aliases, the known and extra gfx ids, the families a
release's era builds, the (Python, ROCm) pairs in PEP 440 order."""

from __future__ import annotations

import dataclasses
import sys
from typing import Any

import pytest
from packaging.version import Version

from toolkit.core.errors import UsageError
from toolkit.data.matrix import Matrix, data_dir, load_matrix, python_sort_key, python_tag

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def _gpus() -> dict[str, Any]:
    doc: dict[str, Any] = tomllib.loads((data_dir() / "gpus.toml").read_text())
    return doc


def test_family_targets_name_every_family_and_alias() -> None:
    raw = _gpus()["families"]
    want = {}
    for name, f in raw.items():
        for n in (name, *f.get("aliases", ())):
            want[n] = tuple(f["targets"])
    got = load_matrix().family_targets
    assert got == want
    assert got["gfx94X-all"] == got["gfx94X-dcgpu"] == ("gfx942",)  # an alias, by hand


def test_known_targets_are_the_families_then_the_eras_in_first_seen_order() -> None:
    raw = _gpus()
    seen: list[str] = []
    for f in raw["families"].values():
        seen += [t for t in f["targets"] if t not in seen]
    for e in raw["eras"].values():
        seen += [t for t in (*e["targets"], *e.get("extra_targets", ())) if t not in seen]
    m: Matrix = load_matrix()
    assert m.known_targets == tuple(seen)
    # no family lists gfx940 and gfx941 (rocm-6 era only), gfx1013 and gfx1251 (extra targets)
    assert m.extra_targets == ("gfx940", "gfx941", "gfx1013", "gfx1251")


def test_a_releases_families_keep_the_members_its_era_builds() -> None:
    m = load_matrix()
    fams = m.release_families(m.rocm["7.0"])
    # therock-7.0 builds gfx1201, not gfx1200; gfx1030/32/35/36 of gfx103X; no gfx900, gfx90c
    assert fams["gfx120X-all"] == ("gfx1201",)
    assert fams["gfx103X-all"] == ("gfx1030", "gfx1032", "gfx1035", "gfx1036")
    assert fams["gfx90X-dcgpu"] == ("gfx906", "gfx908", "gfx90a")
    assert "gfx900" not in fams and "gfx900-dgpu" not in fams and "gfx90c" not in fams
    era = set(_gpus()["eras"]["therock-7.0"]["targets"])
    assert fams == {n: tuple(t for t in ts if t in era) for n, ts in m.family_targets.items()
                    if set(ts) & era}
    # without a recorded era: every family as gpus.toml lists it
    assert m.release_families(dataclasses.replace(m.rocm["7.0"], era=None)) == m.family_targets


def test_pairs_run_in_rocm_then_python_order_by_version_not_text() -> None:
    m = load_matrix()
    pairs = m.pairs()
    assert pairs == sorted({(b.python, b.rocm.version) for b in m.builds},
                           key=lambda p: (Version(p[1]), python_sort_key(p[0])))
    assert len(pairs) == len(set(pairs))
    assert pairs[0] == ("3.8", "6.0")  # apex 1.4.0 (apex.toml)
    assert pairs.index(("3.9", "6.0")) < pairs.index(("3.10", "6.0"))  # 3.9 before 3.10
    assert pairs.index(("3.13", "6.4")) < pairs.index(("3.13t", "6.4"))
    assert pairs.index(("3.14", "7.15")) < pairs.index(("3.10", "10.0"))  # 7.15 before 10.0


def test_python_tags_and_keys() -> None:
    assert [python_tag(p) for p in ("3.8", "3.10", "3.13t", "3.14t")] == ["cp38", "cp310", "cp313t", "cp314t"]
    assert python_sort_key("3.13t") == (3, 13, True)
    assert python_sort_key("3.9") == (3, 9, False)


def test_a_versions_default_targets_by_the_rocm_major_they_apply_from() -> None:
    pv = next(v for v in load_matrix().packages["fbgemm_gpu"].versions if v.version == "1.5.0")
    six, seven = pv.default_targets["6"], pv.default_targets["7"]
    assert pv.targets_for("6.4") == six and pv.targets_for("7.0") == seven
    assert pv.targets_for("10.1") == seven  # the highest major at or below 10
    assert pv.targets_for("5.7") == ()  # before the first major recorded
    assert pv.targets_for("cpu") == ()
    assert pv.torch_minor == ".".join(pv.torch.split(".")[:2])


def test_filters_take_one_string_or_many_split_at_commas_and_trimmed() -> None:
    m = load_matrix()
    apex = [b for b in m.builds if b.package.name == "apex"]
    assert m.select(packages="apex") == apex
    assert m.select(packages=" apex , ,") == apex
    assert m.select(packages=["apex", ""], rocm="6.0, 6.1", python=[" 3.8"]) == [
        b for b in apex if b.rocm.version in ("6.0", "6.1") and b.python == "3.8"]
    assert m.select() == list(m.builds)


def test_the_data_folder_comes_from_the_environment_unless_empty(monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from toolkit.core.errors import DataError
    from toolkit.data.matrix import DATA_DIR

    monkeypatch.setenv("TOOLKIT_DATA_DIR", "")
    assert data_dir() == DATA_DIR.resolve()
    monkeypatch.setenv("TOOLKIT_DATA_DIR", str(tmp_path / "rel" / ".."))
    assert data_dir() == tmp_path.resolve()
    missing = tmp_path / "nowhere"
    try:
        load_matrix(missing)
    except DataError as err:
        assert str(err) == f"{missing}: matrix data folder does not exist" and err.exit_code == 3
    else:  # pragma: no cover
        raise AssertionError("loaded a folder that does not exist")


def test_a_build_names_itself_and_its_torch_source() -> None:
    m = load_matrix()
    b = m.build("apex-1.9.0-cp314-rocm7.13")  # apex.toml: torch 2.9; rocm.toml: TheRock's on 7.13
    assert b.as_json() == {"id": "apex-1.9.0-cp314-rocm7.13", "package": "apex", "version": "1.9.0",
                           "python": "3.14", "rocm": "7.13", "torch": "2.9"}
    assert (b.cp_tag, b.session, b.version) == ("cp314", "build-3.14-rocm7.13", "1.9.0")
    src = b.torch_source
    assert (src.torch, src.rocm, src.kind) == ("2.9", "7.13", "therock")
    # TheRock's torch 2.9 on 7.13 lists Python 3.10-3.14: a source without a list serves any
    assert src.serves("3.14") and not src.serves("3.14t") and not src.serves("3.9")
    assert m.rocm["6.0"].torch["2.4"].python == () and m.rocm["6.0"].torch["2.4"].serves("3.8")
    assert "apex-1.9.0-cp314t-rocm7.13" not in {x.id for x in m.builds}  # 3.14t is not served


def test_gfx_tokens_expand_through_the_matrix_families() -> None:
    m = load_matrix()
    assert m.expand_gfx(["gfx90X-dcgpu", "gfx90a;gfx942"]) == ("gfx906", "gfx908", "gfx90a", "gfx942")
    assert m.expand_gfx(["gfx94X-all"]) == ("gfx942",)  # an alias
    assert m.expand_gfx(["gfx940"]) == ("gfx940",)  # an extra target (rocm-6 era), no family


def test_a_pairs_builds_and_each_way_to_ask_for_an_empty_one() -> None:
    import pytest

    from toolkit.core.errors import UsageError

    m = load_matrix()
    pair = [b for b in m.builds if (b.python, b.rocm.version) == ("3.12", "7.0")]
    assert {b.package.name for b in pair} == {"apex"}  # fbgemm_gpu 1.5.0 pairs 7.0 with 3.13 only
    assert m.pair_builds("3.12", "7.0") == pair
    assert m.pair_builds("3.12", "7.0", ["apex"]) == pair
    assert m.pair_builds("3.12", "7.0", "apex,fbgemm_gpu") == pair
    with pytest.raises(UsageError) as err:
        m.pair_builds("3.12", "7.0", ["fbgemm_gpu"])
    assert str(err.value) == ("package fbgemm_gpu has no build for Python 3.12 / ROCm 7.0; this pair "
                              "builds: apex")
    with pytest.raises(UsageError) as err:
        m.pair_builds("3.8", "7.0")
    pairs = ", ".join(f"{p}-rocm{r}" for p, r in m.pairs())
    assert pairs.startswith("3.8-rocm6.0, 3.9-rocm6.0, ")
    assert str(err.value) == (f"no package in the matrix builds for Python 3.8 / ROCm 7.0; "
                              f"valid pairs: {pairs}")
    with pytest.raises(UsageError) as err:
        m.pair_builds("3.12", "9.9")
    assert str(err.value).startswith("unknown ROCm version '9.9'; valid: 6.0, 6.1, 6.2, 6.2.4, 6.3, ")


def test_an_unknown_build_id_suggests_the_nearest_ids() -> None:
    """A one-character typo of a real id names that id first (it is the only id one edit
    away); the list is the nearest, not the first alphabetically, and holds at most 5."""
    import dataclasses

    import pytest

    from toolkit.core.errors import UsageError

    m = load_matrix()
    apex = [b for b in m.builds if b.package.name == "apex"]
    typo = "apx-1.8.0-cp312-rocm7.0"  # hand-made: apex-1.8.0-cp312-rocm7.0 without its 'e'
    with pytest.raises(UsageError) as err:
        m.build(typo)
    shown = err.value.message.split("; nearest: ")[1].split(", ")
    assert shown[0] == "apex-1.8.0-cp312-rocm7.0"
    assert len(shown) == 5 and shown != [b.id for b in apex[:5]]
    # a matrix of three ids: the two of the package, nearest first (1 character differs,
    # then 3); the other package's id is not near
    few = dataclasses.replace(m, builds=tuple(b for b in m.builds if b.id in {
        "apex-1.8.0-cp310-rocm6.4", "apex-1.8.0-cp312-rocm7.0", "fbgemm_gpu-1.2.0-cp312-rocm6.3"}))
    assert len(few.builds) == 3
    with pytest.raises(UsageError) as err:
        few.build("apex-1.8.0-cp312-rocm7.1")
    assert err.value.message == ("unknown build id 'apex-1.8.0-cp312-rocm7.1'; nearest: "
                                 "apex-1.8.0-cp312-rocm7.0, apex-1.8.0-cp310-rocm6.4")


def test_an_unknown_rocm_of_a_pair_is_named_with_the_valid_ones() -> None:
    m = load_matrix()
    with pytest.raises(UsageError) as err:
        m.pair_builds("3.12", "9.9")
    assert str(err.value).startswith("unknown ROCm version '9.9'; valid: ")
    assert "7.0" in str(err.value).split("valid: ")[1].split(", ")
