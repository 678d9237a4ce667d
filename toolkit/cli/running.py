"""Running plans from an entry point: progress lines, the final table, the exit code."""

from __future__ import annotations

import sys
from typing import Any


def run_and_summarise(plans: list[Any], layout: Any, *, refused: int = 0,
                      junit: str | None = None, known_failures: bool = False) -> None:
    """Run the plans, show the table; exit with the first failing build's code.

    Known failures among the plans (run with --include-known-failures) are judged: a failure
    at the expected step is an expected failure (xfail: not a failure), a success is one
    ("known failure no longer fails", exit 1). ``refused`` known failures left out make the
    exit code 7 when nothing else failed. ``known_failures``: judge them (matrix builds; the
    demo's sample build is not one)."""
    from toolkit.cli.console import StreamReporter, summary
    from toolkit.cli.known import exit_code, judge
    from toolkit.core.errors import KnownFailureRefused
    from toolkit.run.jobs import run_plans

    try:
        outcomes = run_plans(plans, layout, StreamReporter())
    except KeyboardInterrupt:
        print("interrupted: the manifest records the step that was running", file=sys.stderr)
        raise SystemExit(130) from None
    verdicts = judge(plans, outcomes) if known_failures else []
    summary(outcomes, verdicts={v.build_id: v.result for v in verdicts})
    for v in verdicts:
        print(v.line())
    _record(plans, layout, verdicts)
    if junit:
        from toolkit.verify.junit import write_builds

        write_builds(junit, outcomes, {v.build_id: v for v in verdicts})
    code = exit_code(verdicts, outcomes) or (KnownFailureRefused.exit_code if refused else 0)
    if code:
        raise SystemExit(code)


def _record(plans: list[Any], layout: Any, verdicts: list[Any]) -> None:
    """Each judged build's manifest records its verdict (xfail, xpass ...), not only failed."""
    from toolkit.run.manifest import record_known_failure

    by_id = {p.build.id: p.build for p in plans}
    for v in verdicts:
        path = layout.artifacts(by_id[v.build_id]) / "manifest.json"
        if path.is_file():
            e = v.entry
            record_known_failure(path, {"id": e.id, "result": v.result, "fails": e.fails,
                                        "test": e.test, "reason": e.reason,
                                        "evidence": e.evidence, "line": v.line()})
