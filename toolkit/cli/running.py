"""Running plans from an entry point: progress lines, the final table, the exit code."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any


class Finished(Exception):
    """A body (shared by the CLI, the nox sessions and the invoke tasks) ended without
    success and has shown why already (the builds' table, the stale locks, the tests that
    changed): what is left is its exit code and a one-line reason. Each front end turns it
    into its own failure: ``python -m toolkit`` returns ``code`` (invoke: ``Exit(code)``); a
    nox session calls ``session.error`` with the reason and the code
    (``toolkit.cli.sessions._guard``). Not a ``ToolkitError``: its code is the run's, not a
    kind of error's, and it needs no ``error:`` line of its own."""

    INTERRUPTED = 130

    def __init__(self, code: int, reason: str) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason


def refused_reason(count: int) -> str:
    return (f"{count} known failure{'s' * (count != 1)} left out "
            "(--include-known-failures runs them)")


def failed_reason(outcomes: Sequence[Any], expected: set[str], xpassed: Sequence[str]) -> str:
    """What failed, in one line: the builds and the step each failed at, or the known
    failures that no longer fail."""
    failed = [o for o in outcomes if o.exit_code and o.build_id not in expected]
    if failed:
        what = ", ".join(f"{o.build_id} at {o.failed_step}" if o.failed_step else o.build_id
                         for o in failed)
        return f"{len(failed)} of {len(outcomes)} build{'s' * (len(outcomes) != 1)} failed: {what}"
    return f"known failure no longer fails: {', '.join(xpassed)}"


def signature_lines(outcomes: Sequence[Any]) -> list[str]:
    """Under the table, each failed build's signature: what identifies its failure (the
    manifest's ``failure``), and how to reproduce it."""
    from toolkit.core.text import clean

    out: list[str] = []
    for o in outcomes:
        failure = getattr(o, "failure", None)
        if not failure:
            continue
        out.append(f"{o.build_id} failed at {failure['step']} (exit {failure['exit_code']}); "
                   "its signature:")
        out += [f"    {clean(line)}" for line in failure["signature"]]
    return out


def run_and_summarise(plans: list[Any], layout: Any, *, refused: int = 0,
                      junit: str | None = None, known_failures: bool = False) -> None:
    """Run the plans, show the table; ``Finished`` with the first failing build's code.

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
        raise Finished(Finished.INTERRUPTED, "interrupted") from None
    verdicts = judge(plans, outcomes) if known_failures else []
    summary(outcomes, verdicts={v.build_id: v.result for v in verdicts})
    for line in signature_lines(outcomes):
        print(line)
    for v in verdicts:
        print(v.line())
    _record(plans, layout, verdicts)
    if junit:
        from toolkit.verify.junit import write_builds

        write_builds(junit, outcomes, {v.build_id: v for v in verdicts})
    code = exit_code(verdicts, outcomes)
    if code:
        from toolkit.data import known

        raise Finished(code, failed_reason(
            outcomes, {v.build_id for v in verdicts if v.result == known.XFAIL},
            [v.build_id for v in verdicts if v.result == known.XPASS]))
    if refused:
        raise Finished(KnownFailureRefused.exit_code, refused_reason(refused))


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
