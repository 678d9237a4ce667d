"""The steps of ``--variants`` (issue 31): besides the fat wheel, one wheel variant per target.

For each target of the build, in the build's order: ``build-variant-<gfx>`` (the recipe's own
build, planned again for that target alone: ``PYTORCH_ROCM_ARCH=<gfx>``, its own copy of the
worktree and its own wheelhouse, so the fat build's objects are never reused),
``make-variant-<gfx>`` (named as the fat wheel is, then labelled: ``toolkit.core.variants``),
``check-variant-<gfx>`` (the fat wheel's check, on the variant, for that target; the check's
``variant-label`` rule also fails code of another target). After ``publish``:
``publish-variant-<gfx>`` each, beside the fat wheel in ``dist/<build-id>/``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from types import MappingProxyType

from toolkit.core import step_names as names
from toolkit.core.errors import UsageError
from toolkit.core.gfx import rocm_arch_value
from toolkit.core.steps import BuildVariant, BuildWheel, CheckWheel, MakeVariant, PublishVariant, Step
from toolkit.core.variants import label_for
from toolkit.plan.model import Context
from toolkit.plan.recipes.base import Recipe


@dataclass(frozen=True)
class _VariantContext(Context):
    """The build's context for one target: its own worktree copy and wheelhouse."""

    root: str = ""

    @property
    def wheelhouse(self) -> str:
        return f"{self.root}/wheelhouse"

    @property
    def source_dir(self) -> str:
        return f"{self.root}/src"


def variant_root(ctx: Context, target: str) -> str:
    return str(ctx.layout.build_dir(ctx.build) / "variants" / label_for(target))


def _context(ctx: Context, target: str) -> _VariantContext:
    env = dict(ctx.base_env)
    env["PYTORCH_ROCM_ARCH"] = rocm_arch_value([target])
    fields = {f.name: getattr(ctx, f.name) for f in dataclasses.fields(Context)}
    fields.update(targets=(target,), base_env=MappingProxyType(env))
    return _VariantContext(**fields, root=variant_root(ctx, target))


def _build(ctx: Context, recipe: Recipe, target: str) -> Step:
    vctx = _context(ctx, target)
    (build,) = [s for s in recipe.build_steps(vctx) if isinstance(s.action, BuildWheel)]
    assert isinstance(build.action, BuildWheel)
    return Step(f"{names.BUILD_VARIANT}-{target}",
                f"build the wheel variant for {target} alone (PYTORCH_ROCM_ARCH={target})",
                BuildVariant(target, ctx.source_dir, build.action))


def build_steps(ctx: Context, recipe: Recipe, check: Step) -> list[Step]:
    """build-, make- and check-variant of each target (planned before ``publish``)."""
    assert isinstance(check.action, CheckWheel)
    if not recipe.carries_gpu_code(ctx.build, ctx.options):
        raise UsageError(f"--variants: {ctx.build.id} carries no GPU code (a CPU build), so "
                         "there is no variant per target to build; drop --variants or --cpu")
    labels = [label_for(t) for t in ctx.targets]
    if len(set(labels)) != len(labels):
        raise UsageError(f"--variants: targets {', '.join(ctx.targets)} share a variant label "
                         f"(owners {', '.join(labels)}); give one target per owner")
    steps: list[Step] = []
    for target in ctx.targets:
        root = variant_root(ctx, target)
        label = label_for(target)
        steps.append(_build(ctx, recipe, target))
        steps.append(Step(
            f"{names.MAKE_VARIANT}-{target}",
            f"write the wheel variant {label} (amd :: gfx_arch :: {label})",
            MakeVariant(target, f"{root}/wheelhouse", f"{root}/staged", ctx.build.rocm.version,
                        ctx.options.naming)))
        steps.append(Step(
            f"{names.CHECK_VARIANT}-{target}",
            f"the checks of the wheel variant {label}, for {target} (fail on findings: a label "
            "its code does not back too)",
            dataclasses.replace(check.action, wheel="{VARIANT_WHEEL}", gfx=(target,))))
    return steps


def publish_steps(ctx: Context) -> list[Step]:
    """publish-variant of each target (planned after ``publish``)."""
    dest = str(ctx.layout.dist(ctx.build))
    return [Step(f"{names.PUBLISH_VARIANT}-{target}",
                 f"publish the wheel variant {label_for(target)} beside the fat wheel in {dest}",
                 PublishVariant(target, f"{variant_root(ctx, target)}/staged", dest))
            for target in ctx.targets]
