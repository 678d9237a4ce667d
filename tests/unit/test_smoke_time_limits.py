"""The smoke run's time limits: the values the suite's own conftest uses (smoke_tests/conftest.py,
read here as text: its default per-test limit and its watchdog's exit), seconds as a user may
give them (0: none; README: a timed-out step or smoke test is exit 9), the status files
(one per xdist worker) naming the running test, and the JUnit XML left for a run pytest could
not finish, read back with ElementTree."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from toolkit.core.errors import UsageError
from toolkit.verify import smoke_limits as limits

CONFTEST = (Path(__file__).resolve().parents[2] / "smoke_tests" / "conftest.py").read_text()


def test_the_limits_agree_with_the_suites_conftest() -> None:
    per_test = re.search(r"^DEFAULT_TEST_TIMEOUT_S = ([0-9.]+)", CONFTEST, re.M)
    watchdog = re.search(r"^WATCHDOG_EXIT = ([0-9]+)", CONFTEST, re.M)
    assert per_test and float(per_test.group(1)) == limits.DEFAULT_TEST_TIMEOUT_S
    assert watchdog and int(watchdog.group(1)) == limits.WATCHDOG_EXIT == 9
    assert limits.PER_TEST in CONFTEST  # the words a test the conftest fails carries
    assert limits.TEST_TIMEOUT_ENV in CONFTEST
    assert limits.DEFAULT_TIMEOUT_S == 3600.0


@pytest.mark.parametrize(("value", "env", "limit"), [
    (None, None, 3600.0), (None, "120", 120.0), (None, "", 3600.0), (None, "0", None),
    (30.0, "120", 30.0), ("45.5", None, 45.5), (0.0, "120", None), ("0", None, None),
])
def test_seconds_from_the_option_then_the_variable_then_the_default(
        monkeypatch: pytest.MonkeyPatch, value: str | float | None, env: str | None,
        limit: float | None) -> None:
    if env is None:
        monkeypatch.delenv("TOOLKIT_SMOKE_TIMEOUT", raising=False)
    else:
        monkeypatch.setenv("TOOLKIT_SMOKE_TIMEOUT", env)
    assert limits.seconds(value, "--timeout", "TOOLKIT_SMOKE_TIMEOUT", 3600.0) == limit


@pytest.mark.parametrize("value", ["soon", "-1", "nan", "inf", "-0.5"])
def test_a_limit_that_is_no_number_of_seconds_names_the_option(value: str,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TOOLKIT_SMOKE_TIMEOUT", raising=False)
    with pytest.raises(UsageError) as err:
        limits.seconds(value, "--timeout", "TOOLKIT_SMOKE_TIMEOUT", 3600.0)
    assert err.value.message.startswith("--timeout: ") and repr(value) in err.value.message
    assert err.value.exit_code == 2
    monkeypatch.setenv("TOOLKIT_SMOKE_TIMEOUT", "soon")
    with pytest.raises(UsageError) as err:
        limits.seconds(None, "--timeout", "TOOLKIT_SMOKE_TIMEOUT", 3600.0)
    assert "TOOLKIT_SMOKE_TIMEOUT" in err.value.message and "'soon'" in err.value.message


def _status(path: Path, **data: object) -> None:
    path.write_text(json.dumps(data))


def test_the_running_test_comes_from_the_workers_status_files(tmp_path: Path) -> None:
    status = tmp_path / "status.json"
    assert limits.running(status) == (None, False)
    _status(tmp_path / "status.json.gw0", test="t.py::a")
    _status(tmp_path / "status.json.gw1", test="t.py::b")
    assert limits.running(status) == ("t.py::a", False)  # the first worker's, in name order
    _status(tmp_path / "status.json.gw2", test="t.py::hung", hung=True)
    _status(tmp_path / "status.json.gw3", test="t.py::c")
    assert limits.running(status) == ("t.py::hung", True)  # a hung test wins
    (tmp_path / "status.json.gw4").write_text("{torn")
    _status(tmp_path / "status.json.gw5", test=5)
    assert limits.running(status) == ("t.py::hung", True)
    (tmp_path / "other").mkdir()
    assert limits.running(tmp_path / "other" / "status.json") == (None, False)


def test_a_run_pytest_could_not_finish_leaves_the_hung_test_as_an_error(tmp_path: Path) -> None:
    path = tmp_path / "junit.xml"
    limits.write_junit(path, "sub/test_runtime.py::test_kernel[gfx90a]", "timed out")
    root = ET.parse(path).getroot()
    # as pytest writes it: <testsuites> holding one <testsuite name="pytest">
    assert root.tag == "testsuites"
    (suite,) = root.findall("testsuite")
    assert suite.get("name") == "pytest"
    assert {k: suite.get(k) for k in ("tests", "errors", "failures", "skipped")} == \
        {"tests": "1", "errors": "1", "failures": "0", "skipped": "0"}
    (case,) = suite.findall("testcase")
    # pytest's classname: the module path without .py, dots for slashes
    assert (case.get("classname"), case.get("name")) == ("sub.test_runtime", "test_kernel[gfx90a]")
    error = case.find("error")
    assert error is not None and error.get("message") == "timed out" and error.text == "timed out"
    limits.write_junit(path, "collect", "m")
    (case,) = ET.parse(path).getroot().iter("testcase")
    assert (case.get("classname"), case.get("name")) == ("collect", "collect")


def test_the_timed_out_lines_name_build_test_and_limit() -> None:
    hung = limits.hung_test("b-1", "t.py::a", 90.0)
    assert hung.exit_code == 9
    assert hung.message == f"smoke test t.py::a of b-1 timed out after 90 s {limits.PER_TEST}"
    assert "after its limit" in limits.hung_test("b-1", "t.py::a", None).message
    total = limits.total_limit("b-1", 1800.5, "t.py::b")
    assert total.exit_code == 9
    assert total.message == ("the smoke run of b-1 timed out after 1800.5 s (the total limit, "
                             "--timeout), in test t.py::b")
    early = limits.total_limit("b-1", None, None)
    assert early.message.endswith("after its limit (the total limit, --timeout), before any test ran")


def test_a_torn_or_foreign_status_file_is_passed_over(tmp_path: Path) -> None:
    status = tmp_path / "status.json"
    (tmp_path / "status.json.gw0").write_text("{torn")
    _status(tmp_path / "status.json.gw1", test="t.py::a")
    assert limits.running(status) == ("t.py::a", False)
    other = tmp_path / "o"
    other.mkdir()
    (other / "status.json.gw0").write_text("[1, 2]")
    _status(other / "status.json.gw1", test=5, hung=True)
    assert limits.running(other / "status.json") == (None, False)
