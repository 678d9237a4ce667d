"""JUnit files are aggregated as pytest counts them: per suite and in the report's totals.

Independent statements: pytest's own JUnit output (a real pytest run below, its
``<testsuite tests= failures= errors= skipped=>`` attributes), and the JUnit schema pytest
validates its output against (pytest-dev/pytest testing/example_scripts/junit-10.xsd, the
Jenkins/Surefire schema): a ``testcase`` holds any number of ``skipped``/``error``/``failure``
elements (``choice maxOccurs="unbounded"``), and ``testsuite`` requires ``name``, ``tests``,
``failures`` and ``errors``. The cases: a test that fails and then errors in teardown, a test
parametrised over gfx targets that fails for one of them, a suite whose cases all errored."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from toolkit.verify import junit
from toolkit.verify.report import FAILED, PASSED, summarise

MIX = '''
import pytest

@pytest.fixture
def broken_teardown():
    yield
    raise RuntimeError("teardown broke")

def test_fails_then_teardown_errors(broken_teardown):
    assert 1 == 2

@pytest.mark.parametrize("gfx", ["gfx90a", "gfx942", "gfx1100"])
def test_param(gfx):
    assert gfx != "gfx942"

def test_skip():
    pytest.skip("no gpu")

@pytest.mark.xfail(reason="known")
def test_xfail():
    assert False

@pytest.fixture
def broken():
    raise RuntimeError("setup broke")

def test_setup_error_a(broken):
    pass

def test_setup_error_b(broken):
    pass
'''


@pytest.fixture(scope="module")
def pytest_junit(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("junit")
    (d / "test_mix.py").write_text(MIX)
    out = d / "out.xml"
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                    "-o", "junit_family=xunit2", f"--junitxml={out}", str(d / "test_mix.py")],
                   cwd=d, capture_output=True, text=True, timeout=120)
    return out


def _pytest_counts(path: Path) -> dict[str, int]:
    (suite,) = ET.parse(path).getroot().iter("testsuite")
    return {k: int(suite.get(k, "0")) for k in ("tests", "failures", "errors", "skipped")}


def test_the_suite_counts_are_pytests_own(pytest_junit: Path) -> None:
    want = _pytest_counts(pytest_junit)
    (row,) = summarise(junit=[pytest_junit]).rows
    assert row.outcome == FAILED
    assert row.tests == want["tests"]
    assert row.failed == want["failures"]
    assert row.errors == want["errors"]
    assert row.skipped + row.xfailed == want["skipped"]  # pytest counts xfail as skipped


def test_a_parametrised_case_failing_for_one_target_names_that_target_only(pytest_junit: Path) -> None:
    (row,) = summarise(junit=[pytest_junit]).rows
    failing = [c.name for c in row.failures if "test_param" in c.name]
    assert failing == ["test_mix::test_param[gfx942]"], failing
    outcomes = {c.name: c.outcome for c in junit.cases(pytest_junit) if c.name.startswith("test_param")}
    assert outcomes == {"test_param[gfx90a]": "passed", "test_param[gfx942]": "failed",
                        "test_param[gfx1100]": "passed"}


def test_the_report_totals_add_up_over_files(pytest_junit: Path, tmp_path: Path) -> None:
    again = tmp_path / "again.xml"
    again.write_bytes(pytest_junit.read_bytes())
    want = _pytest_counts(pytest_junit)
    s = summarise(junit=[pytest_junit, again])
    totals = s.test_totals()
    assert sum(totals.values()) == 2 * want["tests"]
    assert totals["failed"] == 2 * want["failures"] and totals["errors"] == 2 * want["errors"]
    assert f"{2 * want['tests']} tests in 2 suites" in s.headline()
    assert not s.ok


def _write(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "hand.xml"
    path.write_text(textwrap.dedent(body))
    return path


def test_a_suite_of_only_errored_cases_fails(tmp_path: Path) -> None:
    path = _write(tmp_path, """\
        <testsuites><testsuite name="smoke" tests="2" failures="0" errors="2">
          <testcase classname="test_imports" name="test_a"><error message="setup broke"/></testcase>
          <testcase classname="test_imports" name="test_b"><error message="setup broke"/></testcase>
        </testsuite></testsuites>""")
    (row,) = summarise(junit=[path]).rows
    assert (row.outcome, row.passed, row.failed, row.errors, row.tests) == (FAILED, 0, 0, 2, 2)
    assert [c.name for c in row.failures] == ["test_imports::test_a", "test_imports::test_b"]


def test_a_case_with_a_failure_and_an_error_is_one_failing_test(tmp_path: Path) -> None:
    # the schema lets one testcase carry both (older pytest wrote a call failure and a
    # teardown error so): it is one test, and it did not pass
    path = _write(tmp_path, """\
        <testsuite name="smoke" tests="2" failures="1" errors="1">
          <testcase classname="test_ops" name="test_add[gfx942]">
            <failure message="assert 1 == 2"/><error message="teardown broke"/>
          </testcase>
          <testcase classname="test_ops" name="test_add[gfx90a]"/>
        </testsuite>""")
    (row,) = summarise(junit=[path]).rows
    assert row.outcome == FAILED and row.tests == 2 and row.passed == 1
    assert row.failed + row.errors == 1
    assert [c.name for c in row.failures] == ["test_ops::test_add[gfx942]"]


def test_a_suite_of_passes_and_skips_passes(tmp_path: Path) -> None:
    path = _write(tmp_path, """\
        <testsuite name="smoke" tests="2" failures="0" errors="0" skipped="1">
          <testcase classname="test_ops" name="test_a"/>
          <testcase classname="test_ops" name="test_b"><skipped message="no gpu"/></testcase>
        </testsuite>""")
    (row,) = summarise(junit=[path]).rows
    assert (row.outcome, row.passed, row.skipped) == (PASSED, 1, 1)
