"""TheRock's release lines (toolkit/verify/upstream/therock_lines.py, therock_releases.py)
against tiny TheRock-like repositories made with real git: which ref states each release
(tag, release branch, BKC branch, main), what the ref builds, a file in an unknown shape
(a review, never an empty list), and the `new ROCm release` edits. Every expected value is
written by hand from the files these tests commit."""

from __future__ import annotations

import dataclasses
import shutil
import sys
from pathlib import Path

import pytest
import tomlkit

from tests.unit.upstream_fakes import FakeRepo, make_data
from toolkit.data.matrix import RocmRelease, load_matrix
from toolkit.verify.upstream import write
from toolkit.verify.upstream.model import Context, Fact
from toolkit.verify.upstream.repos import Repo
from toolkit.verify.upstream.therock_lines import (
    Unreadable,
    channels,
    gpu_targets,
    release_lines,
    torch_builds,
)
from toolkit.verify.upstream.therock_releases import release_facts

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

SLUG = "ROCm/TheRock"
MATRIX = "build_tools/github_actions/configure_pytorch_release_matrix.py"
WORKFLOW = ".github/workflows/multi_arch_release_linux_pytorch_wheels.yml"
CMAKE = "cmake/therock_amdgpu_targets.cmake"
VENV = "build_tools/setup_venv.py"
SCRIPT = ('RELEASE_PYTHON_VERSIONS = ["3.11", "3.12"]\n'
          'RELEASE_STABLE_PYTORCH_REFS = {\n'
          '    "linux": ["release/2.5", "release/2.6"],\n'
          '    "windows": ["release/2.5"],\n}\n'
          'RELEASE_PYTORCH_REFS = {p: [*r, "nightly"] for p, r in RELEASE_STABLE_PYTORCH_REFS.items()}\n')
TARGETS = ('therock_add_amdgpu_target(gfx90a "MI210" FAMILY dcgpu-all gfx90a-dcgpu)\n'
           'therock_add_amdgpu_target(gfx942 "MI300X" FAMILY dcgpu-all gfx94X-dcgpu)\n')
CHANNELS = ('ROCM_INDEX_URLS_MAP = {\n'
            '    "stable": "https://stable.example.amd.com/whl-multi-arch/",\n'
            '    "nightly": "https://nightly.example.amd.com/whl-multi-arch/",\n}\n')


def _version(v: str) -> dict[str, str]:
    return {"version.json": f'{{"rocm-version": "{v}"}}\n'}


@pytest.fixture(scope="module")
def rock_template(tmp_path_factory: pytest.TempPathFactory) -> FakeRepo:
    """main: 7.0.0 with its release files, then raised to 7.2.0 (made once per module)."""
    r = FakeRepo(tmp_path_factory.mktemp("rock") / "mirrors", SLUG)
    r.commit({**_version("7.0.0"), MATRIX: SCRIPT, CMAKE: TARGETS, VENV: CHANNELS})
    r.commit({"README.md": "last 7.0 commit\n"})
    r.commit(_version("7.2.0"))
    return r


@pytest.fixture
def rock(rock_template: FakeRepo, tmp_path: Path) -> FakeRepo:
    """This test's own copy of ``rock_template`` (the same commits)."""
    r = FakeRepo.__new__(FakeRepo)
    r.dir = tmp_path / "mirrors" / SLUG.replace("/", "+") / "repo"
    shutil.copytree(rock_template.dir, r.dir, symlinks=True)
    return r


def _repo(r: FakeRepo) -> Repo:
    return Repo(SLUG, r.dir / ".git")


def test_a_version_only_on_main_is_nightly_only_at_its_last_commit(rock: FakeRepo) -> None:
    last70 = rock.git("rev-parse", "HEAD~1")
    lines = release_lines(_repo(rock))
    assert [(x, ln.status, ln.ref, ln.commit, ln.version) for x, ln in lines.items()] == [
        ("7.0", "nightly-only", last70[:9], last70, "7.0.0"),
        ("7.2", "nightly-only", rock.git("rev-parse", "HEAD")[:9], rock.git("rev-parse", "HEAD"),
         "7.2.0")]
    assert lines["7.0"].evidence == f"{SLUG}@{last70[:9]} version.json"


