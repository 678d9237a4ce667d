"""Edges the keyword arguments of the run layer exist for, through the public functions:
an output folder whose parents are missing is created, an existing one is reused; a copied
source keeps a symlink as a link (POSIX: ``os.readlink`` of the copy names the same target);
a publish that fails before its temporary copy exists raises the copy's own error; an index
document and a difference line do not depend on the key order of their input (JSON objects are
unordered, RFC 8259 section 4). Wheels are small zip files written by hand."""

from __future__ import annotations

import io
import json
import os
import shutil
import zipfile
from pathlib import Path

import pytest

from tests.fixtures.wheels import make_wheel
from toolkit.core.steps import CopySources, Publish, PublishVariant, Step
from toolkit.plan.layout import Layout
from toolkit.plan.model import Options, Plan
from toolkit.plan.recipes import load_matrix
from toolkit.run import sources, variant_steps
from toolkit.run.building import publish
from toolkit.run.context import Run
from toolkit.run.identity import identity_differences
from toolkit.run.variant_wheels import index_documents
from toolkit.run.wheels import retag


def a_run(tmp_path: Path) -> Run:
    plan = Plan(load_matrix().builds[0], ("gfx942",), None, (), options=Options(allow_dirty=True))
    return Run(plan, Layout(tmp_path / "work", tmp_path / "cache"), io.StringIO())


def a_wheel(folder: Path, name: str = "demo_pkg-1.8.0-py3-none-any.whl",
            variant_json: str | None = None) -> Path:
    files = {"demo_pkg/__init__.py": "X = 1\n"}
    if variant_json is not None:
        files["demo_pkg-1.8.0.dist-info/variant.json"] = variant_json
    return make_wheel(folder, "demo_pkg", "1.8.0", "py3-none-any", files, filename=name)


def test_retag_creates_missing_parent_folders_and_reuses_an_existing_one(tmp_path: Path) -> None:
    src = a_wheel(tmp_path / "in")
    dest = tmp_path / "out" / "deeper" / "still"
    first = retag(src, dest, version="1.8.0+a")
    second = retag(src, dest, version="1.8.0+b")  # dest exists now: no FileExistsError
    assert sorted(p.name for p in dest.iterdir()) == sorted([first.name, second.name])
    assert zipfile.ZipFile(second).testzip() is None


def test_a_copied_source_keeps_its_symlink_as_a_link(tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "real").mkdir(parents=True)
    (src / "real" / "a.txt").write_text("a")
    (src / "link.txt").symlink_to("real/a.txt")
    wt = tmp_path / "wt"
    sources.copy_sources(Step("get-sources", "copy", CopySources(str(src), str(wt))),
                         a_run(tmp_path))
    assert (wt / "link.txt").is_symlink()
    assert os.readlink(wt / "link.txt") == "real/a.txt"


def test_publish_creates_a_dest_whose_parents_are_missing(tmp_path: Path) -> None:
    staged = a_wheel(tmp_path / "staged", "x-1.0-py3-none-any.whl")
    run = a_run(tmp_path)
    run.values["WHEEL"] = str(staged)
    dest = tmp_path / "dist" / "deeper" / "b"
    publish(Step("publish", "", Publish("{WHEEL}", str(dest))), run)
    assert [p.name for p in dest.iterdir()] == ["x-1.0-py3-none-any.whl"]


def test_a_variant_publish_that_cannot_copy_raises_the_copys_own_error(tmp_path: Path) -> None:
    """A FIFO where the staged wheel is: shutil.copyfile refuses it (SpecialFileError, an
    OSError) before it opens the temporary copy, so there is no copy to remove and that error,
    not a FileNotFoundError of the clean-up, reaches the caller."""
    staging = tmp_path / "staging"
    staging.mkdir()
    os.mkfifo(staging / "demo_pkg-1.8.0-py3-none-any-gfx942.whl")
    dest = tmp_path / "dist"
    step = Step("publish-variant-gfx942", "p", PublishVariant("gfx942", str(staging), str(dest)))
    with pytest.raises(shutil.SpecialFileError):
        variant_steps.publish_variant(step, a_run(tmp_path))
    assert list(dest.iterdir()) == []


def variant_doc(order: list[str]) -> str:
    """One gfx942 variant.json whose objects list their keys in ``order`` (or reversed)."""
    feats = {"name": ["gfx942"], "arch": ["cdna3"]}
    doc = {"variants": {"gfx942": {"amd": feats if order[0] == "a" else dict(reversed(
        list(feats.items())))}}, "providers": {"amd": {"requires": ["x"], "plugin-api": "p"}},
           "default-priorities": {"namespace": ["amd"]}}
    if order[0] != "a":
        doc = {k: doc[k] for k in reversed(list(doc))}
        doc["providers"]["amd"] = {"plugin-api": "p", "requires": ["x"]}
    return json.dumps(doc)


def test_a_variants_index_is_the_same_bytes_whatever_key_order_the_wheel_wrote(
        tmp_path: Path) -> None:
    name = "demo_pkg-1.8.0-py3-none-any-gfx942.whl"
    a_wheel(tmp_path / "one", name, variant_doc(["a"]))
    a_wheel(tmp_path / "two", name, variant_doc(["z"]))
    one, warn_one = index_documents(tmp_path / "one")
    two, warn_two = index_documents(tmp_path / "two")
    assert warn_one == warn_two == []
    assert list(one) == ["demo_pkg-1.8.0-variants.json"]
    assert one == two
    assert json.loads(one["demo_pkg-1.8.0-variants.json"])["variants"]["gfx942"]["amd"] == {
        "arch": ["cdna3"], "name": ["gfx942"]}


def test_a_difference_line_shows_both_objects_in_one_key_order(tmp_path: Path) -> None:
    recorded = {"source": {"tree": "t1", "sha": "s"}}
    here = {"source": {"sha": "s", "tree": "t2"}}
    assert identity_differences(recorded, here) == [
        'source {"sha": "s", "tree": "t1"} recorded, {"sha": "s", "tree": "t2"} here']
