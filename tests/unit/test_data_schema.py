"""Strict data files: every table rejects unknown keys, wrong types, missing keys and values
outside its closed set, with one line naming the file, the key path and what is allowed."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from tests.fixtures.data import edit
from toolkit.core.errors import DataError
from toolkit.data.ci import load_ci
from toolkit.plan.recipes import load_matrix

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from toolkit.data.schema import Array, Map, Ref, Table, Tagged, Text, Texts, check


def _error(data: Path) -> str:
    """The DataError message of loading ``data`` (matrix, then CI rules), checked for shape."""
    with pytest.raises(DataError) as info:
        load_ci(load_matrix(data))
    msg = str(info.value)
    assert info.value.exit_code == 3
    assert "\n" not in msg, "one line"
    assert msg.startswith(str(data) + "/"), f"names the file with its folder: {msg}"
    return msg


# ----------------------------------------------------------------------------- closed sets
ENUMS = [
    # (file, old, new, key path, allowed values as the message must list them); the bad value
    # is the one quoted string of ``new`` that ``old`` lacks
    ("apex.toml", 'build_style = "jit-prebuild"', 'build_style = "jit-prebuilt"',
     "versions[4].build_style", "ext-flags, jit-prebuild"),
    ("apex.toml", 'build_style = "ext-flags"', 'build_style = "build-variant"',
     "versions[0].build_style", "ext-flags, jit-prebuild"),
    ("fbgemm_gpu.toml", 'build_style = "package-variant"', 'build_style = "ext-flags"',
     "versions[0].build_style", "package-variant, build-variant"),
    ("apex.toml", 'recipe = "apex"', 'recipe = "apex2"', "package.recipe", "apex, fbgemm_gpu"),
    ("apex.toml", 'name = "apex"', 'name = "apex_rocm"', "package.name", "apex"),
    ("apex.toml", 'python = ["3.8",', 'python = ["3.7",', "versions[0].python",
     "3.8, 3.9, 3.10, 3.11, 3.12, 3.13, 3.13t, 3.14, 3.14t"),
    ("apex.toml", 'rocm = ["6.0", "6.1"]', 'rocm = ["6.0", "6.01"]', "versions[0].rocm",
     "rocm.toml:releases"),
    ("rocm.toml", 'provider = "system", version = "6.0.2"', 'provider = "sytem", version = "6.0.2"',
     'releases."6.0".sdk.provider', "pip, system"),
    ("rocm.toml", 'layout = "per-family"', 'layout = "per_family"', 'releases."7.0".sdk.layout',
     "per-family, multi-arch"),
    ("rocm.toml", 'torch."2.4" = { kind = "pytorch"', 'torch."2.4" = { kind = "upstream"',
     'releases."6.0".torch."2.4".kind', "pytorch, amd, therock"),
    ("rocm.toml", 'status = "released", ref = "therock-7.14"', 'status = "tagged", ref = "therock-7.14"',
     'releases."7.14".line.status', "released, branch, bkc, nightly-only"),
    ("rocm.toml", 'default_family = "gfx90X-dcgpu"', 'default_family = "gfx90x-dcgpu"',
     'releases."6.0".default_family', "gpus.toml:families"),
    ("rocm.toml", 'gpus = "rocm-6"', 'gpus = "rocm6"', 'releases."6.0".gpus', "gpus.toml:eras"),
    ("ci.toml", 'python = "newest"', 'python = "latest"', 'triggers."pull_request".python',
     "newest, all"),
    ("ci.toml", 'families = "default"', 'families = "defaults"', 'triggers."pull_request".families',
     "default, requested"),
    ("ci.toml", "[triggers.schedule]", "[triggers.cron]", 'triggers."cron"',
     "pull_request, push, schedule, workflow_dispatch, merge_group, release"),
    ("ci.toml", 'families = ["gfx950-dcgpu"]', 'families = ["gfx950"]',
     'runners.test."mi355".families', "gpus.toml:families"),
]


def _declared(data: Path, where: str) -> set[str]:
    """The closed set a data file declares, read with tomllib (not through the toolkit):
    ``rocm.toml:releases`` (release keys), ``rocm.toml:indexes``, ``gpus.toml:families``
    (names and aliases), ``gpus.toml:eras``."""
    file, table = where.split(":")
    doc = tomllib.loads((data / file).read_text())
    if where == "gpus.toml:families":
        return {n for name, f in doc["families"].items() for n in (name, *f.get("aliases", []))}
    return set(doc[table])


@pytest.mark.parametrize(("file", "old", "new", "path", "allowed"), ENUMS,
                         ids=[f"{e[0]}:{e[3]}" for e in ENUMS])
def test_every_closed_set_rejects_a_misspelling_and_names_the_allowed(
    data_copy: Path, file: str, old: str, new: str, path: str, allowed: str
) -> None:
    edit(data_copy / file, old, new)
    [bad] = set(re.findall(r'"([^"]+)"', new)) - set(re.findall(r'"([^"]+)"', old)) or \
        set(re.findall(r"\[triggers\.(\w+)\]", new))
    msg = _error(data_copy)
    assert f"{file}: {path}: {bad!r} is not allowed; valid: " in msg, msg
    listed = msg.split("valid: ", 1)[1]
    if ".toml:" in allowed:  # a set the data declares: exactly it, in any order
        assert set(listed.split(" (")[0].split(", ")) == _declared(data_copy, allowed), msg
    else:
        assert allowed in listed, msg


def test_misspelled_build_style_no_longer_switches_apex_to_the_other_flags(data_copy: Path) -> None:
    """Before: any build_style other than "jit-prebuild" silently built with --cpp_ext."""
    edit(data_copy / "apex.toml", 'build_style = "jit-prebuild"', 'build_style = "jit_prebuild"')
    assert "versions[4].build_style: 'jit_prebuild' is not allowed" in _error(data_copy)


# ----------------------------------------------------------------------------- unknown keys
UNKNOWN = [
    ("apex.toml", "[package]", 'colour = "red"\n[package]', "colour", "package, versions"),
    ("apex.toml", "[package]", "[pakage]", "pakage", "package, versions"),
    ("apex.toml", 'recipe = "apex"', 'recipe = "apex"\nlicense = "BSD"', "package.license",
     "name, dist, repo, recipe, subdir"),
    ("apex.toml", 'build_style = "ext-flags"', 'build_style = "ext-flags"\nbuildstyle = "x"',
     "versions[0].buildstyle",
     # every package's keys, then its recipe's own (apex: seed_table; fbgemm_gpu: tbb)
     "version, ref, torch, rocm, python, build_style, evidence, default_targets, submodules, "
     "waiting, abi3, seed_table"),
    ("apex.toml", 'build_style = "ext-flags"',
     'build_style = "ext-flags"\ntbb = { provider = "system" }', "versions[0].tbb",
     "version, ref, torch, rocm, python, build_style, evidence, default_targets, submodules, "
     "waiting, abi3, seed_table"),
    ("fbgemm_gpu.toml", 'build_style = "package-variant"',
     'build_style = "package-variant"\nseed_table = true', "versions[0].seed_table",
     "version, ref, torch, rocm, python, build_style, evidence, default_targets, submodules, "
     "waiting, abi3, tbb"),
    ("rocm.toml", '[releases."6.0"]', 'mirror = "x"\n[releases."6.0"]', "mirror", "releases"),
    ("rocm.toml", 'hip = "6.0"', 'hip = "6.0"\ndefault-family = "gfx90a"',
     'releases."6.0".default-family',
     "gpus, hip, default_family, line, sdk, channels, families, torch"),
    ("rocm.toml", 'provider = "system", version = "6.0.2"',
     'provider = "system", version = "6.0.2", index = "x"',
     'releases."6.0".sdk.index', "provider, version, layout, legacy, note, evidence"),
    ("rocm.toml", 'sdk = { provider = "pip", layout = "multi-arch", evidence = "ROCm/TheRock@418cd5f63',
     'sdk = { provider = "pip", layout = "multi-arch", spec = "rocm", evidence = "ROCm/TheRock@418cd5f63',
     'releases."7.14".sdk.spec', "provider, layout, legacy, note, evidence"),
    ("rocm.toml", 'channels = { stable = "https://repo.amd.com/rocm/whl/", prerelease',
     'channels = { beta = "https://x.example/", stable = "https://repo.amd.com/rocm/whl/", prerelease',
     'releases."7.14".channels.beta', "stable, prerelease, nightly, dev, evidence"),
    ("rocm.toml", 'kind = "pytorch", index_url', 'kind = "pytorch", find_links = "https://x/", index_url',
     'releases."6.0".torch."2.4".find_links', "kind, index_url, spec, note, evidence"),
    ("rocm.toml", 'served."gfx1151" = ["gfx1151"]', 'served."gfx1151" = ["gfx1151"]\nserves = 1',
     'releases."7.0".families.serves', "evidence, served"),
    ("fbgemm_gpu.toml", 'tbb = { provider = "pypi", spec', 'tbb = { provider = "pypi", version = "1", spec',
     "versions[2].tbb.version", "provider, spec"),
    ("gpus.toml", 'targets = ["gfx942"]', 'targets = ["gfx942"]\nalias = ["mi300"]',
     'families."gfx94X-dcgpu".alias', "targets, aliases"),
    ("gpus.toml", "extra_targets = [", "extra_target = [", 'eras."rocm-6".extra_target',
     "evidence, targets, extra_targets"),
    ("gpus.toml", '[eras."rocm-6"]', '[era."rocm-6"]', "era", "families, eras"),
    ("ci.toml", 'families = "default"', 'families = "default"\nfamily = "x"',
     'triggers."pull_request".family', "python, families, versions, variants"),
    ("ci.toml", 'build = "linux-x86_64-cpu"', 'build = "linux-x86_64-cpu"\ngpu = "x"',
     "runners.gpu", "build, test"),
    ("ci.toml", 'label = "linux-mi300-gpu"', 'label = "linux-mi300-gpu"\nlabels = "x"',
     'runners.test."mi300".labels', "label, gfx, families"),
]


@pytest.mark.parametrize(("file", "old", "new", "path", "valid"), UNKNOWN,
                         ids=[f"{e[0]}:{e[3]}" for e in UNKNOWN])
def test_every_table_rejects_unknown_keys(
    data_copy: Path, file: str, old: str, new: str, path: str, valid: str
) -> None:
    edit(data_copy / file, old, new)
    msg = _error(data_copy)
    assert msg.endswith(f"{file}: {path}: unknown key; valid: {valid}"), msg


# ----------------------------------------------------------------------------- types, missing keys
SDK_60 = ('sdk = { provider = "system", version = "6.0.2", note = "TheRock never published a pip '
          'SDK for ROCm 6.0", evidence = "ROCm/TheRock@4bf64ec23 version.json (the first pip SDK '
          'version is 6.4.0)" }')
BROKEN = [
    ("apex.toml", 'torch = "2.4.0"', "torch = 2.4", "versions[0].torch",
     "must be a non-empty string, got float 2.4"),
    ("apex.toml", 'python = ["3.8",', "python = [3.8,", "versions[0].python",
     "must be a non-empty array of strings, got array [3.8,"),
    ("apex.toml", 'rocm = ["6.0", "6.1"]', 'rocm = "6.0"', "versions[0].rocm",
     "must be an array of strings, got string '6.0'"),
    # empty only with the reason it waits (toolkit.data.waiting)
    ("apex.toml", 'rocm = ["6.0", "6.1"]', "rocm = []", "versions[0].rocm",
     'is empty; a version no ROCm release of the matrix builds yet says why: waiting = "awaits '
     'torch 2.4 on a ROCm of the matrix" (or list its ROCm releases)'),
    ("apex.toml", 'rocm = ["6.0", "6.1"]', 'rocm = ["6.0"]\nwaiting = "awaits torch 2.4"',
     "versions[0].waiting", "given with rocm = ['6.0']; a version that builds awaits nothing: "
     "remove waiting, or empty rocm"),
    ("apex.toml", 'dist = "apex"\n', "", "package.dist", "missing (a non-empty string is required)"),
    ("apex.toml", 'build_style = "ext-flags"\n', "", "versions[0].build_style",
     "missing (a non-empty string is required)"),
    ("rocm.toml", 'hip = "6.0"', "hip = 6.0", 'releases."6.0".hip',
     "must be a non-empty string, got float 6.0"),
    ("rocm.toml", 'hip = "6.0"', 'hip = "6"', 'releases."6.0".hip', "'6' does not look like X.Y"),
    ("rocm.toml", '[releases."6.0"]', '[releases."six"]', 'releases."six"',
     "'six' does not look like a ROCm version like 6.4 or 6.2.4"),
    ("rocm.toml", SDK_60, 'sdk = "system"',
     'releases."6.0".sdk', "must be a table, got string 'system'"),
    ("rocm.toml", 'sdk = { provider = "system", version = "6.0.2", note', 'sdk = { version = "6.0.2", note',
     'releases."6.0".sdk.provider', "missing (one of pip, system is required)"),
    ("rocm.toml", ', evidence = "pytorch/test-infra@ac9a718ca', ', evidenc = "pytorch/test-infra@ac9a718ca',
     'releases."6.0".torch."2.4".evidenc', "unknown key"),
    ("apex.toml", 'evidence = "ROCm/apex@5567275d', 'evidenc = "ROCm/apex@5567275d',
     "versions[0].evidenc", "unknown key"),
    ("fbgemm_gpu.toml", 'default_targets = { "6" = ["gfx908"', 'default_targets = { "six" = ["gfx908"',
     'versions[0].default_targets."six"', "'six' does not look like a ROCm major like 7"),
    ("fbgemm_gpu.toml", 'default_targets = { "6" = ["gfx908"', 'default_targets = { "6" = ["sm_90"',
     'versions[0].default_targets."6"', "'sm_90' is not a gfx id"),
    ("rocm.toml", 'provider = "system", version = "6.0.2"', 'provider = "system"',
     'releases."6.0".sdk.version', "missing (a non-empty string is required)"),
    # a channel is an https index (loopback http and file:// only for tests, as every index)
    ("rocm.toml", 'stable = "https://repo.amd.com/rocm/whl/", prerelease',
     'stable = "http://repo.amd.com/rocm/whl/", prerelease',
     'releases."7.14".channels.stable', "'http://repo.amd.com/rocm/whl/' is not an allowed index "
     "URL; valid: https://..., file://..., or http:// on 127.0.0.1/localhost"),
    # the default channel of a line's status must be one of its channels
    ("rocm.toml", 'channels = { stable = "https://repo.amd.com/rocm/whl/", prerelease',
     'channels = { prerelease', 'releases."7.14".channels',
     "a 'released' line installs from its 'stable' channel, which is missing; valid: prerelease, "
     "nightly, dev"),
    ("rocm.toml", 'version = "7.14.0", evidence', 'version = "7.15.0", evidence',
     'releases."7.14".line.version', "'7.15.0' is not a 7.14 version (expected 7.14.Z)"),
    ("rocm.toml", 'version = "7.14.0", evidence', 'version = "7.14", evidence',
     'releases."7.14".line.version', "'7.14' does not look like X.Y.Z"),
    ("rocm.toml", 'kind = "amd", find_links = "https://repo.radeon.com/rocm/manylinux/rocm-rel-6.3/", ',
     'kind = "amd", ', 'releases."6.3".torch."2.6"',
     "needs at least one of find_links, index_url (none given)"),
    ("gpus.toml", 'targets = ["gfx942"]', 'targets = "gfx942"', 'families."gfx94X-dcgpu".targets',
     "must be a non-empty array of strings, got string 'gfx942'"),
    ("gpus.toml", 'aliases = ["gfx94X-all"]', 'aliases = ["gfx120X-all"]', 'families."gfx120X-all"',
     "family name 'gfx120X-all' is defined twice"),
    ("rocm.toml", 'layout = "per-family", legacy = true,', 'layout = "per-family", legacy = 1,',
     'releases."7.0".sdk.legacy', "must be true or false, got integer 1"),
    ("rocm.toml", 'layout = "per-family", legacy = true,', 'layout = "per-family",',
     'releases."7.0".sdk.legacy', "TheRock's per-family releases are legacy"),
    ("gpus.toml", 'extra_targets = ["gfx1013"]', 'extra_targets = ["gfx1013", "gfx942"]',
     'eras."rocm-6".extra_targets', "gfx942 also in targets (extra targets are the ones no family lists)"),
    ("ci.toml", 'build = "linux-x86_64-cpu"', "build = true", "runners.build",
     "must be a non-empty string, got boolean True"),
]


@pytest.mark.parametrize(("file", "old", "new", "path", "what"), BROKEN,
                         ids=[f"{e[0]}:{e[3]}:{e[4][:20]}" for e in BROKEN])
def test_wrong_types_and_missing_keys(
    data_copy: Path, file: str, old: str, new: str, path: str, what: str
) -> None:
    edit(data_copy / file, old, new)
    msg = _error(data_copy)
    assert f"{file}: {path}: {what}" in msg, msg


# ----------------------------------------------------------------------------- package files
def test_every_other_toml_file_is_a_package(data_copy: Path) -> None:
    (data_copy / "notes.toml").write_text('title = "not a package"\n')
    assert _error(data_copy).endswith("notes.toml: title: unknown key; valid: package, versions")


def test_a_package_file_without_package_table_is_an_error(data_copy: Path) -> None:
    edit(data_copy / "fbgemm_gpu.toml", "[package]\n", "")
    msg = _error(data_copy)
    assert "fbgemm_gpu.toml: name: unknown key; valid: package, versions" in msg, msg


def test_versions_must_be_an_array_of_tables(data_copy: Path) -> None:
    header = (data_copy / "apex.toml").read_text().split("[[versions]]")[0]
    (data_copy / "apex.toml").write_text(header + '[versions]\nversion = "1.0.0"\n')
    assert _error(data_copy).endswith(
        "apex.toml: versions: must be a non-empty array of tables ([[...]]), got table "
        "{'version': '1.0.0'}")


def test_a_folder_without_packages_is_an_error(data_copy: Path) -> None:
    (data_copy / "apex.toml").unlink()
    (data_copy / "fbgemm_gpu.toml").unlink()
    with pytest.raises(DataError, match="no package file"):
        load_matrix(data_copy)


def test_ci_toml_is_checked_with_the_matrix_and_is_optional(data_copy: Path) -> None:
    edit(data_copy / "ci.toml", 'python = "all"', 'python = "every"')
    with pytest.raises(DataError, match=r'ci\.toml: triggers\."push"\.python'):
        load_matrix(data_copy)
    (data_copy / "ci.toml").unlink()
    assert set(load_matrix(data_copy).packages) == {"apex", "fbgemm_gpu"}


def test_recipes_and_build_styles_agree_with_the_recipes_code() -> None:
    """The data's closed sets are what toolkit.plan.recipes implements (and nothing more)."""
    from toolkit.core.errors import UsageError
    from toolkit.plan.recipes import REGISTRY, recipe_for

    for name, recipe in REGISTRY.items():
        assert recipe_for(name) is recipe and recipe.name == name
    with pytest.raises(UsageError):
        recipe_for("apex2")
    # upstream's own build styles: apex's --cpp_ext/--cuda_ext (1.4-1.7) and JIT prebuild
    # (1.8, ROCm/apex release/1.8.0 setup.py); fbgemm_gpu's --package_variant (up to v1.2)
    # and --build-variant (v1.3, pytorch/FBGEMM@d93ec3f3 fbgemm_gpu/setup.py)
    assert set(REGISTRY["apex"].build_styles) == {"ext-flags", "jit-prebuild"}
    assert set(REGISTRY["fbgemm_gpu"].build_styles) == {"package-variant", "build-variant"}
    used = {(p.recipe, v.build_style) for p in load_matrix().packages.values() for v in p.versions}
    assert used <= {(r, s) for r, rec in REGISTRY.items() for s in rec.build_styles}


