"""``matrix --format github --changed-since FOLDER``, in process: stdout is the matrix alone;
stderr says, in one line, how many of how many builds changed and how many manifests were
read, identities published and manifests left out, then names what was left out, at most 20
lines of it (a long list is cut, never a flood on CI's log). Manifests here are CI's own for
the entries (tests/fixtures/manifests.py), recorded as failed builds: read, but no published
identity, so every entry is still to build."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fixtures.manifests import for_entry
from toolkit.cli.main import main
from toolkit.data.ci import github_matrix, load_ci
from toolkit.plan.recipes import load_matrix


def test_the_note_counts_and_names_what_was_left_out(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    m = load_matrix()
    builds = m.select(packages=["apex"], rocm=["7.0"], python=["3.12"])
    entries = github_matrix(m, load_ci(m), "workflow_dispatch", builds=builds)
    assert entries
    data = for_entry(m, entries[0])
    data["outcome"] = "failed"
    for i in range(22):
        (tmp_path / f"b{i:02d}.manifest.json").write_text(json.dumps(data))
    assert main(["matrix", "--format", "github", "--package", "apex", "--rocm", "7.0",
                 "--python", "3.12", "--changed-since", str(tmp_path)]) == 0
    out, err = capsys.readouterr()
    assert [e["id"] for e in json.loads(out)["include"]] == [e.build.id for e in entries]
    lines = err.splitlines()
    assert lines[0] == (f"changed since {tmp_path}: {len(entries)} of {len(entries)} builds "
                        "(22 manifests read, 0 identities published, 22 left out)")
    left = lines[1:]
    assert len(left) == 20 and all(x.startswith("  left out: ") for x in left)
    assert left[0] == f"  left out: {tmp_path / 'b00.manifest.json'}: build failed"
