"""``invoke repro`` plans the build again at the commit the manifest recorded (README: "the
sources pinned to the recorded commit"), not at the version's branch, whose head may have
moved since; and in the work folder it is given."""

from __future__ import annotations

from pathlib import Path

from tests.fixtures.manifests import for_entry
from toolkit.data.ci import github_matrix, load_ci
from toolkit.plan.layout import Layout
from toolkit.plan.recipes import load_matrix
from toolkit.verify.repro import reconstruct


def test_the_recorded_commit_is_the_ref_planned(tmp_path: Path) -> None:
    m = load_matrix()
    entry = github_matrix(m, load_ci(m), "workflow_dispatch", builds=m.select(packages=["apex"]))[0]
    data = for_entry(m, entry)
    sha = data["source"]["sha"]
    assert data["source"]["ref"] != sha  # a branch or tag was recorded beside the commit
    layout = Layout(tmp_path / "w", tmp_path / "c")
    again, used = reconstruct(data, environ={}, layout=layout)
    assert again.build.id == entry.build.id
    assert again.build.pkg_version.ref == sha
    assert used.root == tmp_path / "w"
