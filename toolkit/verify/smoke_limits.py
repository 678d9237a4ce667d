"""The time limits of a smoke run: one per test, one for the whole run.

* Per test (``--test-timeout S``, ``TOOLKIT_SMOKE_TEST_TIMEOUT``, default
  ``DEFAULT_TEST_TIMEOUT_S``): enforced inside pytest by the suite's own conftest
  (``smoke_tests/conftest.py``): SIGALRM fails the test (the JUnit XML records it, the run
  goes on); a test stuck in native code is ended by a watchdog a little later, pytest exits
  ``WATCHDOG_EXIT`` and the status file names the test.
* Total (``--timeout S``, ``TOOLKIT_SMOKE_TIMEOUT``, default ``DEFAULT_TIMEOUT_S``): the
  runner stops pytest's whole process group (``toolkit.core.proc.stream``) and names the
  test that was running, from the status file.

Each ends in one ``TimedOut`` line (exit 9) naming the build, the test and the limit; when
pytest could not write its JUnit XML, the runner writes one holding the hung test as an error.
"""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path

from toolkit.core.errors import TimedOut as TimedOut
from toolkit.core.errors import UsageError

DEFAULT_TEST_TIMEOUT_S = 900.0  # smoke_tests/conftest.py has the same default
DEFAULT_TIMEOUT_S = 3600.0
TEST_TIMEOUT_ENV = "TOOLKIT_SMOKE_TEST_TIMEOUT"
TIMEOUT_ENV = "TOOLKIT_SMOKE_TIMEOUT"
WATCHDOG_EXIT = 9  # smoke_tests/conftest.py: the watchdog ended pytest
PER_TEST = "(the per-test limit, --test-timeout)"  # the words the conftest fails a test with


def seconds(value: str | float | None, what: str, env: str, default: float) -> float | None:
    """A limit in seconds: ``value``, else ``env``, else ``default``; 0 means none (None).
    Not a number, or negative: ``UsageError`` naming the option."""
    raw: str | float | None = value
    if raw is None:
        raw = os.environ.get(env) or default
    try:
        limit = float(raw)
    except ValueError:
        raise UsageError(f"{what}: not a number of seconds: {raw!r} (give e.g. 600; 0: no "
                         f"limit; also from {env})") from None
    if limit < 0 or limit != limit or limit == float("inf"):
        raise UsageError(f"{what}: {raw!r} is not a number of seconds >= 0 (0: no limit)")
    return limit or None


def running(status: Path) -> tuple[str | None, bool]:
    """The test the status file(s) name as running (one per xdist worker), and whether the
    watchdog marked it hung."""
    found: tuple[str | None, bool] = (None, False)
    for path in sorted(status.parent.glob(status.name + "*")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and isinstance(data.get("test"), str):
            hung = bool(data.get("hung"))
            if hung or found[0] is None:
                found = (data["test"], hung)
    return found


def write_junit(path: Path, test: str, message: str) -> None:
    """A JUnit XML (xunit2, as pytest writes) with ``test`` as an error: what a run that
    pytest could not finish leaves for CI."""
    module, _, name = test.partition("::")
    classname = module.removesuffix(".py").replace("/", ".")
    suites = ET.Element("testsuites")
    suite = ET.SubElement(suites, "testsuite", name="pytest", errors="1", failures="0",
                          skipped="0", tests="1")
    case = ET.SubElement(suite, "testcase", classname=classname, name=name or test)
    ET.SubElement(case, "error", message=message).text = message
    ET.ElementTree(suites).write(path, encoding="utf-8", xml_declaration=True)


def hung_test(build_id: str, test: str, limit: float | None) -> TimedOut:
    shown = f"{limit:g} s" if limit else "its limit"
    return TimedOut(f"smoke test {test} of {build_id} timed out after {shown} {PER_TEST}")


def total_limit(build_id: str, limit: float | None, test: str | None) -> TimedOut:
    shown = f"{limit:g} s" if limit else "its limit"
    return TimedOut(f"the smoke run of {build_id} timed out after {shown} (the total limit, "
                    f"--timeout)" + (f", in test {test}" if test else ", before any test ran"))
