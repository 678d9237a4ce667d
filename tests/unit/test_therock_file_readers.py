"""The readers of TheRock's files (toolkit/verify/upstream/therock_lines.py), on texts written
here in the shapes TheRock's files have: version.json, the cmake target list, the release
matrix script (both names it has had), the release workflow's matrix, and the channel maps;
every shape they cannot read raises ``Unreadable`` with a message naming the file and what is
wrong. The expected values are written by hand from each text."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.upstream_fakes import FakeRepo
from toolkit.verify.upstream import therock_lines as tl
from toolkit.verify.upstream.repos import Repo
from toolkit.verify.upstream.therock_lines import Unreadable

SLUG = "ROCm/TheRock"
M = "m.py"


@pytest.mark.parametrize(("text", "version"), [
    ('{"rocm-version": "7.1.0"}', "7.1.0"), ('{"rocm-version": 7}', "7"),
    ('{"rocm-version": ""}', None), ('{"other": "1"}', None), ("[1, 2]", None),
    ("not json", None), (None, None), ("", None)])
def test_version_of_reads_rocm_version(text: str | None, version: str | None) -> None:
    assert tl.version_of(text) == version


def test_targets_and_their_family_lists() -> None:
    text = ('therock_add_amdgpu_target(gfx90a "MI210" FAMILY dcgpu-all gfx90a-dcgpu)\n'
            '  therock_add_amdgpu_target( gfx942 "MI300X"\n    FAMILY dcgpu-all gfx94X-dcgpu\n'
            '    EXCLUDE_TARGET_PROJECTS hipSPARSELt gfx_not_a_family)\n'
            'therock_add_amdgpu_target(gfx1100 "RX 7900")\n'
            '# therock_add_amdgpu_target(gfx000 "commented" FAMILY x)\n')
    assert tl.targets(text) == {"gfx90a": ("gfx90a-dcgpu",), "gfx942": ("gfx94X-dcgpu",),
                                "gfx1100": ()}


def test_assigned_reads_module_literals_only() -> None:
    text = ("A = [1, 2]\nB: dict = {'x': 'y'}\nC = f()\nD = E = 3\nF: int\n"
            "def g():\n    H = 1\nI = {k: 1 for k in 'ab'}\n")
    assert tl._assigned(text, "p.py") == {"A": [1, 2], "B": {"x": "y"}}
    with pytest.raises(Unreadable) as exc:
        tl._assigned("x = (\n\n", "p.py")
    assert str(exc.value).startswith("p.py is not valid Python (line ")


@pytest.mark.parametrize(("ref", "torch"), [("release/2.10", "2.10"), ("nightly", None)])
def test_torch_minor_of_a_ref(ref: str, torch: str | None) -> None:
    assert tl._torch_minor(ref, M) == torch


@pytest.mark.parametrize("ref", ["main", "release/2", "release/2.10.1", "xrelease/2.1", 3, None])
def test_a_torch_ref_neither_release_nor_nightly(ref: object) -> None:
    with pytest.raises(Unreadable) as exc:
        tl._torch_minor(ref, M)
    assert str(exc.value) == f"m.py: torch ref {ref!r} is neither release/X.Y nor nightly"


@pytest.mark.parametrize("value", [None, [], ["3.12", 3.13], "3.12", ("3.12",)])
def test_pythons_must_be_a_list_of_texts(value: object) -> None:
    with pytest.raises(Unreadable) as exc:
        tl._pythons(value, "PYS", M)
    assert str(exc.value) == "m.py: PYS is not a list of Python versions"


def test_the_script_in_its_older_shape() -> None:
    text = ('PYTHON_VERSIONS = ["3.10", "3.11", "3.12", "3.13"]\n'
            'PYTORCH_REFS_LINUX = [{"pytorch_git_ref": "release/2.7"},\n'
            '    {"pytorch_git_ref": "release/2.8"}, {"pytorch_git_ref": "nightly"}]\n')
    assert tl._from_script(text, M) == (
        {"2.7": ("3.10", "3.11", "3.12", "3.13"), "2.8": ("3.10", "3.11", "3.12", "3.13")},
        "linux: release/2.7, release/2.8; PYTHON_VERSIONS 3.10-3.13")


def test_the_script_in_its_newer_shape() -> None:
    text = ('RELEASE_PYTHON_VERSIONS = ["3.11", "3.12"]\n'
            'RELEASE_STABLE_PYTORCH_REFS = {"linux": ["release/2.9", "nightly"], "windows": []}\n')
    assert tl._from_script(text, M) == ({"2.9": ("3.11", "3.12")},
                                        "linux: release/2.9; RELEASE_PYTHON_VERSIONS 3.11, 3.12")


@pytest.mark.parametrize(("text", "message"), [
    ('RELEASE_STABLE_PYTORCH_REFS = {"windows": ["release/2.9"]}\n',
     'm.py: RELEASE_STABLE_PYTORCH_REFS["linux"] is not a list of torch refs'),
    ('RELEASE_STABLE_PYTORCH_REFS = ["release/2.9"]\n',
     'm.py: RELEASE_STABLE_PYTORCH_REFS["linux"] is not a list of torch refs'),
    ('RELEASE_STABLE_PYTORCH_REFS = {"linux": []}\n',
     'm.py: RELEASE_STABLE_PYTORCH_REFS["linux"] is not a list of torch refs'),
    ('PYTORCH_REFS_LINUX = "release/2.7"\n', "m.py: PYTORCH_REFS_LINUX is not a list of torch refs"),
    ('PYTORCH_REFS_LINUX = [{"pytorch_git_ref": "release/2.7"}]\n',
     "m.py: PYTHON_VERSIONS is not a list of Python versions"),
    ('PYTHON_VERSIONS = ["3.12"]\nPYTORCH_REFS_LINUX = ["release/2.7"]\n',
     "m.py: torch ref None is neither release/X.Y nor nightly"),
    ("X = 1\n", "m.py names neither RELEASE_STABLE_PYTORCH_REFS nor PYTORCH_REFS_LINUX"),
])
def test_a_script_the_reader_cannot_read(text: str, message: str) -> None:
    with pytest.raises(Unreadable) as exc:
        tl._from_script(text, M)
    assert str(exc.value) == message


WF = ("jobs:\n  build:\n    strategy:\n      matrix:\n"
      '        python_version: ["3.10", "3.11", 3.12]\n'
      '        pytorch_git_ref: ["release/2.8", "nightly", "release/2.9"]\n'
      "        exclude:\n"
      '          - pytorch_git_ref: "release/2.9"\n            python_version: "3.10"\n'
      '          - python_version: "3.11"\n            pytorch_git_ref: "release/2.9"\n'
      "          - {}\n"
      "  windows:\n    strategy:\n      matrix:\n"
      '        python_version: ["3.12", "3.13"]\n        pytorch_git_ref: ["release/2.9"]\n'
      "  lint:\n    strategy:\n      matrix:\n        os: [a]\n"
      "  plain: 3\n  other:\n    strategy: [1]\n")


def test_the_workflow_matrix_less_its_excludes_over_every_job() -> None:
    assert tl._from_workflow(WF, "w.yml") == (
        {"2.8": ("3.10", "3.11", "3.12"), "2.9": ("3.12", "3.13")},
        "linux: release/2.8, release/2.9; python_version 3.10-3.12; exclude release/2.9 3.10; "
        "exclude 3.11 release/2.9; exclude ; linux: release/2.9; python_version 3.12, 3.13")


@pytest.mark.parametrize(("text", "message"), [
    ("jobs: [\n", "w.yml is not valid YAML ("),
    ("jobs:\n  a:\n    runs-on: x\n", "w.yml: no job's strategy.matrix names pytorch_git_ref"),
    ("- 1\n", "w.yml: no job's strategy.matrix names pytorch_git_ref"),
    ("jobs:\n  a:\n    strategy:\n      matrix:\n        pytorch_git_ref: [release/2.8]\n"
     "        python_version: ['3.12']\n        exclude: {x: 1}\n",
     "w.yml: the matrix's python_version, pytorch_git_ref or exclude is not a list"),
    ("jobs:\n  a:\n    strategy:\n      matrix:\n        pytorch_git_ref: release/2.8\n"
     "        python_version: ['3.12']\n",
     "w.yml: the matrix's python_version, pytorch_git_ref or exclude is not a list"),
])
def test_a_workflow_the_reader_cannot_read(text: str, message: str) -> None:
    with pytest.raises(Unreadable) as exc:
        tl._from_workflow(text, "w.yml")
    assert str(exc.value).startswith(message)
    assert "\n" not in str(exc.value)


def test_excluded_needs_every_key_equal_as_text() -> None:
    row = {"python_version": 3.12, "pytorch_git_ref": "release/2.9"}
    assert tl._excluded(row, [{"python_version": "3.12"}])
    assert tl._excluded(row, [{"python_version": "3.12", "pytorch_git_ref": "release/2.9"}])
    assert not tl._excluded(row, [{"python_version": "3.12", "pytorch_git_ref": "release/2.8"}])
    assert not tl._excluded(row, [{}, "python_version", {"os": "x"}])
    assert not tl._excluded(row, [])


@pytest.mark.parametrize(("pys", "span"), [(("3.10",), "3.10"), (("3.10", "3.11"), "3.10, 3.11"),
                                           (("3.10", "3.11", "3.12"), "3.10-3.12")])
def test_a_span_of_pythons(pys: tuple[str, ...], span: str) -> None:
    assert tl._span(pys) == span


@pytest.mark.parametrize(("url", "ok"), [
    ("https://rocm.example.amd.com/whl/", True), ("http://rocm.example.amd.com/whl/", False),
    ("https:///whl/", False), ("https://u:p@rocm.example.amd.com/", False),
    ("https://rocm.example.amd.com/?x=1", False), ("https://rocm.example.amd.com/#f", False),
    ("https://rocm.example.amd.com/\x1b[31m", False)])
def test_an_index_url_the_data_may_hold(url: str, ok: bool) -> None:
    assert tl._index_url(url) is ok


def test_url_map_reads_known_channels_with_https_urls() -> None:
    text = 'U = {"stable": "https://s.example/", "nightly": "https://n.example/"}\n'
    assert tl._url_map(text, "v.py", "U") == {"stable": "https://s.example/",
                                              "nightly": "https://n.example/"}
    for bad in ("U = []\n", "U = {}\n", "U = {'stable': 1}\n", "", None):
        with pytest.raises(Unreadable) as exc:
            tl._url_map(bad, "v.py", "U")
        assert str(exc.value) == "v.py: U is not a mapping of channel names to URLs"
    with pytest.raises(Unreadable) as exc:
        tl._url_map('U = {"stable": "https://u:secret@s.example/"}\n', "v.py", "U")
    assert str(exc.value).startswith("v.py: U[stable] is not an https index URL without "
                                     "credentials, query or fragment: https://")
    assert "secret" not in str(exc.value)


def _rock(tmp: Path, files: dict[str, str]) -> tuple[Repo, str]:
    r = FakeRepo(tmp, SLUG)
    return Repo(SLUG, r.dir / ".git"), r.commit(files)


def test_what_a_commit_without_the_files_says(tmp_path: Path) -> None:
    repo, c = _rock(tmp_path, {"README.md": "x\n"})
    with pytest.raises(Unreadable) as exc:
        tl.torch_builds(repo, c)
    assert str(exc.value) == (f"neither {tl.MATRIX_SCRIPT} nor {tl.MATRIX_WORKFLOW} at {c[:9]}")
    with pytest.raises(Unreadable) as exc:
        tl.gpu_targets(repo, c)
    assert str(exc.value) == f"{tl.TARGETS_FILE} at {c[:9]} is missing"
    with pytest.raises(Unreadable) as exc:
        tl.channels(repo, c)
    assert str(exc.value) == f"no {tl.SETUP_VENV} at {c[:9]}"


def test_files_that_name_nothing(tmp_path: Path) -> None:
    venv = 'ROCM_INDEX_URLS_MAP = {"stable": "https://s.example/"}\ndef f(index_subdir): ...\n'
    repo, c = _rock(tmp_path, {
        tl.MATRIX_SCRIPT: 'RELEASE_PYTHON_VERSIONS = ["3.12"]\n'
                          'RELEASE_STABLE_PYTORCH_REFS = {"linux": ["nightly"]}\n',
        tl.TARGETS_FILE: "# no targets\n", tl.SETUP_VENV: venv})
    with pytest.raises(Unreadable) as exc:
        tl.torch_builds(repo, c)
    assert str(exc.value) == f"{tl.MATRIX_SCRIPT} at {c[:9]} names no release/X.Y torch"
    with pytest.raises(Unreadable) as exc:
        tl.gpu_targets(repo, c)
    assert str(exc.value) == f"{tl.TARGETS_FILE} at {c[:9]} lists no therock_add_amdgpu_target"
    with pytest.raises(Unreadable) as exc:
        tl.channels(repo, c)
    assert str(exc.value) == (f"{c[:9]} names no multi-arch channel beside stable "
                              f"({tl.PUBLISH}, {tl.RELEASES_DOC})")


def test_builds_are_ordered_by_number_with_their_evidence(tmp_path: Path) -> None:
    repo, c = _rock(tmp_path, {tl.MATRIX_SCRIPT: (
        'RELEASE_PYTHON_VERSIONS = ["3.12"]\n'
        'RELEASE_STABLE_PYTORCH_REFS = {"linux": ["release/2.10", "release/2.9"]}\n')})
    got = tl.torch_builds(repo, c)
    assert list(got.value) == ["2.9", "2.10"]
    assert (got.evidence, got.detail) == (f"{SLUG}@{c[:9]} {tl.MATRIX_SCRIPT}",
                                          "linux: release/2.10, release/2.9; "
                                          "RELEASE_PYTHON_VERSIONS 3.12")


def test_channels_named_across_files_in_a_fixed_order(tmp_path: Path) -> None:
    venv = ('ROCM_INDEX_URLS_MAP = {"nightly": "https://old-n.example/", '
            '"stable": "https://s.example/"}\ndef f(index_subdir): ...\n')
    publish = 'MULTI_ARCH_INDEX_URLS = {"dev": "https://d.example/", "prerelease": "https://p.example/"}\n'
    repo, c = _rock(tmp_path, {tl.SETUP_VENV: venv, tl.PUBLISH: publish,
                               tl.RELEASES_DOC: "the unified index at https://n.example/whl/, "
                                                "for every GPU\n"})
    got = tl.channels(repo, c)
    assert list(got.value.items()) == [("stable", "https://s.example/"),
                                       ("prerelease", "https://p.example/"),
                                       ("nightly", "https://n.example/whl/"),
                                       ("dev", "https://d.example/")]
    assert got.evidence == f"{SLUG}@{c[:9]} {tl.SETUP_VENV}, {tl.PUBLISH}, {tl.RELEASES_DOC}"
    assert got.detail == "multi-arch channels"
    plain = tl.channels(*_rock(tmp_path / "b", {tl.SETUP_VENV: venv.split("def")[0]}))
    assert (plain.value, plain.detail) == ({"nightly": "https://old-n.example/",
                                            "stable": "https://s.example/"}, "ROCM_INDEX_URLS_MAP")


def test_a_releases_doc_and_no_publisher(tmp_path: Path) -> None:
    venv = 'ROCM_INDEX_URLS_MAP = {"nightly": "https://x.example/"}\nindex_subdir = 1\n'
    repo, c = _rock(tmp_path, {tl.SETUP_VENV: venv,
                               tl.RELEASES_DOC: "a unified  index at https://n.example/a.\n",
                               tl.PUBLISH: 'MULTI_ARCH_INDEX_URLS = {"dev": "https://d.example/"}\n'})
    got = tl.channels(repo, c)
    assert got.value == {"nightly": "https://n.example/a", "dev": "https://d.example/"}
    assert got.evidence == f"{SLUG}@{c[:9]} {tl.PUBLISH}, {tl.RELEASES_DOC}"
