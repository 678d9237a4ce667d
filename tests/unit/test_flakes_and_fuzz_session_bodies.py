"""`nox -s flakes` and `nox -s fuzz` as nox runs them (its own ``Session``, in this process:
``tests/fixtures/nox_runs.in_nox``), each on a small project of its own whose tests real
pytest runs. What they must do is the README's (Sessions): flakes runs the tests marked
``integration`` N times, a cold ccache then warm ones (``CCACHE_DIR`` one fresh folder per
cold run, reused by the next two), names each test whose outcome changed and ends with exit 1;
fuzz runs the tests marked ``hypothesis`` under the ``fuzz`` profile with ``--examples N``
examples each and prints a failing example as an ``@example`` block. The tests record what
pytest gave them (their environment, their run number) into files: that is the truth here."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.fixtures.nox_runs import aborted, in_nox
from toolkit.cli import devsessions

FLAKY = '''
import os
from pathlib import Path

import pytest

HERE = Path(__file__).parent


def _run() -> int:
    counter = HERE / "count"
    n = int(counter.read_text()) + 1 if counter.exists() else 1
    counter.write_text(str(n))
    with (HERE / "ccache-dirs").open("a") as fh:
        fh.write(os.environ.get("CCACHE_DIR", "-") + "\\n")
    return n


@pytest.mark.integration
def test_flips():
    assert _run() != 2, "second run fails"


@pytest.mark.integration
def test_stable():
    pass


@pytest.mark.integration
def test_broken():
    raise AssertionError("broken every time")


def test_not_integration():
    raise AssertionError("a test not marked integration ran")
'''

INI = "[pytest]\nmarkers =\n    integration: x\n    hypothesis: y\n"


def _project(tmp_path: Path, name: str, text: str, conftest: str = "") -> list[str]:
    (tmp_path / "pytest.ini").write_text(INI)
    (tmp_path / "noxfile.py").write_text("")
    (tmp_path / name).write_text(text)
    (tmp_path / "conftest.py").write_text(conftest)
    # one process (the session asks for ``-n auto``; a later -n wins), this project's config;
    # plain asserts: pytest rewrites no plugin module (hypothesis's import stays quick)
    return ["-n", "0", "--assert=plain", "-c", str(tmp_path / "pytest.ini"), "--rootdir", str(tmp_path),
            str(tmp_path / name)]


def test_flakes_names_the_test_that_changed_and_runs_cold_then_warm(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rest = _project(tmp_path, "test_flaky.py", FLAKY)
    result = in_nox(lambda s: devsessions.flakes(s, ["--runs", "4", *rest]), folder=tmp_path)
    message, code = aborted(result)
    assert code == 1
    assert message == ("in 4 runs, 1 test(s) changed outcome and 1 failed every time "
                       "(named above)")
    out = capsys.readouterr().out.splitlines()
    what = " ".join(["-m integration", *rest])
    assert out[0] == f"flakes: 4 runs of {what} in this clone (ccache: cold, warm, warm, cold), 3 tests"
    assert out[1].startswith("  run 1 (cold ccache): 1 failed, 2 passed in ")
    assert out[2].startswith("  run 2 (warm ccache): 2 failed, 1 passed in ")
    assert out[4].startswith("  run 4 (cold ccache): 1 failed, 2 passed in ")
    assert "CHANGED: 1 test(s) did not give the same outcome every run:" in out
    assert "    run 1: passed  run 2: failed  run 3: passed  run 4: passed" in out
    assert any(ln.startswith("    run 2: AssertionError: second run fails") for ln in out), out
    assert not any("test_stable" in ln for ln in out)
    failing = out.index("FAILED EVERY RUN (not a flake, a failure): 1 test(s):")
    assert out[failing + 1].startswith("  test_flaky::test_broken: AssertionError: broken every time")
    assert out[failing - 3] == "  test_flaky::test_flips"  # the changed test and its 2 lines first
    (junit,) = [ln for ln in out if ln.startswith("JUnit files: ")]
    work = Path(junit.removeprefix("JUnit files: ").removesuffix("/run-*.xml"))
    assert sorted(p.name for p in work.glob("run-*.xml")) == [f"run-{i}.xml" for i in range(1, 5)]
    # each test records CCACHE_DIR: run 1's fresh folder for runs 1-3, a new one for run 4
    dirs = (tmp_path / "ccache-dirs").read_text().split()
    assert dirs == [str(work / "ccache-1")] * 3 + [str(work / "ccache-4")]
    assert (work / "ccache-1").is_dir() and (work / "ccache-4").is_dir()
    assert not (work / "ccache-2").exists() and not (work / "ccache-0").exists()


PROPERTY = '''
import os
from pathlib import Path

import pytest
from hypothesis import given, strategies as st


@pytest.mark.hypothesis
@given(n=st.integers(min_value=0, max_value=10))
def test_small(n):
    (Path(__file__).parent / "examples").write_text(os.environ["TOOLKIT_FUZZ_EXAMPLES"])
    assert n < 7


def test_unmarked():
    raise AssertionError("a test not marked hypothesis ran")
'''

LEFT_OUT = '''

@pytest.mark.hypothesis
@given(n=st.integers(min_value=0, max_value=10))
def test_left_out(n):
    raise AssertionError("a test -k leaves out ran")
'''

PROFILE = '''
import os
from hypothesis import settings
settings.register_profile("fuzz", database=None, derandomize=True,
                          max_examples=int(os.environ["TOOLKIT_FUZZ_EXAMPLES"]))
'''


def test_fuzz_prints_the_failing_example_as_python(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    rest = _project(tmp_path, "test_prop.py", PROPERTY, PROFILE)
    result = in_nox(lambda s: devsessions.fuzz(s, ["--examples", "37", *rest]), folder=tmp_path)
    message, code = aborted(result)
    assert (message, code) == ("1 property test failed (the failing examples are above)", 1)
    assert (tmp_path / "examples").read_text() == "37"
    out = capsys.readouterr().out
    assert out.startswith("fuzz: 1 property test(s) failed. Pin each example below above its "
                          "test (`from hypothesis import example`), then fix the code:\n")
    block = out.split("# ", 1)[1]
    assert block.startswith("test_prop.py::test_small\n@example(")
    example = block.split("\n", 1)[1].strip()
    call = ast.parse(example.replace("@example", "f", 1), mode="eval").body
    assert isinstance(call, ast.Call) and [k.arg for k in call.keywords] == ["n"]
    value = call.keywords[0].value
    assert isinstance(value, ast.Constant) and value.value == 7  # Hypothesis shrinks to 7


@pytest.mark.parametrize(("session", "option"), [("flakes", "--runs"), ("fuzz", "--examples")])
def test_a_count_that_is_no_number_is_one_line_exit_2(session: str, option: str,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    result = in_nox(lambda s: getattr(devsessions, session)(s, [option, "many"]))
    assert aborted(result) == (f"argument {option}: invalid int value: 'many'", 2)
    assert "usage:" not in capsys.readouterr().err  # argparse's exit is not taken


def test_fuzz_without_a_failure_says_so(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    # a failing property test that the arguments given on (`-k`) leave out: they reach pytest
    text = PROPERTY.replace("n < 7", "n < 11") + LEFT_OUT
    rest = _project(tmp_path, "test_prop.py", text, PROFILE)
    result = in_nox(lambda s: devsessions.fuzz(s, [*rest, "-k", "not left_out"]), folder=tmp_path)
    assert result.status.name == "SUCCESS", result.reason
    assert capsys.readouterr().out == "fuzz: no property test failed\n"
    assert (tmp_path / "examples").read_text() == str(devsessions.FUZZ_EXAMPLES)
