"""Known failures and TheRock's builds against the real ROCm/TheRock: the shipped entries'
evidence holds at the commits they cite and at the newest one; an exclusion TheRock really
lifted (gfx1250 for torch 2.13, ROCm/TheRock@409fe0165) reads as evidence gone; the Pythons
rocm.toml gives TheRock's torch are those its release workflow builds at the cited commit.
A commit of a TheRock release is read at that release's ref (tag, branch, BKC branch, or
main's last commit at its version), as rocm.toml's release is."""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest

from tests.upstream.conftest import Upstream
from toolkit.data.known import KnownFailure
from toolkit.data.matrix import load_matrix
from toolkit.verify.upstream import known as rule
from toolkit.verify.upstream.model import Context
from toolkit.verify.upstream.repos import Repo

SLUG = "ROCm/TheRock"
MATRIX_FILE = "build_tools/github_actions/configure_pytorch_release_matrix.py"


@pytest.fixture
def therock(upstream: dict[str, Upstream]) -> Repo:
    if "TheRock" not in upstream:
        pytest.skip("TOOLKIT_UPSTREAM_DIR lacks ROCm/TheRock")
    return Repo(SLUG, upstream["TheRock"].git_dir)


def _lines(therock: Repo, *entries: KnownFailure) -> list[str]:
    ctx = Context(SimpleNamespace(known_failures=entries), therock.git_dir,  # type: ignore[arg-type]
                  {SLUG: therock})
    return [f.line() for f in rule.check(ctx)]


def test_shipped_entries_evidence_holds_upstream(therock: Repo) -> None:
    entries = load_matrix().known_failures
    assert entries  # the file holds real entries
    cited = [e for e in entries if f"{SLUG}@" in e.evidence]
    assert cited
    for e in cited:
        for commit in re.findall(rf"{SLUG}@([0-9a-f]+)", e.evidence):
            assert therock.commit(commit), f"{e.id}: no commit {commit}"
    assert not [ln for ln in _lines(therock, *cited) if not ln.startswith("note:")]


def test_an_exclusion_therock_lifted_reads_as_evidence_gone(therock: Repo) -> None:
    # on main at 10.1, 412f4edf7 still excluded gfx125X-dcgpu from torch 2.13; 409fe0165 (its
    # child) enabled gfx1250 for it. 10.1 is read at its BKC branch (no tag or
    # release/therock-10.1 branch), which holds 409fe0165: the evidence is gone there.
    entry = KnownFailure("torch-2.13-no-gfx1250", "apex", "install-torch", "no device package",
                         f"{SLUG}@412f4edf7 {MATRIX_FILE}",
                         holds=r'"release/2\.13": \{[^}]*"gfx125X-dcgpu"')
    bkc = [r for r in therock.refs("refs/heads/release/bkc/") if "therock-10.1-" in r]
    at = therock.short(therock.commit(max(bkc)) or "")
    lines = _lines(therock, entry)
    assert len(lines) == 1
    assert f"evidence gone at {at}: re-try with --include-known-failures" in lines[0]


def test_a_nightly_only_release_is_read_at_its_last_main_commit(therock: Repo) -> None:
    # 7.15 never had a tag or branch: it is read at main's last 7.15 commit (c0f14ee2c, the
    # parent of "Raise version to 10.0.0"), where torch 2.13 still excluded gfx125X-dcgpu,
    # not at HEAD (which enabled it, 409fe0165)
    entry = KnownFailure("torch-2.13-no-gfx1250", "apex", "install-torch", "no device package",
                         f"{SLUG}@c0f14ee2c {MATRIX_FILE}",
                         holds=r'"release/2\.13": \{[^}]*"gfx125X-dcgpu"')
    assert _lines(therock, entry) == []


def _listed(text: str, name: str) -> list[str]:
    m = re.search(rf"{name}\s*[=:]\s*\[([^\]]*)\]", text)
    return re.findall(r'"([0-9.]+t?)"', m.group(1)) if m else []


def test_therock_torch_pythons_are_its_release_workflows(therock: Repo) -> None:
    checked = 0
    for rel in load_matrix().rocm.values():
        for torch, src in rel.torch.items():
            if src.kind != "therock":
                continue
            m = re.match(rf"{SLUG}@([0-9a-f]+) (\S+)", src.evidence)
            assert m and src.python, f"ROCm {rel.version} torch {torch}: no cited file or Pythons"
            text = therock.show(m.group(1), m.group(2)) or ""
            listed = (_listed(text, "RELEASE_PYTHON_VERSIONS") or _listed(text, "PYTHON_VERSIONS")
                      or _listed(text, "python_version"))
            excluded = set(re.findall(
                rf'pytorch_git_ref: "release/{re.escape(torch)}"\s*\n\s*python_version: "([0-9.]+)"',
                text))
            assert [p for p in listed if p not in excluded] == list(src.python), \
                f"ROCm {rel.version} torch {torch}"
            checked += 1
    # every TheRock torch of the data was checked (counted independently of the loop above)
    assert checked == sum(1 for rel in load_matrix().rocm.values()
                          for src in rel.torch.values() if src.kind == "therock") > 0
