"""Running plans from an entry point: progress lines, the final table, the exit code."""

from __future__ import annotations

import sys
from typing import Any


def run_and_summarise(plans: list[Any], layout: Any) -> None:
    """Run the plans, show the table; exit with the first failing build's code."""
    from toolkit.cli.console import StreamReporter, summary
    from toolkit.run.jobs import exit_code, run_plans

    try:
        outcomes = run_plans(plans, layout, StreamReporter())
    except KeyboardInterrupt:
        print("interrupted: the manifest records the step that was running", file=sys.stderr)
        raise SystemExit(130) from None
    summary(outcomes)
    code = exit_code(outcomes)
    if code:
        raise SystemExit(code)
