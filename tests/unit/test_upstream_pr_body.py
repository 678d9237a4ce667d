"""`toolkit upstream --write --pr-body FILE`: the pull request body the scheduled upstream job
(.github/workflows/upstream.yml) opens or updates, from real runs of the command against small
hand-made upstream repositories (tests/unit/upstream_fakes.py) with one change each. Every
expectation is written from what the test put into those repositories and the data."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.unit.upstream_fakes import SCRIPT, World, _matrix_script
from toolkit.cli.main import main

WRITTEN = "### Written by `--write` (this pull request's change)"
LEFT = "### Needs a maintainer (`review:` and unsettled `drift:`)"


@pytest.fixture
def up(world: World) -> World:
    return world


def _body(up: World, tmp_path: Path, capsys: pytest.CaptureFixture[str],
          *flags: str) -> tuple[int, str]:
    body = tmp_path / "body.md"
    code = main(["upstream", str(up.root), *flags, "--pr-body", str(body)])
    capsys.readouterr()
    return code, body.read_text(encoding="utf-8")


def _section(body: str, heading: str) -> list[str]:
    """The lines of the fenced block under ``heading`` ([] for "None.")."""
    rest = body.split(heading + "\n\n", 1)[1]
    if rest.startswith("None."):
        return []
    fence = re.match(r"(`{3,})text\n", rest)
    assert fence, rest[:80]
    return rest[fence.end():].split("\n" + fence.group(1) + "\n", 1)[0].splitlines()


def test_body_lists_what_write_changed_and_what_needs_a_maintainer(
        up: World, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # upstream PyTorch makes 2.6.0 stable on ROCm 6.1 (the data lacks that pair: --write adds
    # it), and ROCm/apex cuts release/1.2.0 (a new version: its build flags need a review)
    c26 = up.repo("pytorch/test-infra").commit({SCRIPT: _matrix_script("2.6.0", ["6.1"])})[:9]
    new = up.repo("ROCm/apex").commit({"version.txt": "1.2.0\n"}, branch="release/1.2.0",
                                      base="release/1.1.0")[:9]
    code, body = _body(up, tmp_path, capsys, "--write")
    assert code == 1, "the review is left: the run still fails"

    written = _section(body, WRITTEN)
    assert len(written) == 1
    assert written[0].startswith("drift: ROCm 6.1 torch 2.6: data none; upstream "
                                 "torch==2.6.0+rocm6.1 from https://download.pytorch.org/whl/rocm6.1/")
    assert f"pytorch/test-infra@{c26} " in written[0]
    assert "Files: `toolkit/data/rocm.toml`" in body
    assert 'torch."2.6"' in (up.data / "rocm.toml").read_text(), "the body says what was written"

    left = _section(body, LEFT)
    assert len(left) == 1
    assert left[0].startswith("review: apex 1.2.0: ")
    assert f"release/1.2.0 @{new}" in left[0]
    assert f"ROCm/apex@{up.c['apex11'][:9]}..{new}" in left[0], "the range to review"

    # the fixture's fbgemm_gpu v1.0.1 tag (a patch release the data does not use) is a note
    assert "<details><summary>" in body and "fbgemm_gpu 1.0.1: data v1.0.0" in body
    assert "1 fact(s) written, 1 left for a maintainer" in body
    assert body.startswith("<!-- toolkit upstream --pr-body -->\n")


def test_no_drift_body_says_none(up: World, tmp_path: Path,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    before = {p.name: p.read_text() for p in up.data.iterdir()}
    code, body = _body(up, tmp_path, capsys, "--write")
    assert code == 0
    assert _section(body, WRITTEN) == [] and _section(body, LEFT) == []
    assert "Files:" not in body and "0 fact(s) written, 0 left" in body
    assert {p.name: p.read_text() for p in up.data.iterdir()} == before


def test_upstream_text_is_escaped_masked_and_cannot_close_the_fence(
        up: World, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    hostile = "\x1b[2J1.1.0 ```\n## forged https://bot:s3cret@evil.example/x @everyone"
    up.repo("ROCm/apex").commit({"version.txt": hostile + "\n"}, branch="release/1.1.0")
    code, body = _body(up, tmp_path, capsys)
    assert code == 1
    assert "\x1b" not in body and "s3cret" not in body
    assert "\n## forged" not in body, "no line of upstream text starts a heading"
    left = _section(body, LEFT)
    line = next(ln for ln in left if ln.startswith("drift: apex 1.1.0 version.txt"))
    assert "\\x1b[2J1.1.0 ```" in line and "https://***@evil.example/x" in line
    assert "\n````text\n" in body, "a fence one backtick longer than the text's longest run"


def test_an_unwritable_body_is_refused_before_anything_is_written(
        up: World, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    up.repo("pytorch/test-infra").commit({SCRIPT: _matrix_script("2.6.0", ["6.1"])})
    before = (up.data / "rocm.toml").read_text()
    code = main(["upstream", str(up.root), "--write", "--pr-body",
                 str(tmp_path / "no-such-dir" / "body.md")])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert "--pr-body" in err and "no such folder" in err
    assert (up.data / "rocm.toml").read_text() == before


def test_without_dir_the_body_names_the_partial_clones_it_read(
        up: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """README and ``--help``: without DIR, upstream is read through bare partial clones in the
    cache (the scheduled job's way). The body's first sentence names what was read: DIR when
    given, else the upstream repositories, saying they are the partial clones (the help's
    "default: partial clones in the cache"), in one parenthesis. The clones come from the
    hand-made world (``TOOLKIT_UPSTREAM_REMOTE``, a folder of OWNER+NAME/repo), cloned for
    real into this test's cache."""
    monkeypatch.setenv("TOOLKIT_UPSTREAM_REMOTE", str(up.root))
    monkeypatch.setenv("TOOLKIT_CACHE_DIR", str(tmp_path / "cache"))
    body_file = tmp_path / "body.md"
    assert main(["upstream", "--pr-body", str(body_file)]) == 0
    capsys.readouterr()
    body = body_file.read_text(encoding="utf-8")
    assert (tmp_path / "cache" / "upstream" / "ROCm+apex.git").is_dir()
    sentence = re.search(r"`toolkit upstream --write` against (.*): 0 fact\(s\) written", body)
    assert sentence, body[:300]
    assert sentence.group(1) == "the upstream repositories (partial clones)"
    code, with_dir = _body(up, tmp_path, capsys)
    assert code == 0 and f"against {up.root}: 0 fact(s) written" in with_dir
