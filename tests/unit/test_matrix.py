from __future__ import annotations

import collections
import re
from pathlib import Path

import pytest
from packaging.version import Version

from toolkit.core.errors import DataError, UsageError
from toolkit.data.matrix import load_matrix, python_tag

SEED = ["1.4.0", "1.5.0", "1.6.0", "1.7.0", "1.8.0"]  # the Apex Internal CI seed table


def test_apex_seed_table_is_exactly_sixty_wheels() -> None:
    builds = load_matrix().select(packages=["apex"], versions=SEED)
    per_version = collections.Counter(b.version for b in builds)
    assert per_version == {"1.4.0": 10, "1.5.0": 8, "1.6.0": 12, "1.7.0": 18, "1.8.0": 12}
    assert len({b.id for b in builds}) == 60


@pytest.mark.parametrize(
    ("version", "torch", "rocm", "pythons"),
    [
        ("1.4.0", "2.4.0", {"6.0", "6.1"}, {"3.8", "3.9", "3.10", "3.11", "3.12"}),
        ("1.5.0", "2.5.0", {"6.1", "6.2"}, {"3.9", "3.10", "3.11", "3.12"}),
        ("1.6.0", "2.6.0", {"6.1", "6.2.4"}, {"3.9", "3.10", "3.11", "3.12", "3.13", "3.13t"}),
        ("1.7.0", "2.7.0", {"6.2.4", "6.3", "6.4"},
         {"3.9", "3.10", "3.11", "3.12", "3.13", "3.13t"}),
        ("1.8.0", "2.8", {"6.4", "7.0"}, {"3.9", "3.10", "3.11", "3.12", "3.13", "3.13t"}),
    ],
)
def test_apex_versions_match_seed(version: str, torch: str, rocm: set[str], pythons: set[str]) -> None:
    pv = next(v for v in load_matrix().packages["apex"].versions if v.version == version)
    assert pv.torch == torch
    assert set(pv.rocm) == rocm
    assert set(pv.python) == pythons
    assert pv.ref == f"release/{version}"


def test_fbgemm_build_styles_and_torch_pairs() -> None:
    versions = {v.version: v for v in load_matrix().packages["fbgemm_gpu"].versions}
    # _fbgemm_torch_compat_table, pytorch/FBGEMM@99a76f4ed (v1.8.0) fbgemm_gpu/fbgemm_gpu/__init__.py
    upstream = {"1.1": "2.6", "1.2": "2.7", "1.3": "2.8", "1.4": "2.9", "1.5": "2.10",
                "1.6": "2.11", "1.7": "2.12", "1.8": "2.13"}
    for version, v in versions.items():
        minor = ".".join(version.split(".")[:2])
        if minor in upstream:  # newer releases: the contract tests read upstream's table
            assert v.torch == upstream[minor], version
    assert {"1.1.0", "1.5.0", "1.8.0"} <= set(versions)
    assert versions["1.2.0"].build_style == "package-variant"
    assert versions["1.3.0"].build_style == "build-variant"
    assert set(versions["1.5.0"].rocm) == {"7.0", "7.1"}


def test_torch_sources_never_point_unpublished_pairs_at_upstream() -> None:
    # ROCM_ARCHES_DICT["release"] of pytorch/test-infra's generate_binary_build_matrix.py at the
    # commit that made each torch release stable (ac9a718ca 2.4, 5510fd052 2.5, b1bdc3323 2.6,
    # bad60f65d 2.7, 21480431a 2.8, f563b660a 2.9, e8208cf27 2.10, 0cd5e78a1 2.11,
    # 626d4e708 2.12, 6d36e31f4 2.13). Newer torch releases: the contract tests
    # (tests/upstream) read test-infra itself.
    upstream = {("2.4", "6.0"), ("2.4", "6.1"), ("2.5", "6.1"), ("2.5", "6.2"), ("2.6", "6.1"),
                ("2.6", "6.2.4"), ("2.7", "6.2.4"), ("2.7", "6.3"), ("2.8", "6.3"), ("2.8", "6.4"),
                ("2.9", "6.3"), ("2.9", "6.4"), ("2.10", "7.0"), ("2.10", "7.1"),
                ("2.11", "7.1"), ("2.11", "7.2"), ("2.12", "7.1"), ("2.12", "7.2"),
                ("2.13", "7.1"), ("2.13", "7.2")}
    known = {t for t, _ in upstream}
    for rel in load_matrix().rocm.values():
        for tv, src in rel.torch.items():
            if tv not in known and src.kind == "pytorch":
                continue
            if (tv, rel.version) in upstream:
                assert src.kind == "pytorch"
                assert src.index_url == f"https://download.pytorch.org/whl/rocm{rel.version}/"
            else:
                assert src.kind in {"amd", "therock"}, (tv, rel.version)
                assert "download.pytorch.org" not in (src.index_url or "")
                # AMD's own build says why upstream's is not used; TheRock's SDK releases
                # have only TheRock's torch
                assert src.note or (src.kind == "therock" and rel.sdk.provider == "pip")


