"""Repro of ``--variants`` builds (issue 31): each wheel variant the manifest records
(``variants``: label -> wheel, sha256) is rebuilt by the re-planned steps and compared by
sha256, like the fat wheel; ``publish-variant-*`` steps do not run in a repro (as ``publish``)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from toolkit.core.reporter import Reporter
from toolkit.core.step_names import PUBLISH, PUBLISH_VARIANT
from toolkit.run.variant_steps import VALUE_PREFIX


def rerun(name: str) -> bool:
    """Whether a repro runs the step ``name`` (never a publish)."""
    return name != PUBLISH and not name.startswith(f"{PUBLISH_VARIANT}-")


def variant_verdict(data: Mapping[str, Any], values: Mapping[str, str], same_tree: bool,
                    reporter: Reporter) -> int:
    """0 when every recorded variant was rebuilt with the recorded sha256, else 1."""
    from toolkit.core.files import sha256_file

    recorded = data.get("variants")
    if not isinstance(recorded, dict):
        return 0
    code = 0
    for label, rec in sorted(recorded.items()):
        wheel = values.get(f"{VALUE_PREFIX}{label}")
        want = rec.get("sha256") if isinstance(rec, dict) else None
        if wheel is None:
            reporter.info(f"variant {label}: differs: the rebuild made no such variant")
            code = 1
            continue
        here = sha256_file(wheel)
        if here == want and same_tree:
            reporter.info(f"variant {label}: identical: {here}")
        else:
            reporter.info(f"variant {label}: differs: {here} rebuilt ({Path(wheel).name}), "
                          f"{want} recorded")
            code = 1
    return code
