"""The handlers of ``--variants``' steps (``toolkit.core.steps.variants``): build a target's
wheel in its own copy of the worktree, write it as a wheel variant, publish it beside the fat
wheel. The fat wheel's ``{WHEEL}`` is never touched: a variant is ``{VARIANT_WHEEL}``."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from toolkit.core.errors import StepFailed
from toolkit.core.steps import BuildVariant, MakeVariant, PublishVariant, Step
from toolkit.core.variants import label_for, parse_name
from toolkit.run import building
from toolkit.run.context import Run, StepResult
from toolkit.run.variant_wheels import make_variant
from toolkit.run.wheels import find_one_wheel

# the worktree's sources without anything a build left there (no reuse of another target's
# objects); .git stays (a worktree's pointer: versions read from git still work)
_BUILD_LEFTOVERS = shutil.ignore_patterns("build", "dist", "*.egg-info", "__pycache__", ".nox")


def build_variant(step: Step, run: Run) -> StepResult | str:
    action = step.action
    assert isinstance(action, BuildVariant)
    src, worktree = Path(action.worktree_from), Path(action.wheel.worktree)
    shutil.rmtree(worktree, ignore_errors=True)
    try:
        shutil.copytree(src, worktree, ignore=_BUILD_LEFTOVERS, symlinks=True)
    except (OSError, shutil.Error) as exc:
        raise StepFailed(f"{step.name}: cannot copy {src} to {worktree}: {exc}") from None
    run.note(f"# copied {src} to {worktree}")
    return building.build_wheel(Step(step.name, step.description, action.wheel), run)


def make_variant_step(step: Step, run: Run) -> StepResult | str:
    action = step.action
    assert isinstance(action, MakeVariant)
    staging = Path(action.staging)
    shutil.rmtree(staging, ignore_errors=True)
    named = building.named_wheel(step.name, run, Path(action.wheelhouse), staging / "named",
                                 rocm=action.rocm, naming=action.naming)
    variant = make_variant(named, staging, action.target)
    shutil.rmtree(staging / "named", ignore_errors=True)
    run.values["VARIANT_WHEEL"] = str(variant)
    run.values[f"{VALUE_PREFIX}{label_for(action.target)}"] = str(variant)
    run.note(f"# wrote the wheel variant {variant}")
    return StepResult(step.name, step.kind, [], {}, returncode=0)


def publish_variant(step: Step, run: Run) -> StepResult | str:
    """Copy the staged variant into ``dest`` (atomic), then remove the earlier wheels there
    with the same label; the fat wheel and the other variants stay."""
    action = step.action
    assert isinstance(action, PublishVariant)
    staged = find_one_wheel(Path(action.staging))
    dest = Path(action.dest)
    final = dest / staged.name
    tmp = dest / f".{staged.name}.{os.getpid()}.tmp"
    try:
        dest.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(staged, tmp)
        os.replace(tmp, final)
    except OSError:
        tmp.unlink(missing_ok=True)
        raise
    label = label_for(action.target)
    for other in dest.glob("*.whl"):
        name = parse_name(other.name)
        if other.name != final.name and name is not None and name.label == label:
            other.unlink()
    staged.unlink(missing_ok=True)
    run.values[f"{VALUE_PREFIX}{label}"] = str(final)
    run.note(f"# published {final}")
    return StepResult(step.name, step.kind, [], {}, returncode=0)


VALUE_PREFIX = "VARIANT_WHEEL_"


def recorded_variants(values: dict[str, str]) -> dict[str, dict[str, str | None]]:
    """The manifest's ``variants``: per label, the wheel variant written (published, else
    staged) and its sha256."""
    from toolkit.run.manifest import file_sha256

    return {key[len(VALUE_PREFIX):]: {"wheel": path, "sha256": file_sha256(path)}
            for key, path in sorted(values.items()) if key.startswith(VALUE_PREFIX)}
