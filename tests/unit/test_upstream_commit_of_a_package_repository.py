"""The upstream commit a build's identity names (``toolkit.run.identity.upstream_commit``):
``owner/name@commit`` of the package's own repository, read from its version's evidence
("<owner>/<repo>@<short commit> <file>", the data's rule), at the version's own ref when the
evidence names several; None for a repository that is no ``owner/name`` on a network git
host (https, http, ssh, git URLs; a local path or file:// URL names no upstream). The
expected values are written here by hand."""

from __future__ import annotations

import dataclasses

import pytest

from toolkit.data.matrix import Build
from toolkit.plan.recipes import load_matrix
from toolkit.run.identity import upstream_commit

EVIDENCE = "ROCm/apex@102ee921 (release/1.8.0) setup.py"


def build_with(repo: str, evidence: str = EVIDENCE, ref: str = "release/1.8.0") -> Build:
    b = load_matrix().build("apex-1.8.0-cp311-rocm7.0")
    return dataclasses.replace(
        b, package=dataclasses.replace(b.package, repo=repo),
        pkg_version=dataclasses.replace(b.pkg_version, evidence=evidence, ref=ref))


@pytest.mark.parametrize("repo", [
    "https://github.com/ROCm/apex.git", "https://github.com/ROCm/apex",
    "http://github.com/ROCm/apex.git", "http://mirror.example/ROCm/apex/",
    "ssh://git@github.com/ROCm/apex.git", "git://github.com/ROCm/apex"])
def test_each_network_url_of_the_repository_names_its_commit(repo: str) -> None:
    assert upstream_commit(build_with(repo)) == "ROCm/apex@102ee921"


@pytest.mark.parametrize("repo", [
    "file://host/ROCm/apex.git",  # owner/name, but a local scheme
    "ftp://github.com/ROCm/apex.git",
    "git@github.com:ROCm/apex.git",  # scp-like: no scheme at all
    "/src/ROCm/apex", "ROCm/apex",
    "https://github.com/apex.git",  # no owner
    "https://example.com/group/ROCm/apex.git"])  # more than owner/name
def test_a_repository_that_is_no_owner_and_name_on_a_git_host_names_none(repo: str) -> None:
    assert upstream_commit(build_with(repo)) is None


def test_the_commit_read_at_the_versions_ref_wins_over_an_earlier_one() -> None:
    evidence = ("ROCm/apex@aaaaaaa1 (master) setup.py; ROCm/apex@BBBBBBB2 (release/1.8.0) "
                "setup.py")
    assert upstream_commit(build_with("https://github.com/ROCm/apex", evidence)) == (
        "ROCm/apex@bbbbbbb2")
    # without the ref named, the repository's first commit in the evidence
    other = build_with("https://github.com/ROCm/apex", evidence, ref="release/9.9")
    assert upstream_commit(other) == "ROCm/apex@aaaaaaa1"


@pytest.mark.parametrize(("evidence", "expected"), [
    ("rocm/APEX@0123456789abcdef0123456789abcdef01234567 setup.py",
     "ROCm/apex@0123456789abcdef0123456789abcdef01234567"),  # any case, up to 40 digits
    ("pytorch/apex@1234567 setup.py; ROCm/apex@7654321 setup.py", "ROCm/apex@7654321"),
    ("ROCm/apex@123456 setup.py", None),  # six digits: no commit
    ("ROCm/apex@" + "a" * 41 + " setup.py", None),  # 41 digits: no commit either
    ("ROCm/apex@1234567g setup.py", None),  # not hex to the end of a word
    ("myROCm/apex@1234567 setup.py", None),  # another owner ending in the same letters
    ("fork/ROCm/apex@1234567 setup.py", None),
    ("", None)])
def test_only_the_repositorys_own_whole_slug_and_a_hex_commit_count(
        evidence: str, expected: str | None) -> None:
    assert upstream_commit(build_with("https://github.com/ROCm/apex.git", evidence)) == expected