# ----------------------------------------------------------------------------- the schema itself
FILE = Path("demo.toml")
SPEC = Table(
    {
        "name": Text(choices=("a", "b")),
        "size": Text(pattern=r"[0-9]+", like="a number"),
        "tags": Texts(Text(choices=Ref("tags"))),
        "src": Tagged("kind", {"git": Table({"url": Text()}),
                               "dir": Table({"path": Text(), "glob": Text()}, optional=("glob",))}),
        "items": Array(Table({"id": Text()})),
        "by_name": Map(Text(), key=Text(pattern=r"[a-z]+", like="lower-case"), non_empty=True,
                       what="name"),
    },
    optional=("tags",),
)
GOOD: dict[str, object] = {"name": "a", "size": "12", "tags": ["x"], "src": {"kind": "dir", "path": "/p"},
        "items": [{"id": "1"}], "by_name": {"k": "v"}}


def _schema_error(doc: dict[str, object]) -> str:
    with pytest.raises(DataError) as info:
        check(SPEC, doc, FILE, {"tags": ["x", "y"]})
    return str(info.value)


def test_schema_accepts_a_good_document() -> None:
    check(SPEC, GOOD, FILE, {"tags": ["x", "y"]})
    check(SPEC, {k: v for k, v in GOOD.items() if k != "tags"}, FILE, {"tags": []})


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"nme": "a"}, "demo.toml: nme: unknown key; valid: name, size, tags, src, items, by_name"),
        ({"name": "c"}, "demo.toml: name: 'c' is not allowed; valid: a, b"),
        ({"name": 1}, "demo.toml: name: must be a non-empty string, got integer 1"),
        ({"name": ""}, "demo.toml: name: must be a non-empty string, got string ''"),
        ({"size": "x"}, "demo.toml: size: 'x' does not look like a number"),
        ({"tags": ["z"]}, "demo.toml: tags: 'z' is not allowed; valid: x, y"),
        ({"tags": ["x", "x"]}, "demo.toml: tags: duplicate entries in ['x', 'x']"),
        ({"src": {"kind": "svn"}}, "demo.toml: src.kind: 'svn' is not allowed; valid: git, dir"),
        ({"src": {"path": "/p"}}, "demo.toml: src.kind: missing (one of git, dir is required)"),
        ({"src": {"kind": "git", "path": "/p"}}, "demo.toml: src.path: unknown key; valid: kind, url"),
        ({"src": {"kind": "dir"}}, "demo.toml: src.path: missing (a non-empty string is required)"),
        ({"items": []}, "demo.toml: items: must be a non-empty array of tables ([[...]]), got array []"),
        ({"items": [{"id": "1"}, {"ix": "2"}]}, "demo.toml: items[1].ix: unknown key; valid: id"),
        ({"by_name": {}}, "demo.toml: by_name: needs at least one name"),
        ({"by_name": {"K": "v"}}, 'demo.toml: by_name."K": \'K\' does not look like lower-case'),
        ({"by_name": {"k": ["v"]}}, 'demo.toml: by_name."k": must be a non-empty string, got array'),
    ],
)
def test_schema_messages(change: dict[str, object], expected: str) -> None:
    doc = {**GOOD, **change}
    if "nme" in change:
        del doc["name"]
    assert _schema_error(doc).startswith(expected)