def test_ids_and_tags() -> None:
    m = load_matrix()
    b = m.build("apex-1.8.0-cp313t-rocm7.0")
    assert (b.python, b.cp_tag, b.session) == ("3.13t", "cp313t", "build-3.13t-rocm7.0")
    assert python_tag("3.8") == "cp38"
    assert all(re.fullmatch(r"[a-z0-9_]+-[0-9.]+-cp3[0-9]+(t|-abi3)?-rocm[0-9.]+", x.id) for x in m.builds)


def test_pairs_include_and_exclude() -> None:
    pairs = load_matrix().pairs()
    assert ("3.12", "7.0") in pairs and ("3.8", "6.0") in pairs and ("3.13t", "6.4") in pairs
    assert ("3.8", "7.0") not in pairs


def test_select_filters_and_patterns() -> None:
    m = load_matrix()
    assert {b.id for b in m.select(packages=["apex"], rocm=["7.0"], python=["3.12"],
                                   versions=["1.8.0"])} == {"apex-1.8.0-cp312-rocm7.0"}
    assert {b.version for b in m.select(packages=["apex"], rocm=["7.0"])} >= {"1.8.0"}
    assert len(m.select(patterns=["apex-1.7.0-*-rocm6.4"])) == 6
    assert len(m.select(packages=[",".join(m.packages)])) == len(m.builds)
    assert len(m.select(packages=["apex,fbgemm_gpu"])) == len(m.select(packages=["apex"])) \
        + len(m.select(packages=["fbgemm_gpu"]))


@pytest.mark.parametrize(
    ("kwargs", "bad"),
    [({"packages": ["nope"]}, "nope"), ({"rocm": ["9.9"]}, "9.9"), ({"python": ["2.7"]}, "2.7")],
)
def test_select_unknown_values_name_the_valid_ones(kwargs: dict[str, list[str]], bad: str) -> None:
    with pytest.raises(UsageError) as exc:
        load_matrix().select(**kwargs)
    assert bad in str(exc.value) and "valid:" in str(exc.value)
    assert exc.value.exit_code == 2


def test_pair_without_package_is_an_error() -> None:
    with pytest.raises(UsageError, match="no package in the matrix builds for Python 3.8 / ROCm 7.0"):
        load_matrix().pair_builds("3.8", "7.0")
    with pytest.raises(UsageError, match="this pair builds: apex"):
        load_matrix().pair_builds("3.12", "7.0", ["fbgemm_gpu"])


def test_unknown_build_id() -> None:
    import shlex

    from toolkit.cli.main import build_parser

    m = load_matrix()
    with pytest.raises(UsageError, match="unknown build id 'apex-9.9.9-cp312-rocm7.0'") as err:
        m.build("apex-9.9.9-cp312-rocm7.0")
    # the nearest real ids (difflib), at most 5: every one a real id of the package
    shown = err.value.message.split("; nearest: ")[1].split(", ")
    assert 0 < len(shown) <= 5 and all(m.build(i).package.name == "apex" for i in shown)
    # the next step named is a command the CLI takes (invoke runs the same parser)
    assert err.value.hint is not None and err.value.hint.startswith("invoke matrix")
    args = build_parser().parse_args(shlex.split(err.value.hint.split(" lists ")[0])[1:])
    assert args.command == "matrix" and args.format == "json"
    with pytest.raises(UsageError) as err:
        m.build("zzz")
    assert "nearest" not in err.value.message  # nothing near: what an id looks like instead
    example = err.value.message.split("; ids look like ")[1]
    assert m.build(example).id == example


