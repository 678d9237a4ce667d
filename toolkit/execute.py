"""Run a plan's steps: the only place builds have side effects.

Each step runs with its argv (never through a shell), its environment on top of the
inherited one, placeholders filled from what earlier steps learned. Output streams to
``artifacts/<build-id>/build.log``; the first failing step stops the build with its command,
exit code and the tail of its output. Steps whose implementation has not landed raise
``NotImplementedStep`` before anything else runs.
"""

from __future__ import annotations

from collections.abc import Callable

from toolkit.errors import NotImplementedStep
from toolkit.plan import Plan, Step

# Step name -> the issue that implements it. Emptied as implementations land.
PENDING: dict[str, str] = {
    "create-env": "issue #4 (environments)",
    "install-rocm-sdk": "issue #4 (environments)",
    "install-torch": "issue #4 (environments)",
    "get-sources": "issue #5 (build)",
    "preflight": "issue #5 (build)",
    "install-requirements": "issue #5 (build)",
    "build-wheel": "issue #5 (build)",
    "name-wheel": "issue #5 (build)",
    "check": "issue #3 (checks) wired by issue #5",
    "smoke": "issue #6 (smoke tests)",
}


def ensure_implemented(plan: Plan) -> None:
    """Refuse up front (before anything runs) when a step is only planned."""
    for step in plan.steps:
        if step.name in PENDING:
            raise NotImplementedStep(
                f"step '{step.name}' of {plan.build.id} is planned but not implemented yet "
                f"({PENDING[step.name]}); use --dry-run to see the plan"
            )


def execute(plan: Plan, *, on_step: Callable[[Step], None] | None = None) -> None:
    ensure_implemented(plan)
    for step in plan.steps:  # pragma: no cover - reached once steps land
        if on_step:
            on_step(step)
