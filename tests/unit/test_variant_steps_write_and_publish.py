"""The ``--variants`` step handlers (``toolkit.run.variant_steps``): build-variant copies the
worktree without a build's leftovers and builds there; make-variant names the target's wheel
and writes it as the variant wheel ``<base>-<label>.whl`` (the label is the gfx target, the
variant's own name: README "--variants"); publish-variant copies it into a ``dest`` it
creates, replacing only the earlier wheels of that label. Commands are real (``sh -c``);
wheel names are written by hand."""

from __future__ import annotations

import io
import os
import zipfile
from pathlib import Path

import pytest

from toolkit.core.command import Command
from toolkit.core.errors import StepFailed
from toolkit.core.steps import BuildVariant, BuildWheel, MakeVariant, PublishVariant, Step
from toolkit.plan.layout import Layout
from toolkit.plan.model import Plan
from toolkit.plan.recipes import load_matrix
from toolkit.run import variant_steps
from toolkit.run.context import Run

BUILD = "apex-1.8.0-cp311-rocm7.0"


def a_run(tmp_path: Path) -> Run:
    plan = Plan(load_matrix().build(BUILD), ("gfx942",), None, ())
    return Run(plan, Layout(tmp_path / "work", tmp_path / "cache"), io.StringIO())


def a_wheel(folder: Path, name: str = "demo_pkg-1.8.0-py3-none-any.whl") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    version = name.split("-")[1]
    wheel = folder / name
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("demo_pkg/__init__.py", "X = 1\n")
        zf.writestr(f"demo_pkg-{version}.dist-info/METADATA",
                    f"Metadata-Version: 2.1\nName: demo-pkg\nVersion: {version}\n")
        zf.writestr(f"demo_pkg-{version}.dist-info/WHEEL",
                    "Wheel-Version: 1.0\nGenerator: t\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        zf.writestr(f"demo_pkg-{version}.dist-info/RECORD", "")
    return wheel


def test_make_variant_writes_the_targets_variant_wheel_and_learns_it(tmp_path: Path) -> None:
    run = a_run(tmp_path)
    run.values["SHA"] = "8d873bb6" + "0" * 32
    a_wheel(tmp_path / "house")
    staging = tmp_path / "staging"
    (staging / "named").mkdir(parents=True)
    (staging / "named" / "stale.whl").write_bytes(b"")  # an earlier run's: removed
    step = Step("make-variant-gfx942", "v", MakeVariant("gfx942", str(tmp_path / "house"),
                                                        str(staging), "7.0", "toolkit"))
    result = variant_steps.make_variant_step(step, run)
    assert not isinstance(result, str) and result.returncode == 0
    want = staging / "demo_pkg-1.8.0+rocm7.0git8d873bb6-py3-none-any-gfx942.whl"
    assert run.values["VARIANT_WHEEL"] == str(want) == run.values["VARIANT_WHEEL_gfx942"]
    assert sorted(p.name for p in staging.iterdir()) == [want.name]  # named/ is gone
    with zipfile.ZipFile(want) as zf:
        assert "demo_pkg-1.8.0+rocm7.0git8d873bb6.dist-info/variant.json" in zf.namelist()
    assert f"# wrote the wheel variant {want}\n" in run.log.getvalue()  # type: ignore[attr-defined]


def test_publish_variant_creates_dest_and_replaces_only_its_labels_wheels(
        tmp_path: Path) -> None:
    run = a_run(tmp_path)
    staging = tmp_path / "staging"
    new = a_wheel(staging, "demo_pkg-1.9.0-py3-none-any-gfx942.whl")
    dest = tmp_path / "dist" / "deeper" / BUILD
    step = Step("publish-variant-gfx942", "p", PublishVariant("gfx942", str(staging), str(dest)))
    variant_steps.publish_variant(step, run)
    assert [p.name for p in dest.iterdir()] == [new.name]
    # a second publish: the earlier gfx942 wheel goes, the fat wheel and gfx90a's stay
    for kept in ("demo_pkg-1.8.0-py3-none-any.whl", "demo_pkg-1.8.0-py3-none-any-gfx90a.whl"):
        (dest / kept).write_bytes(b"")
    (dest / new.name).rename(dest / "demo_pkg-1.8.0-py3-none-any-gfx942.whl")
    a_wheel(staging, new.name)
    variant_steps.publish_variant(step, run)
    assert sorted(p.name for p in dest.iterdir()) == sorted([
        "demo_pkg-1.8.0-py3-none-any.whl", "demo_pkg-1.8.0-py3-none-any-gfx90a.whl",
        new.name])
    assert zipfile.ZipFile(dest / new.name).testzip() is None  # the whole wheel
    assert not new.exists()  # the staged copy is gone
    assert run.values["VARIANT_WHEEL_gfx942"] == str(dest / new.name)
    assert not any(p.name.endswith(".tmp") for p in dest.iterdir())
    assert f"# published {dest / new.name}\n" in run.log.getvalue()  # type: ignore[attr-defined]


def test_a_publish_variant_that_cannot_write_leaves_no_half_copy(tmp_path: Path) -> None:
    run = a_run(tmp_path)
    staging = tmp_path / "staging"
    a_wheel(staging, "demo_pkg-1.9.0-py3-none-any-gfx942.whl")
    dest = tmp_path / "dest"
    dest.mkdir()
    (dest / "demo_pkg-1.9.0-py3-none-any-gfx942.whl").mkdir()  # a folder in the way
    step = Step("publish-variant-gfx942", "p", PublishVariant("gfx942", str(staging), str(dest)))
    with pytest.raises(OSError):
        variant_steps.publish_variant(step, run)
    assert [p.name for p in dest.iterdir()] == ["demo_pkg-1.9.0-py3-none-any-gfx942.whl"]


def test_publishing_from_a_staging_folder_without_exactly_one_wheel_says_what_it_found(
        tmp_path: Path) -> None:
    """publish-variant takes the one wheel its staging folder holds: an empty folder is a
    failed step (exit 5) naming the folder and saying none was found; two wheels, both named."""
    staging = tmp_path / "staging"
    staging.mkdir()
    step = Step("publish-variant-gfx942", "p",
                PublishVariant("gfx942", str(staging), str(tmp_path / "dest")))
    with pytest.raises(StepFailed) as caught:
        variant_steps.publish_variant(step, a_run(tmp_path))
    assert caught.value.exit_code == 5 and str(staging) in caught.value.message
    assert "none" in caught.value.message.replace(str(staging), "").split()
    one, two = (a_wheel(staging, f"demo_pkg-1.9.0-py3-none-any-{t}.whl") for t in ("gfx90a", "gfx942"))
    with pytest.raises(StepFailed) as caught:
        variant_steps.publish_variant(step, a_run(tmp_path))
    assert one.name in caught.value.message and two.name in caught.value.message
    assert not (tmp_path / "dest").exists()  # nothing published


def test_make_variants_manifest_row_runs_no_command_and_passes_the_schema(
        tmp_path: Path) -> None:
    """make-variant runs no command of its own: its row in the manifest has an empty argv,
    a list of strings as the manifest schema (``toolkit.run.manifest_schema``) requires of
    every step row; the written manifest passes that schema."""
    from toolkit.run import jobs, manifest
    from toolkit.run.manifest_schema import validate

    run = a_run(tmp_path)
    run.values["SHA"] = "8d873bb6" + "0" * 32
    a_wheel(tmp_path / "house")
    step = Step("make-variant-gfx942", "v", MakeVariant("gfx942", str(tmp_path / "house"),
                                                        str(tmp_path / "staging"), "7.0", "toolkit"))
    result = variant_steps.make_variant_step(step, run)
    assert not isinstance(result, str)
    run.results.append(result)
    data = manifest.read(jobs.write_manifest(run, None))
    [row] = data["steps"]
    assert row["name"] == "make-variant-gfx942" and row["argv"] == []
    validate(data, "manifest")


def test_build_variant_copies_the_sources_without_build_leftovers(tmp_path: Path) -> None:
    src = tmp_path / "src"
    for rel in ("setup.py", "pkg/a.py", "build/obj.o", "dist/x.whl", "x.egg-info/PKG-INFO",
                "pkg/__pycache__/a.pyc", ".nox/s"):
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(rel)
    os.symlink("setup.py", src / "link.py")
    worktree = tmp_path / "variant-src"
    (worktree / "old").mkdir(parents=True)  # an earlier copy: replaced
    house = tmp_path / "house"
    build = Command(("sh", "-c", f"mkdir -p {house}; ls -A {worktree} > {tmp_path}/seen"))
    step = Step("build-variant-gfx942", "b", BuildVariant(
        "gfx942", str(src), BuildWheel(build, str(house), str(worktree), str(tmp_path / "env"))))
    run = a_run(tmp_path)
    result = variant_steps.build_variant(step, run)
    assert not isinstance(result, str) and result.returncode == 0
    assert (tmp_path / "seen").read_text().split() == ["link.py", "pkg", "setup.py"]
    assert sorted(os.listdir(worktree / "pkg")) == ["a.py"]
    assert os.readlink(worktree / "link.py") == "setup.py"  # a symlink stays one
    assert f"# copied {src} to {worktree}\n" in run.log.getvalue()  # type: ignore[attr-defined]


def test_build_variant_from_a_missing_tree_is_one_line(tmp_path: Path) -> None:
    src, worktree = tmp_path / "none", tmp_path / "variant-src"
    step = Step("build-variant-gfx942", "b", BuildVariant(
        "gfx942", str(src), BuildWheel(Command(("true",)), str(tmp_path / "house"),
                                       str(worktree), str(tmp_path / "env"))))
    with pytest.raises(StepFailed) as caught:
        variant_steps.build_variant(step, a_run(tmp_path))
    assert caught.value.message.startswith(
        f"build-variant-gfx942: cannot copy {src} to {worktree}: ")
    assert caught.value.exit_code == 5


def test_recorded_variants_are_each_labels_wheel_and_sha256(tmp_path: Path) -> None:
    wheel = tmp_path / "w.whl"
    wheel.write_bytes(b"abc")
    got = variant_steps.recorded_variants({"VARIANT_WHEEL_gfx942": str(wheel),
                                           "VARIANT_WHEEL_gfx90a": str(tmp_path / "gone.whl"),
                                           "VARIANT_WHEEL": str(wheel), "WHEEL": "x"})
    assert got == {"gfx90a": {"wheel": str(tmp_path / "gone.whl"), "sha256": None},
                   "gfx942": {"wheel": str(wheel), "sha256": "ba7816bf8f01cfea414140de5dae2223"
                                                             "b00361a396177a9cb410ff61f20015ad"}}