def test_matrix_is_frozen() -> None:
    m = load_matrix()
    with pytest.raises(TypeError):
        m.packages["x"] = m.packages["apex"]  # type: ignore[index]
    with pytest.raises(AttributeError):
        m.builds[0].python = "3.1"  # type: ignore[misc]


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))


@pytest.mark.parametrize(
    ("file", "old", "new", "expected"),
    [
        ("apex.toml", 'rocm = ["6.0", "6.1"]', 'rocm = ["6.0", "6.9"]',
         r"apex\.toml: versions\[0\]\.rocm: '6\.9' is not allowed; valid: 6\.0, 6\.1"),
        ("apex.toml", 'python = ["3.8",', 'python = ["2.7",',
         r"apex\.toml: versions\[0\]\.python: '2\.7' is not allowed; valid: 3\.8"),
        ("apex.toml", 'torch = "2.4.0"', 'torch = "2.99.0"',
         r"apex\.toml: versions\[0\]\.rocm: ROCm 6\.0 has no torch 2\.99 source"),
        ("apex.toml", 'version = "1.4.0"', 'version = "one"',
         r"apex\.toml: versions\[0\]\.version: 'one' does not look like X\.Y\[\.Z\]"),
        ("apex.toml", 'ref = "release/1.4.0"\n', "",
         r"apex\.toml: versions\[0\]\.ref: missing"),
        ("rocm.toml", 'provider = "system", version = "6.0.2"', 'provider = "conda", version = "6.0.2"',
         r"rocm\.toml: releases\.\"6\.0\"\.sdk\.provider: 'conda' is not allowed; valid: pip, system"),
        ("rocm.toml", 'default_family = "gfx90X-dcgpu"', 'default_family = "gfx999X"',
         r"rocm\.toml: releases\.\"6\.0\"\.default_family: 'gfx999X' is not allowed"),
        ("rocm.toml", "https://download.pytorch.org/whl/rocm6.0/", "http://example.com/whl/",
         r"rocm\.toml: .*index_url: 'http://example\.com/whl/' is not an allowed index URL"),
        ("rocm.toml",
         'index_url = "https://download.pytorch.org/whl/rocm6.1/", spec = "torch==2.4.0+rocm6.1"',
         'index_url = "https://download.pytorch.org/whl/rocm6.0/", spec = "torch==2.4.0+rocm6.1"',
         r"is not PyTorch's index for ROCm 6\.1"),
        ("gpus.toml", 'targets = ["gfx942"]', 'targets = ["sm_90"]',
         r"gpus\.toml: families\.\"gfx94X-dcgpu\"\.targets: 'sm_90' is not a gfx id"),
        ("apex.toml", "[[versions]]", "[[versions]\n",
         r"apex\.toml: not valid TOML"),
    ],
)
def test_malformed_data_names_file_key_and_allowed(
    data_copy: Path, file: str, old: str, new: str, expected: str
) -> None:
    _edit(data_copy / file, old, new)
    with pytest.raises(DataError) as exc:
        load_matrix(data_copy)
    assert re.search(expected, str(exc.value)), str(exc.value)
    assert exc.value.exit_code == 3


