"""``--variants`` (issue 31 part 5): the plan says everything (one build per target with
``PYTORCH_ROCM_ARCH`` that target alone, the variant written, checked for that target,
published after the fat wheel), and the handlers do what it says."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from pathlib import Path

import pytest

from tests.fixtures.native import hipcc
from tests.fixtures.wheels import make_wheel
from toolkit.cli.main import main
from toolkit.core.errors import UsageError
from toolkit.core.steps import BuildVariant, CheckWheel, MakeVariant, PublishVariant, Step
from toolkit.data.matrix import load_matrix
from toolkit.env.host import HostFacts
from toolkit.plan.layout import Layout
from toolkit.plan.model import Options
from toolkit.plan.planner import plan
from toolkit.plan.recipes.sample import demo_build
from toolkit.run.context import Run
from toolkit.run.variant_steps import make_variant_step, publish_variant, recorded_variants
from toolkit.run.variant_wheels import make_variant
from toolkit.verify.variant_repro import rerun, variant_verdict

TARGETS = ("gfx90a", "gfx908")


def _plan(tmp: Path, **kw: object) -> tuple[Run, list[Step]]:
    layout = Layout(tmp / "work", tmp / "cache")
    p = plan(load_matrix(), demo_build("3.11", ("/usr", "5.2")),
             Options(gfx=TARGETS, rocm_from="system", **kw),  # type: ignore[arg-type]
             HostFacts(), layout)
    return Run(p, layout, io.StringIO()), list(p.steps)


def test_the_plan_has_one_group_per_target_after_the_fat_wheel(tmp_path: Path) -> None:
    _run, steps = _plan(tmp_path, variants=True)
    names = [s.name for s in steps]
    tail = names[names.index("smoke") + 1:]
    assert tail == ["build-variant-gfx90a", "make-variant-gfx90a", "check-variant-gfx90a",
                    "build-variant-gfx908", "make-variant-gfx908", "check-variant-gfx908",
                    "publish", "publish-variant-gfx90a", "publish-variant-gfx908"]
    fat = next(s for s in steps if s.name == "build-wheel")
    assert fat.env["PYTORCH_ROCM_ARCH"] == "gfx90a;gfx908"
    for target in TARGETS:
        build = next(s for s in steps if s.name == f"build-variant-{target}")
        assert isinstance(build.action, BuildVariant)
        assert build.env["PYTORCH_ROCM_ARCH"] == target  # that target alone
        assert build.action.wheel.worktree != fat.action.worktree  # type: ignore[union-attr]
        assert build.action.wheel.wheelhouse.endswith(f"/variants/{target}/wheelhouse")
        assert build.cwd == build.action.wheel.worktree
        check = next(s for s in steps if s.name == f"check-variant-{target}")
        assert isinstance(check.action, CheckWheel)
        assert check.argv[3:7] == ("check", "{VARIANT_WHEEL}", "--gfx", target)
        # what --dry-run says it judges: that target, and a label the code does not back
        assert f"for {target} " in check.description
        assert "a label its code does not back" in check.description
    assert [s.name for s in _plan(tmp_path)[1] if "variant" in s.name] == []  # not asked
    # each variant lands beside the fat wheel: the work folder's dist/<build id> (README)
    build_id = demo_build("3.11", ("/usr", "5.2")).id
    for target in TARGETS:
        step = next(s for s in steps if s.name == f"publish-variant-{target}")
        assert isinstance(step.action, PublishVariant)
        assert step.action.dest == str(tmp_path / "work" / "dist" / build_id)
        assert step.description.endswith(f"beside the fat wheel in {tmp_path / 'work' / 'dist' / build_id}")


@pytest.mark.skipif(hipcc() is None, reason="the demo builds its CPU variant without hipcc")
def test_dry_run_shows_what_each_variant_step_does(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--variants", "--dry-run", "--workdir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "PYTORCH_ROCM_ARCH=gfx908\n" in out
    assert ".dist-info/variant.json naming amd :: gfx_arch :: gfx90a" in out
    assert "check '{VARIANT_WHEEL}' --gfx gfx908" in out
    assert "remove the other wheels of" in out and "labelled -gfx908" in out
    assert main(["demo", "--variants", "--dry-run", "--json", "--workdir", str(tmp_path)]) == 0
    kinds = [s["action"]["kind"] for s in json.loads(capsys.readouterr().out)["steps"]]
    assert kinds.count("build-variant") == 2 and kinds.count("publish-variant") == 2


def test_a_cpu_build_has_no_variants(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(UsageError, match="--variants: .* carries no GPU code"):
        plan(load_matrix(), demo_build("3.11", None),
             Options(gfx=TARGETS, rocm_from="system", variants=True), HostFacts(),
             Layout(tmp_path / "w", tmp_path / "c"))
    assert main(["demo", "--variants", "--cpu", "--dry-run", "--workdir", str(tmp_path)]) == 2
    assert "carries no GPU code" in capsys.readouterr().err


def test_make_and_publish_keep_the_fat_wheel_and_replace_the_same_label(tmp_path: Path) -> None:
    run, _steps = _plan(tmp_path, variants=True)
    run.values.update(SHA="ab" * 20, SOURCE_DATE_EPOCH="1700000000")
    house = tmp_path / "house"
    make_wheel(house, "hip_sample", "0.1.0", "cp311-cp311-linux_x86_64",
               {"hip_sample/__init__.py": "x = 1\n"})
    staging = tmp_path / "staged"
    make_variant_step(Step("make-variant-gfx90a", "",
                           MakeVariant("gfx90a", str(house), str(staging), "5.2", "toolkit")), run)
    made = Path(run.values["VARIANT_WHEEL"])
    assert made.name == "hip_sample-0.1.0+rocm5.2gitabababab-cp311-cp311-linux_x86_64-gfx90a.whl"
    assert sorted(p.name for p in staging.iterdir()) == [made.name]
    with zipfile.ZipFile(made) as zf:  # named as name-wheel names the fat wheel
        assert "hip_sample-0.1.0+rocm5.2gitabababab.dist-info/variant.json" in zf.namelist()
    dest = tmp_path / "dist"
    dest.mkdir()
    fat = dest / "hip_sample-0.1.0+rocm5.2gitabababab-cp311-cp311-linux_x86_64.whl"
    fat.write_bytes(b"fat")
    older = make_variant(make_wheel(tmp_path / "old", "hip_sample", "0.0.9",
                                    "cp311-cp311-linux_x86_64", {"a.py": ""}), dest, "gfx90a")
    other = make_variant(make_wheel(tmp_path / "old", "hip_sample", "0.0.9",
                                    "cp311-cp311-linux_x86_64", {"a.py": ""}), dest, "gfx908")
    publish_variant(Step("publish-variant-gfx90a", "",
                         PublishVariant("gfx90a", str(staging), str(dest))), run)
    assert sorted(p.name for p in dest.iterdir()) == sorted([fat.name, made.name, other.name])
    assert not older.exists() and not made.exists()  # moved, not copied
    rec = recorded_variants(run.values)
    assert list(rec) == ["gfx90a"] and rec["gfx90a"]["wheel"] == str(dest / made.name)
    assert rec["gfx90a"]["sha256"] is not None and len(rec["gfx90a"]["sha256"]) == 64


class _Lines:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def info(self, message: str) -> None:
        self.lines.append(message)


def test_repro_compares_each_recorded_variant(tmp_path: Path) -> None:
    a, b = tmp_path / "a.whl", tmp_path / "b.whl"
    a.write_bytes(b"variant a")
    b.write_bytes(b"variant b")
    recorded = {"variants": {"gfx90a": {"sha256": hashlib.sha256(b"variant a").hexdigest()},
                             "gfx908": {"sha256": "0" * 64}}}
    said = _Lines()
    values = {"VARIANT_WHEEL_gfx90a": str(a), "VARIANT_WHEEL_gfx908": str(b)}
    assert variant_verdict(recorded, values, True, said) == 1  # type: ignore[arg-type]
    assert said.lines[0].startswith("variant gfx908: differs: ")
    assert said.lines[1] == f"variant gfx90a: identical: {hashlib.sha256(b'variant a').hexdigest()}"
    said = _Lines()
    assert variant_verdict(recorded, {"VARIANT_WHEEL_gfx90a": str(a)}, True, said) == 1  # type: ignore[arg-type]
    assert "variant gfx908: differs: the rebuild made no such variant" in said.lines
    assert variant_verdict({}, {}, True, said) == 0  # type: ignore[arg-type]
    assert [rerun(n) for n in ("publish", "publish-variant-gfx90a", "check-variant-gfx90a")] == [
        False, False, True]


def test_two_targets_of_one_owner_are_refused(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="share a variant label .owners gfx90a, gfx90a."):
        plan(load_matrix(), demo_build("3.11", ("/usr", "5.2")),
             Options(gfx=("gfx90a:xnack-", "gfx90a:xnack+"), rocm_from="system", variants=True),
             HostFacts(), Layout(tmp_path / "w", tmp_path / "c"))


def test_each_variant_step_says_what_it_does_for_its_own_target(tmp_path: Path) -> None:
    """What --dry-run shows of each variant step names the target it is for: the build with
    PYTORCH_ROCM_ARCH that target alone, the variant label of variantlib's AMD provider
    (``amd :: gfx_arch :: <gfx>``, the property the demo's variant.json names), its checks and
    its publication (README: "one wheel variant per target")."""
    _run, steps = _plan(tmp_path, variants=True)
    by_name = {s.name: s.description for s in steps}
    for target in TARGETS:  # a processor's owner is itself: the label is the gfx id
        build = by_name[f"build-variant-{target}"]
        assert build.startswith(f"build the wheel variant for {target} alone"), build
        assert build.endswith(f"(PYTORCH_ROCM_ARCH={target})"), build
        made = by_name[f"make-variant-{target}"]
        assert made.startswith(f"write the wheel variant {target} ("), made
        assert made.endswith(f"(amd :: gfx_arch :: {target})"), made
        checked = by_name[f"check-variant-{target}"]
        assert checked.startswith(f"the checks of the wheel variant {target}, for {target} "), checked
        published = by_name[f"publish-variant-{target}"]
        assert published.startswith(f"publish the wheel variant {target} beside the fat wheel"), published
