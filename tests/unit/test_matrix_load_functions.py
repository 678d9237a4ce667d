"""The matrix loaders pinned whole (issue 19, part 8): ``_load_rocm`` and ``_load_package``
(toolkit.data.matrix) read every field of rocm.toml and the package files, and every rule
across entries fails with its own message naming the file, the key and what is valid (exit 3).

Every load here is of a fresh copy of the data (the ``data_copy`` fixture, a new folder), so
the loaders run in each test instead of answering from ``load_matrix``'s per-folder cache.
The truths: the data files read with tomllib, the TOML spec, and messages worked out by hand.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.data import edit
from toolkit.core.errors import DataError
from toolkit.data.ci import load_ci
from toolkit.data.matrix import Matrix, forget_loaded, load_matrix
from toolkit.plan.recipes import load_matrix as load_checked_matrix
from toolkit.plan.recipes.fbgemm_gpu import tbb_source

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

REL_70 = '[releases."7.0"]\ngpus = "therock-7.0"\nhip = "7.0"\ndefault_family = "gfx94X-dcgpu"'


def _raw(data: Path, name: str) -> dict[str, Any]:
    doc: dict[str, Any] = tomllib.loads((data / name).read_text())
    return doc


def _error(data: Path) -> str:
    with pytest.raises(DataError) as info:
        load_matrix(data)
    assert info.value.exit_code == 3
    msg = str(info.value)
    assert "\n" not in msg
    return msg


# ----------------------------------------------------------------------------- rocm.toml
# rocm.toml's header: a released line installs from its stable channel, a release or BKC
# branch from its prerelease channel, a nightly-only line from its nightly channel
DEFAULT_BY_STATUS = {"released": "stable", "branch": "prerelease", "bkc": "prerelease",
                     "nightly-only": "nightly"}
CHANNEL_ORDER = ["stable", "prerelease", "nightly", "dev"]


def _next_minor(version: str) -> str:
    major, minor = version.split(".")[:2]
    return f"{major}.{int(minor) + 1}"


def test_every_rocm_release_is_loaded_as_written(data_copy: Path) -> None:
    m = load_matrix(data_copy)
    raw = _raw(data_copy, "rocm.toml")
    gpus = _raw(data_copy, "gpus.toml")
    assert list(m.rocm) == list(raw["releases"])  # every release, in the file's order
    multi = lines = 0
    for version, r in raw["releases"].items():
        rel = m.rocm[version]
        assert (rel.version, rel.hip, rel.default_family) == (version, r["hip"], r["default_family"])
        assert rel.era is not None and rel.era is m.eras[r["gpus"]]
        assert (rel.era.name, rel.era.targets) == (r["gpus"], tuple(gpus["eras"][r["gpus"]]["targets"]))
        s, sdk = r["sdk"], rel.sdk
        assert (sdk.provider, sdk.note, sdk.evidence, sdk.layout, sdk.legacy, sdk.version) == (
            s["provider"], s.get("note"), s["evidence"], s.get("layout"), s.get("legacy", False),
            s.get("version")), version
        line = r.get("line")
        if line:
            lines += 1
            assert rel.line is not None
            assert (rel.line.status, rel.line.ref, rel.line.version, rel.line.evidence) == (
                line["status"], line["ref"], line["version"], line["evidence"])
        else:
            assert rel.line is None
        chans = {k: v for k, v in r.get("channels", {}).items() if k != "evidence"}
        assert all(url.endswith("/") for url in chans.values())  # as written: nothing to add
        assert dict(sdk.channels) == chans, version
        assert sdk.channels_evidence == r.get("channels", {}).get("evidence", "")
        default = (DEFAULT_BY_STATUS[line["status"]] if line
                   else next((c for c in CHANNEL_ORDER if c in chans), None))
        assert sdk.default_channel == default, version
        if chans:
            low = line["version"] if line else f"{version}.0"
            pre = "" if default == "stable" else "a0"
            assert (sdk.index_url, sdk.spec) == (
                chans[default], f"rocm[libraries,devel]>1.0,>={low}{pre},<{_next_minor(version)}")
        else:
            assert (sdk.index_url, sdk.spec) == (None, None)
        assert list(rel.torch) == list(r["torch"])
        for tv, t in r["torch"].items():
            src = rel.torch[tv]
            # TheRock's torch on a multi-arch index comes as a host wheel plus device packages
            # (rocm.toml's header), from the SDK's channel (no index of its own)
            therock_multi = t["kind"] == "therock" and s.get("layout") == "multi-arch"
            multi += therock_multi
            assert (src.torch, src.rocm, src.kind, src.spec, src.index_url, src.find_links,
                    src.note, src.evidence, src.python, src.device_extras, src.per_family) == (
                tv, version, t["kind"], t["spec"], t.get("index_url"), t.get("find_links"),
                t.get("note"), t["evidence"], tuple(t.get("python", ())), therock_multi,
                False), (version, tv)
        if "families" in r:
            assert {k: list(v) for k, v in rel.families.items()} == r["families"]["served"]
            assert rel.families_evidence == r["families"]["evidence"]
        else:
            assert (dict(rel.families), rel.families_evidence) == ({}, "")
    assert multi and lines  # TheRock's multi-arch torch and release lines are in the data


def test_a_therock_torch_on_a_per_family_index_is_per_family(data_copy: Path) -> None:
    rocm = data_copy / "rocm.toml"
    edit(rocm, 'torch."2.10" = { kind = "pytorch", index_url = "https://download.pytorch.org/whl/rocm7.0/"',
         'torch."2.9" = { kind = "therock", spec = "torch>=2.9,<2.10", '
         'evidence = "ROCm/TheRock@ce80990fd x" }\n'
         'torch."2.10" = { kind = "pytorch", index_url = "https://download.pytorch.org/whl/rocm7.0/"')
    src = load_matrix(data_copy).rocm["7.0"].torch["2.9"]
    # no index of its own: the channel's (and <family>/ under it)
    assert (src.kind, src.index_url, src.per_family, src.device_extras, src.python, src.note) == (
        "therock", None, True, False, (), None)


def test_a_therock_torch_needs_the_releases_channels(data_copy: Path) -> None:
    rocm = data_copy / "rocm.toml"
    edit(rocm, 'torch."2.8" = { kind = "pytorch", '
         'index_url = "https://download.pytorch.org/whl/rocm6.4/", spec',
         'torch."2.8" = { kind = "therock", spec')
    assert _error(data_copy) == (
        f'{rocm}: releases."6.4".torch."2.8": TheRock\'s torch installs from the release\'s '
        "channels, and this release has none (add channels and sdk.layout)")


def test_a_pip_sdk_needs_channels_and_a_layout_needs_them_too(data_copy: Path) -> None:
    rocm = data_copy / "rocm.toml"
    text = rocm.read_text()
    start = text.index('channels = { stable = "https://repo.amd.com/rocm/whl/", prerelease')
    end = text.index("\n", start) + 1
    rocm.write_text(text[:start] + text[end:])  # 7.14 without its channels
    assert _error(data_copy) == (
        f'{rocm}: releases."7.14".line: a TheRock release line needs its channels (channels = '
        '{ stable | prerelease | nightly | dev = "https://...", evidence = ... })')
    rocm.write_text(text)
    edit(rocm, 'provider = "system", version = "6.4.3"',
         'provider = "system", version = "6.4.3", layout = "multi-arch"')
    forget_loaded()
    assert _error(data_copy) == (
        f'{rocm}: releases."6.4".channels: pip channels and the pip SDK\'s layout go together: '
        "give both (a system release that TheRock also published) or neither")


def test_urls_written_without_a_trailing_slash_get_one(data_copy: Path) -> None:
    rocm = data_copy / "rocm.toml"
    edit(rocm, 'channels = { stable = "https://repo.amd.com/rocm/whl/", prerelease',
         'channels = { stable = "https://repo.amd.com/rocm/whl", prerelease')
    edit(rocm, '"https://repo.radeon.com/rocm/manylinux/rocm-rel-6.3/"',
         '"https://repo.radeon.com/rocm/manylinux/rocm-rel-6.3"')
    edit(rocm, '"https://download.pytorch.org/whl/rocm6.0/"', '"https://download.pytorch.org/whl/rocm6.0"')
    m = load_matrix(data_copy)
    assert m.rocm["7.14"].sdk.channels["stable"] == "https://repo.amd.com/rocm/whl/"
    assert m.rocm["7.14"].sdk.index_url == "https://repo.amd.com/rocm/whl/"
    assert m.rocm["6.3"].torch["2.6"].find_links == "https://repo.radeon.com/rocm/manylinux/rocm-rel-6.3/"
    assert m.rocm["6.3"].torch["2.6"].index_url is None
    assert m.rocm["6.0"].torch["2.4"].index_url == "https://download.pytorch.org/whl/rocm6.0/"


def test_a_multi_arch_sdk_takes_no_legacy_but_may_say_false(data_copy: Path) -> None:
    rocm = data_copy / "rocm.toml"
    sdk = 'provider = "pip", layout = "multi-arch", evidence = "ROCm/TheRock@6d2136cd1'
    edit(rocm, sdk, sdk.replace('layout = "multi-arch",', 'layout = "multi-arch", legacy = false,'))
    sdk_13 = load_matrix(data_copy).rocm["7.13"].sdk
    assert (sdk_13.layout, sdk_13.legacy) == ("multi-arch", False)
    edit(rocm, 'layout = "multi-arch", legacy = false,', 'layout = "multi-arch", legacy = true,')
    forget_loaded()  # the same folder again
    assert _error(data_copy) == (
        f'{rocm}: releases."7.13".sdk.legacy: TheRock\'s per-family releases are legacy and its '
        "multi-arch ones are not: per-family needs legacy = true, multi-arch takes no legacy "
        "(ROCm/TheRock docs/packaging/legacy_per_family_releases.md)")


def test_a_default_family_the_per_family_index_did_not_serve_names_those_it_did(data_copy: Path) -> None:
    rocm = data_copy / "rocm.toml"
    edit(rocm, REL_70, REL_70.replace('default_family = "gfx94X-dcgpu"', 'default_family = "gfx90a"'))
    served = list(_raw(data_copy, "rocm.toml")["releases"]["7.0"]["families"]["served"])
    assert served == ["gfx94X-dcgpu", "gfx950-dcgpu", "gfx110X-dgpu", "gfx1151", "gfx120X-all"]
    assert _error(data_copy) == (
        f"{rocm}: releases.\"7.0\".default_family: 'gfx90a' is not one of the families this "
        f"release's index served; valid: {', '.join(served)}")


def test_a_served_default_family_is_judged_by_what_was_served_not_by_the_era(data_copy: Path) -> None:
    """gfx1250 is no target of the therock-7.0 era (gpus.toml): a release whose index says it
    served gfx125X-dcgpu takes it as default family all the same (the index is the truth)."""
    rocm = data_copy / "rocm.toml"
    assert "gfx1250" not in _raw(data_copy, "gpus.toml")["eras"]["therock-7.0"]["targets"]
    edit(rocm, REL_70, REL_70.replace('default_family = "gfx94X-dcgpu"', 'default_family = "gfx125X-dcgpu"'))
    edit(rocm, 'served."gfx1151" = ["gfx1151"]',
         'served."gfx1151" = ["gfx1151"]\nserved."gfx125X-dcgpu" = ["gfx1250"]')
    rel = load_matrix(data_copy).rocm["7.0"]
    assert (rel.default_family, rel.families["gfx125X-dcgpu"]) == ("gfx125X-dcgpu", ("gfx1250",))


def test_a_default_family_outside_the_era_is_named_with_the_eras_targets(data_copy: Path) -> None:
    rocm = data_copy / "rocm.toml"
    head = '[releases."6.4"]\ngpus = "rocm-6"\nhip = "6.4"\ndefault_family = "gfx94X-dcgpu"'
    edit(rocm, head, head.replace("gfx94X-dcgpu", "gfx950-all"))  # gfx950-dcgpu's alias
    era = _raw(data_copy, "gpus.toml")["eras"]["rocm-6"]["targets"]
    assert _error(data_copy) == (f"{rocm}: releases.\"6.4\".default_family: 'gfx950-all' has no "
                                 f"member in the rocm-6 era's targets ({', '.join(era)})")


def test_pytorchs_index_must_be_the_releases_own(data_copy: Path) -> None:
    rocm = data_copy / "rocm.toml"
    edit(rocm, 'index_url = "https://download.pytorch.org/whl/rocm6.1/", spec = "torch==2.4.0+rocm6.1"',
         'index_url = "https://download.pytorch.org/whl/rocm6.0", spec = "torch==2.4.0+rocm6.1"')
    assert _error(data_copy) == (
        f'{rocm}: releases."6.1".torch."2.4".index_url: https://download.pytorch.org/whl/rocm6.0/ '
        "is not PyTorch's index for ROCm 6.1 (expected .../rocm6.1/)")


def test_a_mirror_of_pytorchs_index_is_not_held_to_its_paths(data_copy: Path) -> None:
    rocm = data_copy / "rocm.toml"
    edit(rocm, 'index_url = "https://download.pytorch.org/whl/rocm6.1/", spec = "torch==2.4.0+rocm6.1"',
         'index_url = "https://mirror.example/pytorch/whl/", spec = "torch==2.4.0+rocm6.1"')
    assert load_matrix(data_copy).rocm["6.1"].torch["2.4"].index_url == "https://mirror.example/pytorch/whl/"


# ----------------------------------------------------------------------------- package files
def test_a_package_copy_is_loaded_field_by_field(data_copy: Path) -> None:
    """Against the file read with tomllib, on a fresh load (the optional fields included)."""
    m = load_matrix(data_copy)
    for name in ("apex", "fbgemm_gpu"):
        raw = _raw(data_copy, f"{name}.toml")
        pkg = m.packages[name]
        head = raw["package"]
        assert (pkg.name, pkg.dist, pkg.repo, pkg.recipe, pkg.subdir) == (
            head["name"], head["dist"], head["repo"], head["recipe"], head.get("subdir", ""))
        assert len(pkg.versions) == len(raw["versions"])
        for pv, rv in zip(pkg.versions, raw["versions"], strict=True):
            assert (pv.package, pv.version, pv.ref, pv.torch, pv.rocm, pv.python, pv.build_style,
                    pv.evidence) == (name, rv["version"], rv["ref"], rv["torch"], tuple(rv["rocm"]),
                                     tuple(rv["python"]), rv["build_style"], rv["evidence"])
            assert dict(pv.default_targets) == {k: tuple(v) for k, v in rv.get("default_targets", {}).items()}
            assert dict(pv.submodules) == rv.get("submodules", {})
            tbb = rv.get("tbb")
            got = tbb_source(pv)
            assert (got and (got.provider, got.spec)) == (tbb and (tbb["provider"], tbb.get("spec")))
            assert pv.build_requires == ()
    tbbs = [tbb_source(v) for v in m.packages["fbgemm_gpu"].versions if tbb_source(v)]
    assert tbbs and all(t.provider == "pypi" and t.spec for t in tbbs)


def test_a_system_tbb_has_no_spec_and_a_subdir_is_read(data_copy: Path) -> None:
    fb = data_copy / "fbgemm_gpu.toml"
    text = fb.read_text()
    start = text.index('tbb = { provider = "pypi"')
    end = text.index("}", start) + 1
    fb.write_text(text[:start] + 'tbb = { provider = "system" }' + text[end:])
    edit(data_copy / "apex.toml", "[package]\n", '[package]\nsubdir = "csrc"\n')
    m = load_matrix(data_copy)
    tbb = [tbb_source(v) for v in m.packages["fbgemm_gpu"].versions if tbb_source(v)]
    assert (tbb[0].provider, tbb[0].spec) == ("system", None)
    assert (m.packages["apex"].subdir, m.packages["fbgemm_gpu"].subdir) == ("csrc", "fbgemm_gpu")


def test_a_version_listed_twice_is_named(data_copy: Path) -> None:
    apex = data_copy / "apex.toml"
    edit(apex, 'version = "1.5.0"', 'version = "1.4.0"')
    assert _error(data_copy) == f"{apex}: versions[1].version: 1.4.0 is listed twice"


def test_a_release_without_the_versions_torch_names_those_it_has(data_copy: Path) -> None:
    apex = data_copy / "apex.toml"
    edit(apex, 'torch = "2.5.0"', 'torch = "2.6.0"')  # apex 1.5.0: ROCm 6.1 and 6.2
    have = list(_raw(data_copy, "rocm.toml")["releases"]["6.2"]["torch"])
    assert have == ["2.5"]
    # 6.1 publishes torch 2.6 (rocm.toml), 6.2 does not
    assert _error(data_copy) == (f"{apex}: versions[1].rocm: ROCm 6.2 has no torch 2.6 source in "
                                 "rocm.toml; it has: 2.5")


def test_a_release_with_no_torch_at_all_says_none(data_copy: Path) -> None:
    rocm = data_copy / "rocm.toml"
    text = rocm.read_text()
    line = ('torch."2.5" = { kind = "pytorch", index_url = "https://download.pytorch.org/whl/rocm6.2/"')
    start = text.index(line)
    end = text.index("\n", start)
    rocm.write_text(text[:start] + "torch = {}" + text[end:])
    assert _error(data_copy) == (f"{data_copy / 'apex.toml'}: versions[1].rocm: ROCm 6.2 has no "
                                 "torch 2.5 source in rocm.toml; it has: none")


def test_a_version_sharing_one_python_with_the_torch_source_is_kept(data_copy: Path) -> None:
    """apex 1.9.0 on ROCm 7.13: TheRock's torch 2.9 serves Python 3.10-3.14; a version with
    3.9 and 3.12 loads, and builds only 3.12 there."""
    edit(data_copy / "apex.toml", 'python = ["3.10", "3.11", "3.12", "3.13", "3.14", "3.14t"]',
         'python = ["3.9", "3.12"]')
    m: Matrix = load_matrix(data_copy)
    pv = next(v for v in m.packages["apex"].versions if v.version == "1.9.0")
    assert pv.python == ("3.9", "3.12")
    assert "7.13" in pv.rocm
    assert {b.python for b in m.builds if b.pkg_version is pv and b.rocm.version == "7.13"} == {"3.12"}


# ----------------------------------------------------------------------------- gpus.toml
def test_every_family_and_era_is_loaded_as_written(data_copy: Path) -> None:
    from toolkit.data.gpus import family_names, load_gpus

    raw = _raw(data_copy, "gpus.toml")
    families, eras = load_gpus(data_copy / "gpus.toml")
    assert list(families) == list(raw["families"])
    for name, f in raw["families"].items():
        fam = families[name]
        assert (fam.name, fam.targets, fam.aliases) == (
            name, tuple(f["targets"]), tuple(f.get("aliases", ())))
    assert list(eras) == list(raw["eras"])
    for name, e in raw["eras"].items():
        era = eras[name]
        assert (era.name, era.targets, era.extra_targets, era.evidence) == (
            name, tuple(e["targets"]), tuple(e.get("extra_targets", ())), e["evidence"])
        assert era.all_targets == tuple(e["targets"]) + tuple(e.get("extra_targets", ()))
    names = [n for name, f in raw["families"].items() for n in (name, *f.get("aliases", ()))]
    assert family_names(families) == sorted(names) and len(set(names)) == len(names)
    edit(data_copy / "gpus.toml", 'extra_targets = ["gfx1013"]\n', "")  # optional: none
    assert load_gpus(data_copy / "gpus.toml")[1]["rocm-6"].extra_targets == ()


def test_a_name_defined_twice_names_the_family_and_the_name(data_copy: Path) -> None:
    gpus = data_copy / "gpus.toml"
    from toolkit.data.gpus import load_gpus

    edit(gpus, 'aliases = ["gfx950-all"]', 'aliases = ["gfx950-all", "gfx950-all"]')
    with pytest.raises(DataError) as err:
        load_gpus(gpus)
    assert str(err.value) == (
        f"{gpus}: families.\"gfx950-dcgpu\".aliases: duplicate entries in ['gfx950-all', 'gfx950-all']")
    edit(gpus, 'aliases = ["gfx950-all", "gfx950-all"]', 'aliases = ["gfx950-dcgpu"]')  # its own name
    with pytest.raises(DataError) as err:
        load_gpus(gpus)
    assert str(err.value) == f"{gpus}: families.\"gfx950-dcgpu\": family name 'gfx950-dcgpu' is defined twice"
    edit(gpus, 'aliases = ["gfx950-dcgpu"]', 'aliases = ["gfx90a"]')  # another family's name, defined later
    with pytest.raises(DataError) as err:
        load_gpus(gpus)
    assert str(err.value) == f"{gpus}: families.\"gfx90a\": family name 'gfx90a' is defined twice"


def test_targets_in_both_lists_of_an_era_are_all_named_sorted(data_copy: Path) -> None:
    from toolkit.data.gpus import load_gpus

    gpus = data_copy / "gpus.toml"
    edit(gpus, 'extra_targets = ["gfx1013"]', 'extra_targets = ["gfx1013", "gfx942", "gfx1151", "gfx906"]')
    with pytest.raises(DataError) as err:
        load_gpus(gpus)
    assert str(err.value) == (f'{gpus}: eras."rocm-6".extra_targets: gfx1151, gfx906, gfx942 also in '
                              "targets (extra targets are the ones no family lists)")


# ----------------------------------------------------------------------------- specs' checks
def test_an_index_url_must_be_https_file_or_loopback_http(data_copy: Path) -> None:
    from toolkit.data.specs import _index_url

    assert _index_url("https://download.pytorch.org/whl/rocm6.0/") is None
    assert _index_url("file:///srv/wheels/") is None
    assert _index_url("http://127.0.0.1:8080/simple/") is None
    assert _index_url("http://localhost/simple/") is None
    refusal = ("is not an allowed index URL; valid: https://..., file://..., or http:// on "
               "127.0.0.1/localhost")
    for bad in ("http://example.com/whl/", "ftp://example.com/", "example.com/whl/"):
        assert _index_url(bad) == refusal, bad
    rocm = data_copy / "rocm.toml"
    edit(rocm, '"https://download.pytorch.org/whl/rocm6.0/"', '"http://example.com/whl/"')
    assert _error(data_copy) == (
        f"{rocm}: releases.\"6.0\".torch.\"2.4\".index_url: 'http://example.com/whl/' {refusal}")


def test_a_gfx_id_is_a_processor_with_optional_features(data_copy: Path) -> None:
    from toolkit.data.specs import _gfx_id

    for good in ("gfx90a", "gfx1201", "gfx942:xnack+", "gfx90a:sramecc-:xnack+"):
        assert _gfx_id(good) is None, good
    for bad in ("sm_90", "gfx", "gfx90a:xnack", "GFX90A", "gfx90a:xnack+:xnack-"):
        assert _gfx_id(bad) == "is not a gfx id like gfx90a", bad
    gpus = data_copy / "gpus.toml"
    edit(gpus, 'targets = ["gfx942"]', 'targets = ["sm_90"]')
    assert _error(data_copy) == (
        f"{gpus}: families.\"gfx94X-dcgpu\".targets: 'sm_90' is not a gfx id like gfx90a")


@pytest.mark.parametrize("again", ["1.4", "01.4.0", "1.4.00", "1.04"])
def test_a_version_equal_by_pep_440_is_listed_twice(data_copy: Path, again: str) -> None:
    """PEP 440 pads release segments with zeros and reads them as integers: 1.4 is 1.4.0, and so
    are 01.4.0 and 1.04 (packaging.version.Version says the same)."""
    from packaging.version import Version

    assert Version(again) == Version("1.4.0")
    apex = data_copy / "apex.toml"
    edit(apex, 'version = "1.5.0"', f'version = "{again}"')  # versions[1], after 1.4.0
    assert _error(data_copy) == (f"{apex}: versions[1].version: {again} is listed twice (as 1.4.0: "
                                 "the same version by PEP 440)")


def _data_error(data: Path) -> str:
    with pytest.raises(DataError) as info:
        load_ci(load_checked_matrix(data))
    return str(info.value)


def test_a_per_family_sdk_without_legacy_reads_the_whole_rule(data_copy: Path) -> None:
    edit(data_copy / "rocm.toml", 'layout = "per-family", legacy = true,', 'layout = "per-family",')
    assert _data_error(data_copy).endswith(
        "TheRock's per-family releases are legacy and its multi-arch ones are not: per-family "
        "needs legacy = true, multi-arch takes no legacy "
        "(ROCm/TheRock docs/packaging/legacy_per_family_releases.md)")


def test_a_version_whose_pythons_torch_is_not_published_for_is_refused(data_copy: Path) -> None:
    # apex 1.9.0 (versions[5]) pairs torch 2.9 with ROCm 7.13, whose rocm.toml entry is
    # published for Python 3.10-3.14: give the version Python 3.9 only
    edit(data_copy / "apex.toml",
          'python = ["3.10", "3.11", "3.12", "3.13", "3.14", "3.14t"]', 'python = ["3.9"]')
    assert _data_error(data_copy).endswith(
        "apex.toml: versions[5].rocm: ROCm 7.13's torch 2.9 is published for Python "
        "3.10, 3.11, 3.12, 3.13, 3.14 only, none of this version's")


def test_a_default_family_may_be_named_by_its_alias(data_copy: Path) -> None:
    # gpus.toml: gfx94X-all is an alias of the gfx94X-dcgpu family
    edit(data_copy / "rocm.toml", 'hip = "6.1"\ndefault_family = "gfx94X-dcgpu"',
          'hip = "6.1"\ndefault_family = "gfx94X-all"')
    assert load_checked_matrix(data_copy).rocm["6.1"].default_family == "gfx94X-all"