def test_data_dir_from_environment(data_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _edit(data_copy / "apex.toml", 'python = ["3.8", "3.9", "3.10", "3.11", "3.12"]', 'python = ["3.8"]')
    monkeypatch.setenv("TOOLKIT_DATA_DIR", str(data_copy))
    assert len(load_matrix().select(packages=["apex"], versions=["1.4.0"])) == 2


def test_every_source_and_version_carries_its_evidence() -> None:
    m = load_matrix()
    for rel in m.rocm.values():
        assert re.match(r"[\w.-]+/[\w.-]+@[0-9a-f]{7,} ", rel.sdk.evidence), rel.version
        for src in rel.torch.values():
            assert re.match(r"[\w.-]+/[\w.-]+@[0-9a-f]{7,} ", src.evidence), (rel.version, src.torch)
    for pkg in m.packages.values():
        for pv in pkg.versions:
            assert re.match(r"[\w.-]+/[\w.-]+@[0-9a-f]{8,40} ", pv.evidence), (pkg.name, pv.version)


def test_no_pip_sdk_for_releases_therock_never_published() -> None:
    """TheRock's version.json went 7.0.0 -> 7.9.0 (ROCm/TheRock@5994858fd): no 7.1 SDK."""
    m = load_matrix()
    assert m.rocm["7.1"].sdk.provider == "system"
    assert "never published a 7.1 pip SDK" in (m.rocm["7.1"].sdk.note or "")
    # TheRock's pip SDK versions (version.json history, ROCm/TheRock@89553ce37): 6.4.0 and
    # 6.5.0 (early nightlies, never a release), 7.0.0, then 7.9.0: no release below 7.0 nor
    # between 7.0 and 7.9 has one (stated without the list of releases after 7.9, so a new
    # release changes nothing here; a pip SDK for 6.4 or 7.1-7.8 fails)
    pip = [Version(v) for v, r in m.rocm.items() if r.sdk.provider == "pip"]
    assert pip and all(v >= Version("7.0") for v in pip)
    assert not [v for v in pip if Version("7.0") < v < Version("7.9")]


def test_torch_28_on_rocm_70_is_not_therocks() -> None:
    """TheRock's index gained torch 2.8 only with SDK 7.10 (ROCm/TheRock@9dea1bd03)."""
    src = load_matrix().rocm["7.0"].torch["2.8"]
    assert src.kind == "amd" and "rocm.nightlies.amd.com" not in (src.index_url or "")
    assert src.find_links == "https://repo.radeon.com/rocm/manylinux/rocm-rel-7.0/"
    assert "9dea1bd03" in src.evidence


def test_rocm_70_families_are_those_of_its_era() -> None:
    rel = load_matrix().rocm["7.0"]
    assert rel.families["gfx110X-dgpu"] == ("gfx1100", "gfx1101", "gfx1102")  # no gfx1103
    assert set(rel.families) == {"gfx94X-dcgpu", "gfx950-dcgpu", "gfx110X-dgpu", "gfx1151",
                                 "gfx120X-all"}
    assert "de9728b3d" in rel.families_evidence


def test_fbgemm_default_targets_follow_upstream_build_script() -> None:
    versions = {v.version: v for v in load_matrix().packages["fbgemm_gpu"].versions}
    assert versions["1.3.0"].targets_for("6.4") == ("gfx908", "gfx90a", "gfx942")
    assert versions["1.5.0"].targets_for("7.0") == ("gfx908", "gfx90a", "gfx942", "gfx950")
    assert versions["1.5.0"].targets_for("6.4") == ("gfx908", "gfx90a", "gfx942")
    assert not load_matrix().packages["apex"].versions[0].default_targets


def test_families_only_for_a_per_family_pip_sdk(data_copy: Path) -> None:
    _edit(data_copy / "rocm.toml", '[releases."7.1"]\n', '[releases."7.1"]\nfamilies = { evidence = '
          '"x/y@1234567 f", served = { "gfx94X-dcgpu" = ["gfx942"] } }\n')
    with pytest.raises(DataError, match=r'releases\."7\.1"\.families: lists the families of a '
                       "per-family SDK index"):
        load_matrix(data_copy)
    _edit(data_copy / "rocm.toml", 'served."gfx94X-dcgpu" = ["gfx942"]\n', "")
    with pytest.raises(DataError, match=r"'gfx94X-dcgpu' is not one of the families this release's "
                       "index served"):
        load_matrix(data_copy)


def test_explain_names_the_evidence_of_each_fact(capsys: pytest.CaptureFixture[str]) -> None:
    from toolkit.cli.commands.matrix import explain
    from toolkit.cli.main import main

    rows = explain("apex-1.8.0-cp312-rocm7.0")
    facts = {fact for fact, _, _ in rows if fact}
    assert {"package", "rocm sdk", "torch", "targets", "families", "build", "wheel"} <= facts
    for fact, _value, why in rows:
        assert why.startswith(("evidence: ", "note: ")), (fact, why)
    evidence = " ".join(why for _, _, why in rows)
    for sha in ("ROCm/apex@102ee921", "ROCm/TheRock@ce80990fd", "pytorch/test-infra@21480431a",
                "ROCm/TheRock@9dea1bd03", "ROCm/TheRock@de9728b3d", "ROCR-Runtime"):
        assert sha in evidence, sha
    assert main(["matrix", "--explain", "apex-1.8.0-cp312-rocm7.0"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("apex-1.8.0-cp312-rocm7.0\n") and "repo.radeon.com" in out
    assert main(["matrix", "--explain", "apex-9.9.9-cp312-rocm7.0"]) == 2


def test_explain_says_when_the_seed_table_fixes_a_versions_pairs() -> None:
    """README: apex.toml holds "the seed table (1.4.0-1.8.0, 60 wheels)", then versions as
    upstream states them. ``--explain`` of a seed-table build has a "seed table" fact, in
    lower case like every other fact it names; a version past the table has none."""
    from toolkit.cli.commands.matrix import explain

    seed = {fact: (value, why) for fact, value, why in explain("apex-1.8.0-cp312-rocm7.0") if fact}
    assert "seed table" in seed and seed["seed table"][1].startswith("evidence: ")
    # what the table fixes for a seed version: its torch and ROCm pairs, by the Apex wheel CI
    assert seed["seed table"][0].startswith("torch and ROCm pairs fixed by "), seed["seed table"]
    assert seed["seed table"][0].endswith("the Apex wheel CI's seed table"), seed["seed table"]
    later = {fact for fact, _, _ in explain("apex-1.11.0-cp312-rocm7.14")}
    assert "seed table" not in later and not any("seed" in fact.lower() for fact in later)


def test_table_says_why_a_system_install_or_amds_torch(capsys: pytest.CaptureFixture[str]) -> None:
    from toolkit.cli.commands.matrix import source_notes

    lines = source_notes(load_matrix().select(rocm=["7.1", "7.0"]))
    assert any(line.startswith("ROCm 7.1: system install: TheRock never published") for line in lines)
    assert any(line.startswith("  torch 2.8: amd build: upstream published torch 2.8") for line in lines)


def test_select_names_what_was_unknown_and_every_valid_value_in_order() -> None:
    import tomllib
    from packaging.version import Version

    from toolkit.data.matrix import data_dir

    m = load_matrix()
    releases = list(tomllib.loads((data_dir() / "rocm.toml").read_text())["releases"])
    by_version = sorted(releases, key=Version)  # PEP 440 order: 6.2 < 6.2.4 < 7.15 < 10.0
    assert by_version != sorted(releases)  # "10.0" sorts before "6.0" as text
    cases = {
        "package": ({"packages": ["apex,nope"]}, "nope", sorted(m.packages)),
        "ROCm version": ({"rocm": ["7.0", "5.7"]}, "5.7", by_version),
    }
    for what, (kwargs, value, valid) in cases.items():
        with pytest.raises(UsageError) as err:
            m.select(**kwargs)
        assert err.value.message == f"unknown {what} '{value}'; valid: {', '.join(valid)}"
    with pytest.raises(UsageError) as err:
        m.select(python=["2.7"])
    pythons = err.value.message.split("; valid: ")[1].split(", ")
    assert err.value.message.startswith("unknown Python version '2.7'; valid: ")
    assert pythons == sorted(pythons, key=lambda p: (Version(p.rstrip("t")), p.endswith("t")))
    assert pythons.index("3.9") < pythons.index("3.10")  # by version, not as text
    # a version no build has: the versions of the packages asked for, nothing else
    with pytest.raises(UsageError) as err:
        m.select(packages=["fbgemm_gpu"], versions=["9.9.9", "9.9.8"])
    fbgemm = sorted(v["version"] for v in tomllib.loads(
        (data_dir() / "fbgemm_gpu.toml").read_text())["versions"])
    assert err.value.message == f"unknown package version '9.9.9,9.9.8'; valid: {', '.join(fbgemm)}"
    # patterns match whole build ids, shell-style (fnmatch), case-sensitively
    ids = {b.id for b in m.select(patterns=["apex-1.8.0-cp31[23]-rocm7.0"])}
    assert ids == {"apex-1.8.0-cp312-rocm7.0", "apex-1.8.0-cp313-rocm7.0"}
    assert m.select(patterns=["APEX-*"]) == []
