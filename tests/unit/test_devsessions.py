"""`nox -s fuzz` and `nox -s flakes`: what they read from real pytest runs.

Each test runs pytest itself (a subprocess, in a folder of its own with its own config) on a
small property test or on tests whose outcome the test controls, then reads the JUnit file
as the sessions do. The truth is pytest and Hypothesis: a printed ``@example`` is pasted back
into the test and must reproduce the failure in Hypothesis's explicit phase alone.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from toolkit.cli.devsessions import (
    RunResult,
    always_failing,
    changed_tests,
    failing_examples,
    flakes_report,
    fuzz_report,
    given_names,
    run_outcomes,
    to_example,
)

ROOT = Path(__file__).resolve().parents[2]

PROPERTY = '''
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st


@pytest.fixture
def base():
    return 3


# PASTE
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(alphabet="()[]x"), pairs=st.lists(st.tuples(st.integers(), st.binary())))
def test_brackets(base, text, pairs):
    assert base == 3
    assert ")" not in text or not pairs


@given(st.integers())
def test_fine(n):
    assert isinstance(n, int)
'''

CONFTEST = '''
from hypothesis import Phase, settings
settings.register_profile("explicit", phases=[Phase.explicit], database=None)
settings.register_profile("seeded", derandomize=True, database=None, deadline=None)
'''


def _pytest_argv(folder: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
            "-c", str(folder / "pytest.ini"), "--rootdir", str(folder), *args]


def _pytest_env(folder: Path, env: dict[str, str] | None) -> dict[str, str]:
    return {**os.environ, **(env or {}), "PYTHONPATH": str(folder)}


def pytest_in(folder: Path, *args: str, env: dict[str, str] | None = None) -> int:
    proc = subprocess.run(_pytest_argv(folder, *args), cwd=folder, capture_output=True, text=True,
                          timeout=300, env=_pytest_env(folder, env))
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    return proc.returncode


def pytest_runs_in(folder: Path, runs: list[tuple[list[str], dict[str, str]]]) -> list[int]:
    """``pytest_in`` for each (args, env), the runs side by side (they share nothing but the
    folder's sources): their exit codes, in order."""
    procs = [subprocess.Popen(_pytest_argv(folder, *args), cwd=folder, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, env=_pytest_env(folder, env))
             for args, env in runs]
    codes = []
    try:
        for proc in procs:
            out, _ = proc.communicate(timeout=300)
            assert proc.returncode in (0, 1), out
            codes.append(proc.returncode)
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    return codes


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "props").mkdir()
    (tmp_path / "props" / "__init__.py").write_text("")
    (tmp_path / "props" / "test_prop.py").write_text(PROPERTY)
    return tmp_path


def test_a_printed_example_pasted_back_reproduces_the_failure(project: Path) -> None:
    junit = project / "fuzz.xml"
    assert pytest_in(project, "--hypothesis-profile=seeded", f"--junitxml={junit}") == 1
    (found,) = failing_examples(junit, project)
    assert found.test == "props/test_prop.py::test_brackets"
    assert found.example is not None, found.call
    # the fixture Hypothesis printed alongside is not an argument of @given
    assert "base=" in found.call and "base" not in found.example
    assert "text=" in found.example and "pairs=" in found.example
    test = project / "props" / "test_prop.py"
    test.write_text(test.read_text().replace("# PASTE", found.example))
    junit2 = project / "explicit.xml"
    assert pytest_in(project, "--hypothesis-profile=explicit", f"--junitxml={junit2}") == 1
    text = junit2.read_text()
    assert "Falsifying explicit example" in text or "Failing explicit example" in text, text
    assert "AssertionError" in text
    report = fuzz_report([found], 1)
    assert found.example in "\n".join(report) and report[2] == "# props/test_prop.py::test_brackets"


def test_no_failure_no_example(project: Path) -> None:
    junit = project / "ok.xml"
    assert pytest_in(project, "--hypothesis-profile=seeded", "-k", "test_fine",
                     f"--junitxml={junit}") == 0
    assert failing_examples(junit, project) == []
    assert fuzz_report([], 0) == ["fuzz: no property test failed"]


