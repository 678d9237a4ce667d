"""JUnit XML, read in one place: pytest's ``--junitxml`` files (the smoke runner's own and
the ones ``report --junit`` summarises).

``read(path)`` gives the suites of a ``<testsuites>`` or single ``<testsuite>`` file, each with
its test cases in file order. A case's outcome is the first of ``failure`` > ``error`` >
``skipped`` it carries (pytest writes a failure and a teardown error on one case), else
``passed``; a ``skipped`` of type ``pytest.xfail`` is an expected failure (``xfailed``).
Suites may nest (some tools do): each suite keeps only its own cases. A file that is
missing, not XML or not JUnit is a one-line ``UsageError`` naming it. ``write_builds``
writes a session's builds as JUnit, one case per build, in the same terms.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolkit.core.errors import UsageError
from toolkit.core.files import write_atomic
from toolkit.core.text import clean, escape

PASSED, FAILED, ERROR, SKIPPED = "passed", "failed", "error", "skipped"
XFAILED = "xfailed"  # pytest's expected failure: <skipped type="pytest.xfail">
_OUTCOME_OF = (("failure", FAILED), ("error", ERROR), ("skipped", SKIPPED))
_PYTEST_PREFIX = re.compile(r"^(Skipped|Failed):\s*")


@dataclass(frozen=True)
class JUnitCase:
    classname: str  # pytest: the module's dotted path (``test_imports``), plus ``.Class``
    name: str  # pytest: the test function with its parameter id
    outcome: str  # PASSED | FAILED | ERROR | SKIPPED
    message: str = ""  # the ``message`` attribute, else the element's text; "" for a pass
    time: float | None = None

    @property
    def test_id(self) -> str:
        """``test_imports.py::test_import[...]`` (pytest's node id, from the suite folder)."""
        module = self.classname.split(".")[-1] if "." in self.classname else self.classname
        return f"{module}.py::{self.name}" if module else self.name

    @property
    def qualname(self) -> str:
        """``classname::name`` as the file spells them."""
        return "::".join(p for p in (self.classname, self.name) if p) or "?"

    @property
    def reason(self) -> str:
        """The message without pytest's ``Skipped:`` / ``Failed:`` prefix."""
        return _PYTEST_PREFIX.sub("", self.message)

    @property
    def first_line(self) -> str:
        """The message's first line (the element's tag when there is no message)."""
        lines = self.message.strip().splitlines()
        if lines:
            return lines[0].strip()
        return {FAILED: "failure", ERROR: "error", SKIPPED: "skipped"}.get(self.outcome, "")


@dataclass(frozen=True)
class JUnitSuite:
    name: str
    time: float | None
    cases: tuple[JUnitCase, ...]

    def count(self, outcome: str) -> int:
        return sum(1 for c in self.cases if c.outcome == outcome)

    @property
    def case_time(self) -> float:
        return sum(c.time or 0.0 for c in self.cases)


def _float(text: str | None) -> float | None:
    try:
        return float(text) if text else None
    except ValueError:
        return None


def _case(tc: ET.Element) -> JUnitCase:
    outcome, message = PASSED, ""
    for tag, what in _OUTCOME_OF:
        el = tc.find(tag)
        if el is not None:
            outcome = XFAILED if what == SKIPPED and el.get("type") == "pytest.xfail" else what
            message = el.get("message") or (el.text or "").strip()
            break
    return JUnitCase(tc.get("classname") or "", tc.get("name") or "?", outcome, message,
                     _float(tc.get("time")))


def _suite(el: ET.Element) -> JUnitSuite:
    return JUnitSuite(el.get("name") or "testsuite", _float(el.get("time")),
                      tuple(_case(tc) for tc in el.findall("testcase")))


def read(path: Path) -> list[JUnitSuite]:
    """The suites of a JUnit XML file (``<testsuites>`` or one ``<testsuite>`` at the root)."""
    from toolkit.core.files import missing, read_bytes, refusal_reason

    if missing(path):
        raise UsageError(f"{escape(path)}: no such JUnit file (written by `pytest --junit-xml "
                         "FILE`)")
    try:
        raw = read_bytes(path, "report")
    except UsageError as exc:
        why = refusal_reason(exc, path, "report")
        raise UsageError(f"{escape(path)}: not JUnit XML: {why}") from None
    try:
        root = ET.fromstring(raw)
    except (OSError, ET.ParseError, ValueError, RecursionError) as exc:
        raise UsageError(f"{escape(path)}: not JUnit XML: {exc}") from None
    if root.tag in ("testsuite", "testsuites"):
        # every suite, nested ones too, each with its own cases; a suite that only holds
        # other suites is not a row of its own
        return [_suite(s) for s in root.iter("testsuite")
                if s.find("testcase") is not None or s.find("testsuite") is None]
    raise UsageError(f"{escape(path)}: not JUnit XML: the root is <{root.tag}>, expected <testsuites> "
                     "or <testsuite>")


def cases(path: Path) -> list[JUnitCase]:
    """Every test case of the file, in file order."""
    return [c for s in read(path) for c in s.cases]


def write_builds(path: str | Path, outcomes: Sequence[Any], verdicts: Mapping[str, Any]) -> Path:
    """One ``<testcase>`` per build of a session (classname ``builds``): passed, ``failure``,
    or for a known failure (``verdicts``: build id -> ``toolkit.cli.known.Verdict``) pytest's
    terms: an expected failure is ``<skipped type="pytest.xfail">``, an unexpected success a
    ``<failure>`` starting ``[XPASS(strict)]``. Written atomically."""
    suite = ET.Element("testsuite", name="builds")
    counts = {"tests": 0, "failures": 0, "skipped": 0}
    for o in outcomes:
        case = ET.SubElement(suite, "testcase", classname="builds", name=o.build_id,
                             time=f"{o.seconds:.3f}")
        counts["tests"] += 1
        v = verdicts.get(o.build_id)
        result = getattr(v, "result", None)
        line = str(v.line()) if v is not None else ""
        if result == "xfail":
            ET.SubElement(case, "skipped", type="pytest.xfail", message=line)
            counts["skipped"] += 1
        elif result == "xpass":
            ET.SubElement(case, "failure", message="[XPASS(strict)] " + line)
            counts["failures"] += 1
        elif o.error is not None:
            signature = list((getattr(o, "failure", None) or {}).get("signature") or [])
            first = o.error.splitlines()[0] if o.error else ""
            # XML 1.0 holds no control characters but tab and line feed: the rest escaped
            el = ET.SubElement(case, "failure", message=clean(signature[0] if signature else first))
            el.text = clean(o.error + ("\n\nsignature of the failure:\n" + "\n".join(signature)
                                       if signature else ""))
            counts["failures"] += 1
    for key, n in counts.items():
        suite.set(key, str(n))
    root = ET.Element("testsuites")
    root.append(suite)
    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"{target}: cannot write the JUnit XML there ({exc.strerror or exc})") \
            from None
    # replaced whole (never written through a symlink or into a FIFO)
    return write_atomic(target, ET.tostring(root, encoding="utf-8", xml_declaration=True),
                        "JUnit XML")