def test_schema_reports_missing_required_keys_but_not_optional_ones() -> None:
    doc = dict(GOOD)
    del doc["size"]
    assert _schema_error(doc) == "demo.toml: size: missing (a non-empty string is required)"
    del doc["tags"]
    doc["size"] = "1"
    check(SPEC, doc, FILE, {"tags": []})


NOTED = [
    # (file, old, new, key path, where the valid values come from, as the message must say)
    ("rocm.toml", 'gpus = "rocm-6"', 'gpus = "rocm6"', 'releases."6.0".gpus',
     "the release eras of gpus.toml"),
    ("apex.toml", 'name = "apex"', 'name = "apex_rocm"', "package.name",
     "a package file is named after its package"),
    ("apex.toml", 'recipe = "apex"', 'recipe = "apex2"', "package.recipe",
     "the recipes of toolkit.plan.recipes.REGISTRY"),
]


@pytest.mark.parametrize(("file", "old", "new", "path", "source"), NOTED,
                         ids=[e[3] for e in NOTED])
def test_a_closed_set_says_where_its_valid_values_come_from(
    data_copy: Path, file: str, old: str, new: str, path: str, source: str
) -> None:
    """The valid values end with where they come from: gpus.toml's [eras], the file's own
    name (apex.toml), the registry's recipes (toolkit.plan.recipes.REGISTRY)."""
    from toolkit.plan.recipes import REGISTRY

    edit(data_copy / file, old, new)
    msg = _error(data_copy)
    valid = {"gpus": sorted(_declared(data_copy, "gpus.toml:eras")), "name": ["apex"],
             "recipe": sorted(REGISTRY)}[path.rsplit(".", 1)[1]]
    assert msg.endswith(f"valid: {', '.join(valid)} ({source})"), msg