def test_given_names_keyword_and_positional() -> None:
    src = ("@given(x=st.integers(), y=st.text())\ndef test_a(fix, x, y): ...\n"
           "@h.given(st.integers())\ndef test_b(fix, z): ...\n")
    assert given_names(src, "test_a") == {"x", "y"}
    assert given_names(src, "test_b") == {"z"}
    assert given_names(src, "test_missing") is None


def test_to_example_keeps_brackets_in_strings_and_refuses_non_python() -> None:
    call = "test_x(\n    s=')(',\n    fix=1,\n    b=b'[',\n)"
    assert to_example(call, {"s", "b"}) == "@example(\n    s=')(',\n    b=b'[',\n)"
    assert to_example("test_x(\n    o=<object at 0x7f>,\n)", None) is None


FLIPPING = '''
import os, pytest

def test_stable():
    pass

def test_flips():
    assert os.environ["FLIP"] == "0"

def test_broken():
    assert False, "always broken"

@pytest.mark.skipif(os.environ["FLIP"] == "1", reason="skipped in run 2")
def test_sometimes_skipped():
    pass
'''


def test_flake_report_names_exactly_the_tests_that_changed(tmp_path: Path) -> None:
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "test_flip.py").write_text(FLIPPING)
    flips = ("0", "1", "0")
    pytest_runs_in(tmp_path, [([f"--junitxml={tmp_path / f'run-{i}.xml'}"], {"FLIP": flip})
                              for i, flip in enumerate(flips, start=1)])
    runs = []
    for i in range(1, len(flips) + 1):
        outcomes, messages = run_outcomes(tmp_path / f"run-{i}.xml")
        runs.append(RunResult(i, "cold" if i == 1 else "warm", 1.0, outcomes, messages))
    changed = changed_tests(runs)
    assert changed == {"test_flip::test_flips": ["passed", "failed", "passed"],
                       "test_flip::test_sometimes_skipped": ["passed", "skipped", "passed"]}
    assert always_failing(runs) == ["test_flip::test_broken"]
    lines, code = flakes_report(runs, "-m integration")
    assert code == 1
    text = "\n".join(lines)
    assert "CHANGED: 2 test(s)" in text and "run 2: AssertionError" in text
    assert "FAILED EVERY RUN" in text and "always broken" in text
    assert "test_stable" not in text


def test_flake_report_all_stable() -> None:
    runs = [RunResult(i, "warm", 2.0, {"m::a": "passed", "m::b": "skipped"}) for i in (1, 2)]
    lines, code = flakes_report(runs, "-m integration")
    assert code == 0 and lines[-1] == "no test changed its outcome across 2 runs"
    gone = [runs[0], RunResult(2, "warm", 2.0, {"m::a": "passed"})]
    assert changed_tests(gone) == {"m::b": ["skipped", "missing"]}


@pytest.mark.parametrize(("session", "args", "message"), [
    ("flakes", ["--runs", "1"], "--runs 1: comparing outcomes needs at least 2 runs"),
    ("fuzz", ["--examples", "0"], "--examples 0: give a positive number of examples"),
    ("fuzz", ["--examples", "many"], "argument --examples: invalid int value: 'many'"),
])
def test_bad_options_are_one_line_exit_2(session: str, args: list[str], message: str) -> None:
    proc = subprocess.run([sys.executable, "-m", "nox", "-f", str(ROOT / "noxfile.py"), "-s",
                           session, "--", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    from tests.fixtures.nox_runs import failure

    assert proc.returncode == 1, proc.stdout + proc.stderr  # nox's: the session failed
    assert failure(proc.stderr) == (message, 2), proc.stderr  # the toolkit's, in nox's line
    assert not [ln for ln in proc.stderr.splitlines() if ln.startswith("error:")], proc.stderr
    assert "Traceback" not in proc.stderr