def test_a_release_branch_without_a_tag_is_branch(rock: FakeRepo) -> None:
    head = rock.commit({"README.md": "branch fix\n"}, branch="release/therock-7.2")
    rock.commit({"README.md": "main moves on\n"})
    line = release_lines(_repo(rock))["7.2"]
    assert (line.status, line.ref, line.commit) == ("branch", "release/therock-7.2", head)


def test_a_tag_makes_it_released_at_the_newest_tag(rock: FakeRepo) -> None:
    first = rock.commit({"README.md": "7.2 cut\n"}, branch="release/therock-7.2")
    rock.git("tag", "-a", "-m", "ROCm 7.2", "therock-7.2", first)  # an annotated tag: its commit
    line = release_lines(_repo(rock))["7.2"]
    assert (line.status, line.ref, line.commit, line.version) == \
        ("released", "therock-7.2", first, "7.2.0")
    patch = rock.commit(_version("7.2.1"), branch="release/therock-7.2")
    rock.git("tag", "therock-7.2.1", patch)
    line = release_lines(_repo(rock))["7.2"]
    assert (line.status, line.ref, line.commit, line.version) == \
        ("released", "therock-7.2.1", patch, "7.2.1")


def test_a_bkc_branch_is_read_at_the_newest_date(rock: FakeRepo) -> None:
    rock.commit({"README.md": "bkc 1\n"}, branch="release/bkc/therock-7.0-20260801")
    newest = rock.commit({"README.md": "bkc 2\n"}, branch="release/bkc/therock-7.0-20260811")
    line = release_lines(_repo(rock))["7.0"]
    assert (line.status, line.ref, line.commit) == \
        ("bkc", "release/bkc/therock-7.0-20260811", newest)


def test_what_a_ref_states(rock: FakeRepo) -> None:
    repo, head = _repo(rock), rock.git("rev-parse", "HEAD")
    builds = torch_builds(repo, head)
    assert builds.value == {"2.5": ("3.11", "3.12"), "2.6": ("3.11", "3.12")}
    assert builds.evidence == f"{SLUG}@{head[:9]} {MATRIX}"
    assert gpu_targets(repo, head).value == ("gfx90a", "gfx942")
    assert channels(repo, head).value == {
        "stable": "https://stable.example.amd.com/whl-multi-arch/",
        "nightly": "https://nightly.example.amd.com/whl-multi-arch/"}


def test_the_release_workflow_matrix_less_its_excludes(rock: FakeRepo) -> None:
    """Without the matrix script: the workflow's python_version x pytorch_git_ref, less
    `exclude`, without nightly (the 7.13 shape)."""
    rock.git("rm", "-q", MATRIX)
    rock.git("commit", "-q", "-m", "no script")
    head = rock.commit({WORKFLOW: (
        "jobs:\n  build:\n    strategy:\n      matrix:\n"
        '        python_version: ["3.10", "3.11", "3.14"]\n'
        '        pytorch_git_ref: ["release/2.8", "release/2.9", "nightly"]\n'
        "        exclude:\n"
        '          - pytorch_git_ref: "release/2.8"\n'
        '            python_version: "3.14"\n'
        "  other:\n    runs-on: ubuntu-24.04\n")})
    builds = torch_builds(_repo(rock), head)
    assert builds.value == {"2.8": ("3.10", "3.11"), "2.9": ("3.10", "3.11", "3.14")}
    assert builds.evidence == f"{SLUG}@{head[:9]} {WORKFLOW}"


