"""Known failures at the entry points: shown by `invoke matrix`, refused (exit 7) or re-tried
by sessions and `invoke plan`, and a re-tried run judged like pytest's strict xfail.

The entries and their rules live in ``toolkit.data.known``; this module only words them for
the commands and turns a run's outcomes into verdicts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from toolkit.core.errors import CheckFailed, KnownFailureRefused
from toolkit.data import known
from toolkit.data.known import KnownFailure
from toolkit.data.matrix import Build
from toolkit.plan.recipes import load_matrix

HINT = "--include-known-failures runs it anyway, to see whether upstream fixed it"


# ----------------------------------------------------------------------------- invoke matrix
def explain_known(entry_id: str) -> list[tuple[str, str, str]] | None:
    """``invoke matrix --explain ID`` of a known-failure id (None: not one)."""
    m = load_matrix()
    entry = next((e for e in m.known_failures if e.id == entry_id), None)
    if entry is None:
        return None
    rows = [(fact, value, "") for fact, value in entry.explain()]
    ids = [b.id for b in m.builds if entry.selects(b)]
    shown = ", ".join(ids[:6]) + (f" ... ({len(ids)} builds)" if len(ids) > 6 else "")
    rows.append(("builds", shown, ""))
    return rows


def known_rows(build_id: str) -> list[tuple[str, str, str]]:
    """The known failures of one build, for ``--explain BUILD_ID``."""
    m = load_matrix()
    return [("known fail", f"{e.id} ({e.scope}): {e.what} fails: {e.reason}",
             f"evidence: {e.evidence}") for e in known.for_build(m.known_failures, m.build(build_id))]


def build_json(build: Build) -> dict[str, Any]:
    """One build of ``invoke matrix --format json``, with the known failures selecting it."""
    entries = known.for_build(load_matrix().known_failures, build)
    return {**build.as_json(), "known_failures": [e.as_json() for e in entries]}


def row_failures(builds: Sequence[Build], row: Sequence[str]) -> str:
    """The ids of the known failures selecting a table row's builds (package, version, ROCm)."""
    pkg, ver, rocm = row[0], row[1], row[3]
    if not rocm:
        return ""
    entries = load_matrix().known_failures
    ids = {e.id for b in builds if (b.package.name, b.version, b.rocm.version) == (pkg, ver, rocm)
           for e in known.for_build(entries, b)}
    return ", ".join(sorted(ids))


def known_notes(builds: Sequence[Build]) -> list[str]:
    """Below the table: each known failure selecting a shown build, with reason and evidence."""
    entries = load_matrix().known_failures
    return [f"known failure {e.id} ({e.scope}): {e.what} fails: {e.reason} "
            f"(evidence: {e.evidence})" for e in entries if any(e.selects(b) for b in builds)]


# ----------------------------------------------------------------------------- sessions, plan
def known_for_plan(plan: Any) -> list[KnownFailure]:
    """The entries selecting a plan's build for its targets."""
    return known.for_build(load_matrix().known_failures, plan.build, plan.targets)


def refusal(build_id: str, entries: Sequence[KnownFailure]) -> str:
    """The one line a known failure that was not asked for gets."""
    return f"{build_id} is not run: " + "; ".join(e.line() for e in entries)


def split(plans: Sequence[Any], include: bool) -> tuple[list[Any], list[str]]:
    """(plans to run, one refusal line per known failure left out)."""
    if include:
        return list(plans), []
    run: list[Any] = []
    refused: list[str] = []
    for p in plans:
        entries = known_for_plan(p)
        if entries:
            refused.append(refusal(p.build.id, entries))
        else:
            run.append(p)
    return run, refused


def refuse(build_id: str, entries: Sequence[KnownFailure]) -> KnownFailureRefused:
    return KnownFailureRefused(refusal(build_id, entries), hint=HINT)


def plan_header(plan: Any) -> list[str]:
    """What `invoke plan --include-known-failures` and `--dry-run` say before a known failure."""
    return [f"# {e.line()}; expected to fail (xfail), a success means: remove the entry"
            for e in known_for_plan(plan)]


# ----------------------------------------------------------------------------- judging runs
@dataclass(frozen=True)
class Verdict:
    build_id: str
    entry: KnownFailure
    result: str  # known.XFAIL | XPASS | FAILED | NOT_REACHED

    def line(self) -> str:
        e = self.entry
        if self.result == known.XFAIL:
            return f"{self.build_id}: xfail: {e.what} failed as expected: {e.reason} ({e.evidence})"
        if self.result == known.XPASS:
            return (f"{self.build_id}: known failure no longer fails: remove the entry {e.id} "
                    f"from known_failures.toml ({e.evidence})")
        if self.result == known.NOT_REACHED:
            return f"{self.build_id}: known failure {e.id} not exercised: {e.fails} was not planned"
        return f"{self.build_id}: failed, but not where known failure {e.id} expects ({e.what})"


def smoke_test_outcome(plan: Any, test: str) -> str | None:
    """The outcome of smoke test ``test`` (``test_runtime.py::test_x``, every parameter of it)
    in the JUnit XML the plan's smoke step wrote: failed (or error) if any case failed, passed
    if any passed, skipped if all skipped; None when the run wrote none or did not report it."""
    from pathlib import Path

    from toolkit.core.errors import UsageError
    from toolkit.core.steps import SMOKE_JUNIT, Smoke
    from toolkit.verify import junit

    step = next((s for s in plan.steps if isinstance(getattr(s, "action", None), Smoke)), None)
    path = Path(step.action.cwd) / SMOKE_JUNIT if step is not None else None
    if path is None or not path.is_file():
        return None
    try:
        found = [c.outcome for c in junit.cases(path)
                 if c.test_id == test or c.test_id.startswith(test + "[")]
    except UsageError:
        return None
    for outcome in (junit.FAILED, junit.ERROR, junit.PASSED, junit.SKIPPED):
        if outcome in found:
            return outcome
    return None


def judge(plans: Sequence[Any], outcomes: Sequence[Any]) -> list[Verdict]:
    """The verdict of each run known failure (outcomes in plan order); an entry naming a
    smoke test is judged by that test's outcome in the smoke JUnit XML."""
    out: list[Verdict] = []
    for p, o in zip(plans, outcomes, strict=False):
        planned = [s.name for s in p.steps]
        for e in known_for_plan(p):
            tested = smoke_test_outcome(p, e.test) if e.test else None
            result = known.verdict(e, planned, getattr(o, "failed_step", None), o.error, tested)
            out.append(Verdict(p.build.id, e, result))
    return out


def exit_code(verdicts: Sequence[Verdict], outcomes: Sequence[Any]) -> int:
    """The session's exit code once the known failures are judged: an expected failure is not
    a failure (0), an unexpected success is (1); other failures keep their own code."""
    expected = {v.build_id for v in verdicts if v.result == known.XFAIL}
    code = next((o.exit_code for o in outcomes if o.exit_code and o.build_id not in expected), 0)
    if code:
        return code
    return CheckFailed.exit_code if any(v.result == known.XPASS for v in verdicts) else 0