LIKE = [
    # (file, old, new, key path, the bad key); the message says what such a key looks like
    ("rocm.toml", 'served."gfx1151" = ["gfx1151"]', 'served."GFX1151" = ["gfx1151"]',
     'releases."7.0".families.served."GFX1151"', "'GFX1151' does not look like a family name "
     "like gfx94X-dcgpu"),
    ("rocm.toml", 'torch."2.4" = { kind = "pytorch"', 'torch."2.x" = { kind = "pytorch"',
     'releases."6.0".torch."2.x"', "'2.x' does not look like a torch release like 2.8"),
]


@pytest.mark.parametrize(("file", "old", "new", "path", "what"), LIKE, ids=[e[3] for e in LIKE])
def test_a_key_of_the_wrong_shape_is_named_with_a_real_one(
    data_copy: Path, file: str, old: str, new: str, path: str, what: str
) -> None:
    """rocm.toml's own keys are the examples: served."gfx94X-dcgpu", torch."2.8"."""
    edit(data_copy / file, old, new)
    msg = _error(data_copy)
    assert msg.endswith(f"{file}: {path}: {what}"), msg


def test_a_default_family_the_index_did_not_serve_is_named_with_those_it_did(data_copy: Path) -> None:
    """ROCm 7.0's per-family index served gfx94X-dcgpu, its default (rocm.toml); without it
    the default is refused and the families still served are listed, in the file's order."""
    edit(data_copy / "rocm.toml", 'served."gfx94X-dcgpu" = ["gfx942"]\n', "")
    msg = _error(data_copy)
    served = tomllib.loads((data_copy / "rocm.toml").read_text())["releases"]["7.0"]["families"]["served"]
    assert msg.endswith('rocm.toml: releases."7.0".default_family: \'gfx94X-dcgpu\' is not one of the '
                        f"families this release's index served; valid: {', '.join(served)}"), msg
