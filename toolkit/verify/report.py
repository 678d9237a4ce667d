"""One summary of many runs: ``nox --report FILE`` JSON and JUnit XML files -> rows.

``read_nox_report`` gives one row per nox session; ``read_junit`` one row per test suite,
with the failed test cases kept for the summary. ``table()`` renders the rows with rich,
``markdown()`` as a GitHub step summary, ``as_json()`` for machines. Nothing here prints:
``toolkit.cli.commands.report`` does. A file that cannot be read or has the wrong shape is a
``UsageError`` naming the file and what was expected.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolkit.core.errors import UsageError
from toolkit.core.files import write_atomic
from toolkit.verify import junit
from toolkit.verify.junit import JUnitSuite

if TYPE_CHECKING:
    from rich.table import Table

# Outcomes, normalised across nox and JUnit.
PASSED, FAILED, SKIPPED, EMPTY = "passed", "failed", "skipped", "no tests"
_NOX_RESULTS = {"success": PASSED, "failed": FAILED, "aborted": FAILED, "skipped": SKIPPED}
_ICONS = {PASSED: "✅", FAILED: "❌", SKIPPED: "⏭️", EMPTY: "⚠️"}
_STYLES = {PASSED: "green", FAILED: "bold red", SKIPPED: "yellow", EMPTY: "yellow"}
# a toolkit session's failure, as it hands it to nox's ``session.error`` (nox records it as the
# session's ``reason``): ``error: <one line> (exit N)``, N the toolkit's exit code
_TOOLKIT_REASON = re.compile(r"error: (?P<message>.*) \(exit (?P<code>[0-9]{1,3})\)", re.DOTALL)


def session_reason(message: str, code: int) -> str:
    """The reason a failed toolkit nox session gives ``session.error`` (its last line)."""
    return f"error: {message} (exit {code})"


def split_reason(reason: str) -> tuple[str, int | None]:
    """(message, the toolkit's exit code) of a session's reason; (reason, None) for a reason
    a toolkit session did not word (a plain ``session.error``, a skip)."""
    m = _TOOLKIT_REASON.fullmatch(reason)
    return (m["message"], int(m["code"])) if m else (reason, None)


@dataclass(frozen=True)
class Case:
    """A failed (or errored) test case."""

    name: str
    message: str


@dataclass(frozen=True)
class Row:
    kind: str  # "nox" | "junit" | "build" (a manifest)
    source: str  # the file, as shown
    name: str  # nox session signature or JUnit suite name
    outcome: str  # PASSED | FAILED | SKIPPED | EMPTY
    duration: float | None = None
    reason: str | None = None  # nox: why a session failed or was skipped
    passed: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0
    failures: tuple[Case, ...] = field(default=())
    xfailed: int = 0  # expected failures (pytest xfail; known failures of a build session)
    exit_code: int | None = None  # nox: the toolkit's exit code of a failed session
    signature: tuple[str, ...] = ()  # build: the lines that identify its failure

    @property
    def tests(self) -> int:
        return self.passed + self.failed + self.errors + self.skipped + self.xfailed

    def counts(self) -> str:
        if self.kind != "junit":
            return ""
        parts = [f"{self.passed} passed"]
        parts += [f"{n} {what}" for n, what in ((self.failed, "failed"), (self.errors, "errors"),
                                                 (self.skipped, "skipped"),
                                                 (self.xfailed, "xfailed")) if n]
        return ", ".join(parts)

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kind": self.kind, "source": self.source, "name": self.name,
            "outcome": self.outcome, "duration": self.duration, "reason": self.reason,
        }
        if self.kind in ("nox", "build"):
            out["exit_code"] = self.exit_code
        if self.kind == "build":
            out["signature"] = list(self.signature)
        if self.kind == "junit":
            out.update(passed=self.passed, failed=self.failed, errors=self.errors,
                       skipped=self.skipped, xfailed=self.xfailed,
                       failures=[{"name": c.name, "message": c.message} for c in self.failures])
        return out


# the headline's row kinds counted by outcome: (kind, what one is called, outcomes counted)
_COUNTED = (("nox", "nox session", (PASSED, FAILED, SKIPPED)), ("build", "build", (PASSED, FAILED)))


def _counted(rows: list[Row], noun: str, outcomes: tuple[str, ...]) -> str:
    """``3 builds: 2 passed, 1 failed`` (outcomes none of them had left out); "" for no rows."""
    if not rows:
        return ""
    counts = {o: sum(r.outcome == o for r in rows) for o in outcomes}
    return (f"{len(rows)} {noun}{'s' * (len(rows) != 1)}: "
            + ", ".join(f"{n} {o}" for o, n in counts.items() if n))


@dataclass(frozen=True)
class Summary:
    rows: tuple[Row, ...]

    @property
    def failed(self) -> list[Row]:
        return [r for r in self.rows if r.outcome == FAILED]

    @property
    def ok(self) -> bool:
        return not self.failed

    def totals(self) -> dict[str, int]:
        out = {PASSED: 0, FAILED: 0, SKIPPED: 0, EMPTY: 0}
        for r in self.rows:
            out[r.outcome] += 1
        return out

    def test_totals(self) -> dict[str, int]:
        rows = [r for r in self.rows if r.kind == "junit"]
        return {"passed": sum(r.passed for r in rows), "failed": sum(r.failed for r in rows),
                "errors": sum(r.errors for r in rows), "skipped": sum(r.skipped for r in rows),
                "xfailed": sum(r.xfailed for r in rows)}

    def headline(self) -> str:
        """``5 nox sessions: 3 passed, 1 failed, 1 skipped; 3 tests in 1 suite: ...``."""
        parts = [_counted([r for r in self.rows if r.kind == kind], noun, outcomes)
                 for kind, noun, outcomes in _COUNTED]
        suites = sum(r.kind == "junit" for r in self.rows)
        if suites:
            tests = self.test_totals()
            total = sum(tests.values())
            parts.append(f"{total} test{'s' * (total != 1)} in {suites} suite{'s' * (suites != 1)}"
                         + (": " + ", ".join(f"{n} {o}" for o, n in tests.items() if n)
                            if total else ""))
        return "; ".join(p for p in parts if p) or "nothing ran"

    def as_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "totals": self.totals(), "tests": self.test_totals(),
                "rows": [r.as_json() for r in self.rows]}


# ----------------------------------------------------------------------------- reading
def _bad(path: Path, what: str) -> UsageError:
    from toolkit.core.text import escape

    return UsageError(f"{escape(path)}: {escape(what, 400)}")


def read_nox_report(path: Path, source: str | None = None) -> list[Row]:
    """Rows of a ``nox --report FILE`` JSON file, one per session run."""
    from toolkit.core.files import missing, read_text, refusal_reason

    if missing(path):
        raise _bad(path, "no such nox report (written by `nox --report FILE`)")
    try:
        text = read_text(path, "report")
    except UsageError as exc:
        raise _bad(path, f"not a nox report: {refusal_reason(exc, path, 'report')}") from None
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise _bad(path, f"not a nox report (JSON from `nox --report FILE`): {exc}") from None
    sessions = doc.get("sessions") if isinstance(doc, dict) else None
    if not isinstance(sessions, list):
        raise _bad(path, "not a nox report: expected an object with a 'sessions' list")
    return [_nox_row(path, i, s, source or str(path)) for i, s in enumerate(sessions)]


def _nox_row(path: Path, i: int, s: object, source: str) -> Row:
    """The row of ``sessions[i]`` of a nox report: its signature (else name), result,
    duration and the failure's reason and exit code."""
    if not isinstance(s, dict) or not isinstance(s.get("name"), str):
        raise _bad(path, f"sessions[{i}]: expected an object with a 'name'")
    result = s.get("result")
    if result not in _NOX_RESULTS:
        raise _bad(path, f"sessions[{i}].result: {result!r} is not one of "
                   f"{', '.join(_NOX_RESULTS)}")
    sigs = s.get("signatures")
    name = sigs[0] if isinstance(sigs, list) and sigs and isinstance(sigs[0], str) else s["name"]
    duration = s.get("duration")
    reason = s.get("reason")
    message, code = split_reason(reason) if isinstance(reason, str) and reason else (None, None)
    return Row("nox", source, name, _NOX_RESULTS[result],
               float(duration) if isinstance(duration, (int, float)) else None,
               message, exit_code=code if _NOX_RESULTS[result] == FAILED else None)


def _suite_row(suite: JUnitSuite, source: str) -> Row:
    passed, failed = suite.count(junit.PASSED), suite.count(junit.FAILED)
    errors, skipped = suite.count(junit.ERROR), suite.count(junit.SKIPPED)
    xfailed = suite.count(junit.XFAILED)
    failures = tuple(Case(c.qualname, c.first_line) for c in suite.cases
                     if c.outcome in (junit.FAILED, junit.ERROR))
    total = len(suite.cases)
    if failed or errors:
        outcome = FAILED
    elif not total:
        outcome = EMPTY
    elif skipped == total:
        outcome = SKIPPED
    else:
        outcome = PASSED
    duration = suite.time if suite.time is not None else (suite.case_time or None)
    return Row("junit", source, suite.name, outcome, duration,
               passed=passed, failed=failed, errors=errors, skipped=skipped, failures=failures,
               xfailed=xfailed)


def read_junit(path: Path, source: str | None = None) -> list[Row]:
    """Rows of a JUnit XML file (``<testsuites>`` or one ``<testsuite>``), one per suite
    (read by ``toolkit.verify.junit``, as the smoke runner reads its own)."""
    suites = junit.read(path)
    label = source or str(path)
    if not suites:
        return [Row("junit", label, "testsuites", EMPTY)]
    return [_suite_row(s, label) for s in suites]


def _labels(paths: Sequence[Path]) -> list[str]:
    """Short, distinct labels: the file name, or ``folder/name`` when names repeat."""
    names = [p.name for p in paths]
    out = []
    for p in paths:
        if names.count(p.name) > 1 and p.parent.name:
            out.append(f"{p.parent.name}/{p.name}")
        else:
            out.append(p.name)
    return [o if out.count(o) == 1 else str(p) for o, p in zip(out, paths, strict=True)]


_BUILD_OUTCOMES = {"ok": PASSED, "failed": FAILED, "interrupted": FAILED, "running": FAILED}


def manifest_files(path: Path) -> list[Path]:
    """A manifest, or every ``*/manifest.json`` of a folder (``artifacts/``), sorted."""
    if path.is_dir():
        found = sorted(path.glob("*/manifest.json"))
        if not found:
            raise _bad(path, "no */manifest.json in this folder (builds write "
                             "artifacts/<build-id>/manifest.json)")
        return found
    return [path]


def read_build(path: Path, source: str | None = None) -> Row:
    """One row per build manifest: its outcome, and for a failed build the step, the
    toolkit's exit code and the failure's signature (schema 5; a schema-4 manifest has the
    step only)."""
    from toolkit.run.manifest import read

    data = read(path)  # a corrupt or tampered manifest: one UsageError naming it
    outcome = data.get("outcome")
    failure = data.get("failure") if isinstance(data.get("failure"), dict) else {}
    assert isinstance(failure, dict)
    step = failure.get("step") or data.get("failed_step")
    reason = {"failed": f"failed at {step}", "interrupted": f"interrupted at {step}",
              "running": "still 'running': the run ended without recording its outcome"
              }.get(str(outcome))
    code = failure.get("exit_code")
    signature = failure.get("signature")
    return Row("build", source or str(path), str(data["build"]["id"]),
               _BUILD_OUTCOMES.get(str(outcome), FAILED), reason=reason,
               exit_code=code if isinstance(code, int) else None,
               signature=tuple(str(s) for s in signature) if isinstance(signature, list) else ())


def summarise(nox_reports: Iterable[str | os.PathLike[str]] = (),
              junit: Iterable[str | os.PathLike[str]] = (),
              manifests: Iterable[str | os.PathLike[str]] = ()) -> Summary:
    """Read every file (all of them, before anything is shown) into one ``Summary``."""
    nox_paths = [Path(p) for p in nox_reports]
    junit_paths = [Path(p) for p in junit]
    build_paths = [f for p in manifests for f in manifest_files(Path(p))]
    if not nox_paths and not junit_paths and not build_paths:
        raise UsageError("nothing to summarise: give --nox-report FILE, --junit FILE and/or "
                         "--manifests PATH",
                         hint="nox --report nox-report.json -s lint; "
                              "python -m toolkit report --nox-report nox-report.json")
    labels = _labels([*nox_paths, *junit_paths])
    rows: list[Row] = []
    for path, label in zip(nox_paths, labels, strict=False):
        rows += read_nox_report(path, label)
    for path, label in zip(junit_paths, labels[len(nox_paths):], strict=True):
        rows += read_junit(path, label)
    rows += [read_build(path, f"{path.parent.name}/{path.name}") for path in build_paths]
    return Summary(tuple(rows))


# ----------------------------------------------------------------------------- rendering
def duration_text(seconds: float | None) -> str:
    if seconds is None:
        return ""
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, secs = divmod(int(round(seconds)), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes:02d}m" if hours else f"{minutes}m {secs:02d}s"


def exit_text(row: Row) -> str:
    return "" if row.exit_code is None else str(row.exit_code)


def _note(row: Row) -> str:
    if row.reason and row.signature:
        more = f" (+{len(row.signature) - 1} more)" if len(row.signature) > 1 else ""
        return f"{row.reason}: {row.signature[0]}{more}"
    if row.reason:
        return row.reason
    if row.failures:
        first = row.failures[0]
        more = f" (+{len(row.failures) - 1} more)" if len(row.failures) > 1 else ""
        return f"{first.name}: {first.message}{more}"
    return ""


def table(summary: Summary, title: str = "Sessions and tests") -> Table:
    from rich.table import Table

    t = Table(title=title, caption=summary.headline())
    for col in ("Kind", "Source", "Name", "Result", "Exit", "Tests", "Duration", "Notes"):
        t.add_column(col, justify="right" if col in ("Exit", "Duration") else "left",
                     overflow="fold" if col == "Notes" else "ellipsis")
    for r in summary.rows:
        t.add_row(r.kind, r.source, r.name, f"[{_STYLES[r.outcome]}]{r.outcome}[/]",
                  exit_text(r), r.counts(), duration_text(r.duration), _note(r))
    return t


def _cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ").strip()


def markdown(summary: Summary, title: str = "Sessions and tests", max_failures: int = 50) -> str:
    """A GitHub-flavoured markdown summary (for ``$GITHUB_STEP_SUMMARY``)."""
    lines = [f"### {'✅' if summary.ok else '❌'} {title}", "", f"**{summary.headline()}**", "",
             "| | Kind | Source | Name | Result | Exit | Tests | Duration |",
             "|---|---|---|---|---|---:|---|---:|"]
    for r in summary.rows:
        lines.append("| " + " | ".join(_cell(c) for c in (
            _ICONS[r.outcome], r.kind, f"`{r.source}`", f"`{r.name}`", r.outcome, exit_text(r),
            r.counts(), duration_text(r.duration))) + " |")
    lines += _failure_lines(summary, max_failures)
    lines += _signatures(summary)
    return "\n".join(lines) + "\n"


def _failure_lines(summary: Summary, max_failures: int) -> list[str]:
    """A folded list of the failed rows' reasons, then the first ``max_failures`` failed cases."""
    failures = [(r, c) for r in summary.rows for c in r.failures]
    reasons = [r for r in summary.rows if r.outcome == FAILED and r.reason]
    if not failures and not reasons:
        return []
    lines = ["", f"<details><summary>Failures ({len(failures) + len(reasons)})</summary>", ""]
    for r in reasons:
        code = "" if r.exit_code is None else f"exit {r.exit_code}: "
        lines.append(f"- `{_cell(r.name)}` ({_cell(r.source)}): {code}{_cell(r.reason or '')}")
    for r, c in failures[:max_failures]:
        lines.append(f"- `{_cell(c.name)}` ({_cell(r.source)}): {_cell(c.message)}")
    if len(failures) > max_failures:
        lines.append(f"- ... and {len(failures) - max_failures} more")
    return [*lines, "", "</details>"]


def _signatures(summary: Summary) -> list[str]:
    """Each failed build's signature as a code block (what identifies the failure)."""
    out: list[str] = []
    for r in summary.rows:
        if r.kind == "build" and r.signature:
            fence = "~~~~" if any("```" in s for s in r.signature) else "```"
            out += ["", f"**`{_cell(r.name)}`** {_cell(r.reason or '')} "
                        f"(exit {exit_text(r) or '?'}), the failure's signature:", "",
                    fence, *r.signature, fence]
    return out


def write_markdown(path: str | os.PathLike[str], text: str) -> Path:
    """Write the markdown summary to ``path``; a one-line ``UsageError`` when it cannot."""
    return write_atomic(path, text, "markdown summary")


def append_step_summary(text: str, env: Mapping[str, str] | None = None) -> Path | None:
    """Append to ``$GITHUB_STEP_SUMMARY`` when it is set (GitHub Actions); the file or None.
    A file that cannot be appended to is a one-line ``UsageError`` naming it."""
    target = (env if env is not None else os.environ).get("GITHUB_STEP_SUMMARY")
    if not target:
        return None
    path = Path(target)
    try:
        with path.open("a", encoding="utf-8") as fh:
            fh.write(text + "\n")
    except OSError as exc:
        raise UsageError(f"{path} ($GITHUB_STEP_SUMMARY): cannot append the summary "
                         f"({exc.strerror or exc})") from None
    return path