def test_channels_before_setup_venv_went_multi_arch(rock: FakeRepo) -> None:
    """setup_venv.py still joins a family folder (index_subdir): stable from it, the rest from
    the release-bucket publisher and RELEASES.md's unified index."""
    head = rock.commit({
        VENV: CHANNELS.replace("}\n", "}\n") + "def install(index_subdir=None): ...\n",
        "build_tools/github_actions/publish_pytorch_to_release_bucket.py": (
            'MULTI_ARCH_INDEX_URLS = {\n    "dev": "https://dev.example.amd.com/whl-multi-arch/",\n}\n'),
        "RELEASES.md": "published to a unified\nindex at https://n.example.amd.com/whl-multi-arch/.\n"})
    assert channels(_repo(rock), head).value == {
        "stable": "https://stable.example.amd.com/whl-multi-arch/",
        "nightly": "https://n.example.amd.com/whl-multi-arch/",
        "dev": "https://dev.example.amd.com/whl-multi-arch/"}


BAD = {
    "not Python": (MATRIX, 'RELEASE_PYTHON_VERSIONS = ["3.11",\n', "is not valid Python (line 1)"),
    "a ref that is no release": (MATRIX, SCRIPT.replace('"release/2.6"', '"main"'),
                                 "torch ref 'main' is neither release/X.Y nor nightly"),
    "renamed lists": (MATRIX, SCRIPT.replace("RELEASE_STABLE_PYTORCH_REFS = {", "REFS = {")
                      .replace("RELEASE_STABLE_PYTORCH_REFS.items()", "REFS.items()"),
                      "names neither RELEASE_STABLE_PYTORCH_REFS nor PYTORCH_REFS_LINUX"),
    "no Pythons": (MATRIX, SCRIPT.replace("RELEASE_PYTHON_VERSIONS", "PYS"),
                   "RELEASE_PYTHON_VERSIONS is not a list of Python versions"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_matrix_in_an_unknown_shape_cannot_be_read(rock: FakeRepo, case: str) -> None:
    path, text, message = BAD[case]
    head = rock.commit({path: text})
    with pytest.raises(Unreadable, match=message.replace("(", r"\(").replace(")", r"\)")):
        torch_builds(_repo(rock), head)


def test_a_workflow_matrix_from_an_expression_cannot_be_read(rock: FakeRepo) -> None:
    rock.git("rm", "-q", MATRIX)
    rock.git("commit", "-q", "-m", "no script")
    head = rock.commit({WORKFLOW: (
        "jobs:\n  build:\n    strategy:\n      matrix:\n"
        "        python_version: ${{ fromJSON(inputs.pythons) }}\n"
        '        pytorch_git_ref: ["release/2.8"]\n')})
    with pytest.raises(Unreadable, match="python_version, pytorch_git_ref or exclude is not a list"):
        torch_builds(_repo(rock), head)


# ------------------------------------------------------------------- the rule, on fake data
def _data(tmp: Path) -> Path:
    """upstream_fakes' data folder: releases 6.0, 6.1 (system), 7.0 (TheRock multi-arch,
    torch 2.5, era "fake" = gfx90a, gfx942, default family gfx94X-dcgpu)."""
    keys = ("rock70", "ti24", "ti25", "apex10", "apex11", "fb10")
    return make_data(tmp / "data", {k: f"{i:x}" * 40 for i, k in enumerate(keys, 1)})


def _facts(rock: FakeRepo, data: Path) -> list[Fact]:
    return release_facts(Context(load_matrix(data), data, {SLUG: _repo(rock)}), _repo(rock))


def _tag72(rock: FakeRepo, files: dict[str, str] | None = None) -> str:
    cut = rock.commit(files or {"README.md": "7.2 cut\n"}, branch="release/therock-7.2")
    rock.git("tag", "therock-7.2", cut)
    return cut


def test_a_malformed_matrix_is_a_review_never_an_empty_release(rock: FakeRepo,
                                                               tmp_path: Path) -> None:
    cut = _tag72(rock, {MATRIX: 'RELEASE_PYTHON_VERSIONS = ["3.11",\n'})
    new = [f for f in _facts(rock, _data(tmp_path)) if "7.2" in f.what]
    assert [(f.kind, f.what, f.upstream, f.edits) for f in new] == [
        ("review", "ROCm 7.2 torch builds", f"cannot be read: {MATRIX} is not valid Python "
         "(line 1)", ())]
    assert new[0].evidence == f"{SLUG}@{cut[:9]} therock-7.2"
    assert new[0].fails


def _new_release(rock: FakeRepo, tmp_path: Path) -> tuple[Fact, str]:
    cut = _tag72(rock)
    facts = [f for f in _facts(rock, _data(tmp_path)) if f.what == "new ROCm release 7.2"]
    assert len(facts) == 1
    return facts[0], cut[:9]


def test_a_new_tag_is_drift_whose_edits_add_the_release(rock: FakeRepo, tmp_path: Path) -> None:
    fact, c = _new_release(rock, tmp_path)
    assert fact.line() == ("drift: new ROCm release 7.2: data none; upstream released "
                           f"therock-7.2 (7.2.0; torch 2.5, 2.6) [{SLUG}@{c} version.json]")
    doc = tomlkit.parse((tmp_path / "data" / "rocm.toml").read_text())
    for edit in fact.edits:
        assert edit.file == "rocm.toml"  # the targets are era "fake"'s: no new era
        write._apply(doc, edit)
    table = tomllib.loads(tomlkit.dumps(doc))["releases"]["7.2"]
    for torch in ("2.5", "2.6"):
        assert table["torch"][torch].pop("evidence").startswith(f"{SLUG}@{c} {MATRIX} (")
    assert table == {
        "gpus": "fake", "hip": "7.2", "default_family": "gfx94X-dcgpu",
        "line": {"status": "released", "ref": "therock-7.2", "version": "7.2.0",
                 "evidence": f"{SLUG}@{c} version.json"},
        "sdk": {"provider": "pip", "layout": "multi-arch",
                "evidence": f"{SLUG}@{c} version.json; {SLUG}@{c} {VENV}"},
        "channels": {"stable": "https://stable.example.amd.com/whl-multi-arch/",
                     "nightly": "https://nightly.example.amd.com/whl-multi-arch/",
                     "evidence": f"{SLUG}@{c} {VENV}"},
        "torch": {"2.5": {"kind": "therock", "spec": "torch>=2.5,<2.6", "python": ["3.11", "3.12"]},
                  "2.6": {"kind": "therock", "spec": "torch>=2.6,<2.7", "python": ["3.11", "3.12"]}}}


def test_new_targets_add_a_new_era(rock: FakeRepo, tmp_path: Path) -> None:
    cut = _tag72(rock, {CMAKE: TARGETS + 'therock_add_amdgpu_target(gfx1250 "x" FAMILY gfx125X)\n'})
    fact = next(f for f in _facts(rock, _data(tmp_path)) if f.what == "new ROCm release 7.2")
    eras = {e.path: e.value for e in fact.edits if e.file == "gpus.toml"}
    assert eras == {("eras", "therock-7.2", "evidence"): f"{SLUG}@{cut[:9]} {CMAKE}",
                    ("eras", "therock-7.2", "targets"): ["gfx90a", "gfx942", "gfx1250"]}
    assert {e.path: e.value for e in fact.edits}[("releases", "7.2", "gpus")] == "therock-7.2"


def test_a_release_the_ref_changed_is_drift_with_its_edits(rock: FakeRepo, tmp_path: Path) -> None:
    """The data's 7.0 builds torch 2.5 only (3.11, 3.12), citing a commit TheRock lacks; main's
    last 7.0 commit builds 2.5 and 2.6: 2.6 is added, 2.5's evidence is rewritten to it."""
    last70 = rock.git("rev-parse", "HEAD~1")[:9]
    facts = {f.what: f for f in _facts(rock, _data(tmp_path))
             if f.what.startswith("ROCm 7.0 torch")}
    assert sorted(facts) == ["ROCm 7.0 torch 2.5 evidence", "ROCm 7.0 torch 2.6"]
    assert facts["ROCm 7.0 torch 2.6"].line() == (
        f"drift: ROCm 7.0 torch 2.6: data none; upstream built for 3.11, 3.12 "
        f"[{SLUG}@{last70} {MATRIX}]")
    (edit,) = facts["ROCm 7.0 torch 2.5 evidence"].edits
    assert edit.path == ("releases", "7.0", "torch", "2.5", "evidence")
    assert edit.value.startswith(f"{SLUG}@{last70} {MATRIX} (")


def _loader_has_lines() -> bool:
    return "line" in {f.name for f in dataclasses.fields(RocmRelease)}


@pytest.mark.skipif(not _loader_has_lines(), reason=(
    "needs i28-b's rocm.toml loader (RocmRelease.line, SdkSource.channels, torch sources "
    "without an index): enable after merging i28-b"))
def test_write_adds_a_release_the_loader_accepts(rock: FakeRepo, tmp_path: Path) -> None:
    fact, c = _new_release(rock, tmp_path)
    copy = tmp_path / "copy"
    shutil.copytree(tmp_path / "data", copy)
    assert write.apply(copy, fact.edits) == ["rocm.toml"]
    rel = load_matrix(copy).rocm["7.2"]
    line = rel.line
    assert (line.status, line.ref, line.version) == ("released", "therock-7.2", "7.2.0")
    assert dict(rel.sdk.channels) == {
        "stable": "https://stable.example.amd.com/whl-multi-arch/",
        "nightly": "https://nightly.example.amd.com/whl-multi-arch/"}
    assert rel.era is not None and rel.era.name == "fake"
    assert {t: s.python for t, s in rel.torch.items()} == {"2.5": ("3.11", "3.12"),
                                                           "2.6": ("3.11", "3.12")}
    # written, the data agrees with upstream: no more drift about 7.2
    assert not [f for f in _facts(rock, copy) if "7.2" in f.what]


def test_a_torch_the_release_no_longer_builds_is_removed_with_its_pairs(
        rock: FakeRepo, tmp_path: Path) -> None:
    """main's last 7.0 commit builds torch 2.6 only: 7.0's torch 2.5 goes, and so does 7.0
    from apex 1.1.0 (torch 2.5), else the data would name a torch 7.0 lacks."""
    rock.commit({MATRIX: SCRIPT.replace('"release/2.5", ', "")}, branch="release/therock-7.0")
    data = _data(tmp_path)
    apex = data / "apex.toml"
    apex.write_text(apex.read_text().replace('rocm = ["6.1"]', 'rocm = ["6.1", "7.0"]'))
    fact = next(f for f in _facts(rock, data) if f.what == "ROCm 7.0 torch 2.5")
    assert [(e.file, e.path, e.value) for e in fact.edits] == [
        ("rocm.toml", ("releases", "7.0", "torch", "2.5"), None),
        ("apex.toml", ("versions", 1, "rocm"), ["6.1"])]


@pytest.mark.parametrize(("urls", "says"), [
    ('"stable": "http://stable.example.amd.com/whl/"', "[stable] is not an https index URL"),
    ('"stable": "https://user:s3cret@stable.example.amd.com/whl/"',
     "[stable] is not an https index URL"),
    ('"stable": "https://stable.example.amd.com/whl/?token=s3cret"',
     "[stable] is not an https index URL"),
    ('"nightly-bkc": "https://bkc.example.amd.com/whl/"',
     "names channel(s) the toolkit does not know: nightly-bkc; known: stable, prerelease"),
])
def test_a_channel_map_the_data_must_not_hold_is_a_review_never_written(
        rock: FakeRepo, tmp_path: Path, urls: str, says: str) -> None:
    """An upstream channel map with a plain http URL, credentials or a query, or a channel
    name no --channel takes: a review naming it (credentials masked), no edit written."""
    _tag72(rock, {VENV: 'ROCM_INDEX_URLS_MAP = {\n    "nightly": '
                        '"https://nightly.example.amd.com/whl-multi-arch/",\n'
                        f'    {urls},\n}}\n'})
    new = [f for f in _facts(rock, _data(tmp_path)) if "7.2" in f.what]
    assert [(f.kind, f.what, f.edits) for f in new] == [("review", "ROCm 7.2 channels", ())]
    assert says in new[0].upstream
    assert "s3cret" not in new[0].line()
