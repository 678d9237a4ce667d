"""The developer sessions' reports, in process: `nox -s fuzz` turns Hypothesis's printed failing
examples (``Falsifying example: test_x(\\n    a=1,\\n)``, as pytest's JUnit XML holds them,
each line prefixed ``E   ``) into ``@example(...)`` blocks that Python's own parser accepts,
and `nox -s flakes` compares runs' outcomes test by test (hand-counted) with real ccache
statistics (``ccache --print-stats``: ``direct_cache_hit``, ``preprocessed_cache_hit``,
``cache_miss``)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from toolkit.cli import devsessions as dev
from toolkit.cli.devsessions import Failing, RunResult
from toolkit.core.errors import UsageError


@pytest.mark.parametrize(("line", "depth"), [
    ("f(a=[1, {2: (3,)}])", 0), ("f(", 1), ("])", -2), ("s=')(['", 0), ('s="(", t=(', 1),
    ("s='''(''' + (", 1), ('s="""[""" ]', -1), ("x = 1  # ( not counted", 0),
    (r"s='\'(', (", 1), ("b=b'[', [", 1),
])
def test_brackets_are_counted_outside_strings_and_comments(line: str, depth: int) -> None:
    assert dev._depth(line) == depth


E = "E       "

REPORT = (
    f"{E}Falsifying example: test_parse(\n"
    f"{E}    text='a(b',\n"
    f"{E}    n=[1,\n"
    f"{E}       2],\n"
    f"{E})\n"
    f"{E}AssertionError\n"
    "Failing test case: test_other(x=1)\n"
    f"{E}Falsifying example: test_cut(\n"
    f"{E}    text='never closed',\n"
)


def test_each_complete_printed_call_is_one_block_without_pytests_prefix() -> None:
    assert dev._blocks(REPORT) == [
        "test_parse(\n    text='a(b',\n    n=[1,\n       2],\n)",
        "test_other(x=1)",
    ]
    assert dev._blocks("no example here") == []


@pytest.mark.parametrize(("call", "arguments"), [
    ("test_x(\n    a=1,\n    b=[2,\n       3],\n)", ["a=1", "b=[2,\n       3]"]),
    ("test_x(\n    # a comment\n    a=1,\n)", ["a=1"]),
    ("test_x()", []),
    ("test_x(a=1", None),
    ("no call", None),
    ("test_x(\n    a=[1,\n)", None),
])
def test_the_top_level_arguments_of_a_printed_call(call: str, arguments: list[str] | None) -> None:
    assert dev._arguments(call) == arguments


def test_an_example_keeps_only_the_given_arguments_and_parses_as_python() -> None:
    call = "test_x(\n    a=1,\n    tmp_path=PosixPath('/tmp/x'),\n    b='s',\n)"
    text = dev.to_example(call, {"a", "b"})
    assert text == "@example(\n    a=1,\n    b='s',\n)"
    assert text is not None
    ast.parse(text.removeprefix("@"), mode="eval")
    assert dev.to_example(call, None) == \
        "@example(\n    a=1,\n    tmp_path=PosixPath('/tmp/x'),\n    b='s',\n)"
    assert dev.to_example("test_x(a=<Foo object at 0x1>)", {"a"}) is None
    assert dev.to_example("test_x(a=1", {"a"}) is None
    assert dev.to_example("test_x()", set()) == "@example(\n)"


def test_given_names_of_decorated_functions_only() -> None:
    # Hypothesis's @given takes positional strategies (the rightmost parameters) or keyword
    # ones, never both
    src = ("import hypothesis\n"
           "@pytest.mark.slow\n@hypothesis.given(st.integers(), st.text())\n"
           "def test_a(fix, x, y): ...\n"
           "@given(st.integers(), st.text())\nasync def test_b(fix, p, q): ...\n"
           "@settings(max_examples=5)\ndef test_c(x): ...\n"
           "def test_d(): ...\n")
    assert dev.given_names(src, "test_a") == {"x", "y"}
    assert dev.given_names(src, "test_b") == {"p", "q"}
    assert dev.given_names(src, "test_c") is None
    assert dev.given_names(src, "test_d") is None
    assert dev.given_names("def (:", "test_a") is None


TEST_FILE = """from hypothesis import given, strategies as st

@given(text=st.text(), n=st.lists(st.integers()))
def test_parse(tmp_path, text, n):
    assert False
"""


def _junit(path: Path, cases: str) -> Path:
    path.write_text("<?xml version='1.0'?><testsuites><testsuite name='pytest'>"
                    f"{cases}</testsuite></testsuites>")
    return path


def test_failing_examples_of_a_junit_file_name_their_test_file(tmp_path: Path) -> None:
    (tmp_path / "tests" / "unit").mkdir(parents=True)
    (tmp_path / "tests" / "unit" / "test_p.py").write_text(TEST_FILE)
    text = REPORT.replace("&", "&amp;").replace("<", "&lt;")
    junit = _junit(tmp_path / "fuzz.xml", (
        f"<testcase classname='tests.unit.test_p' name='test_parse'><failure message='cut'>{text}</failure>"
        f"<error message='x'>{text}</error></testcase>"
        "<testcase classname='tests.unit.test_p' name='test_ok'/>"
        "<testcase classname='tests.unit.gone' name='test_q[1]'>"
        "<failure message='Falsifying example: test_q(v=&lt;obj&gt;)'/></testcase>"))
    found = dev.failing_examples(junit, tmp_path)
    assert [f.test for f in found] == ["tests/unit/test_p.py::test_parse", "tests/unit/test_p.py::test_parse",
                                       "tests/unit/gone.py::test_q[1]"]
    assert found[0].example == "@example(\n    text='a(b',\n    n=[1,\n       2],\n)"
    assert found[1].call == "test_other(x=1)" and found[1].example == "@example(\n)"  # x is no @given
    assert found[2].example is None  # its values are not Python
    with pytest.raises(UsageError) as err:
        dev.failing_examples(tmp_path / "missing.xml", tmp_path)
    assert "missing.xml" in err.value.message and "JUnit" in err.value.message


def test_the_fuzz_report_pins_each_example_or_says_to_write_it() -> None:
    assert dev.fuzz_report([], 0) == ["fuzz: no property test failed"]
    lines = dev.fuzz_report([Failing("t.py::a", "a(x=1)", "@example(\n    x=1,\n)"),
                             Failing("t.py::b", "b(\n    o=<obj>,\n)", None)], 2)
    assert lines[0].startswith("fuzz: 2 property test(s) failed.")
    assert "from hypothesis import example" in lines[0] and lines[0].endswith("then fix the code:")
    assert lines[1] == ""
    assert lines[2:5] == ["# t.py::a", "@example(\n    x=1,\n)", ""]
    assert lines[5:10] == ["# t.py::b", "# (printed values are not Python: write this @example by hand)",
                           "# b(", "#     o=<obj>,", "# )"]
    assert lines[-1] == ""
    nothing = dev.fuzz_report([], 1)
    assert nothing[-1].startswith("no failing example was printed")
    assert nothing[-1].endswith("(a health check or an error outside the examples)")


def _run(number: int, cache: str, outcomes: dict[str, str], messages: dict[str, str] | None = None,
         ccache: str = "") -> RunResult:
    return RunResult(number, cache, 61.4, outcomes, messages or {}, ccache)


def test_the_flake_report_counts_runs_and_names_what_changed() -> None:
    runs = [_run(1, "cold", {"m::a": "passed", "m::b": "failed", "m::c": "error"},
                 {"m::b": "boom", "m::c": "E1"}, "0 hits, 12 misses"),
            _run(2, "warm", {"m::a": "failed", "m::b": "failed", "m::c": "error"},
                 {"m::a": "x", "m::b": "boom 2", "m::c": "E2"}),
            _run(3, "warm", {"m::b": "error", "m::c": "error"}, {"m::b": "b3", "m::c": "E3"})]
    assert dev.changed_tests(runs) == {"m::a": ["passed", "failed", "missing"],
                                       "m::b": ["failed", "failed", "error"]}
    assert dev.always_failing(runs) == ["m::b", "m::c"]
    lines, code = dev.flakes_report(runs, "-m integration -k x")
    assert code == 1
    assert lines[0] == ("flakes: 3 runs of -m integration -k x in this clone (ccache: cold, warm, warm), "
                        "3 tests")
    assert lines[1] == "  run 1 (cold ccache): 1 error, 1 failed, 1 passed in 61 s; ccache 0 hits, 12 misses"
    assert lines[2] == "  run 2 (warm ccache): 1 error, 2 failed in 61 s"
    assert lines[3] == "  run 3 (warm ccache): 2 error in 61 s"
    assert lines[4] == "CHANGED: 2 test(s) did not give the same outcome every run:"
    assert lines[5:8] == ["  m::a", "    run 1: passed  run 2: failed  run 3: missing", "    run 2: x"]
    assert lines[8:13] == ["  m::b", "    run 1: failed  run 2: failed  run 3: error", "    run 1: boom",
                           "    run 2: boom 2", "    run 3: b3"]
    assert lines[13] == "FAILED EVERY RUN (not a flake, a failure): 2 test(s):"
    assert lines[14:] == ["  m::b: b3", "  m::c: E3"]


def test_a_stable_run_exits_0_and_an_empty_run_says_so() -> None:
    runs = [_run(1, "cold", {}), _run(2, "warm", {})]
    lines, code = dev.flakes_report(runs, "-m integration")
    assert code == 0 and "no tests in 61 s" in lines[1]
    assert lines[-1] == "no test changed its outcome across 2 runs"
    assert dev._changed_lines(runs, {}) == []


@pytest.mark.parametrize(("runs", "kinds"), [
    (2, ["cold", "warm"]), (5, ["cold", "warm", "warm", "cold", "warm"]),
    (7, ["cold", "warm", "warm", "cold", "warm", "warm", "cold"]),
])
def test_a_cold_ccache_then_two_warm_runs(runs: int, kinds: list[str]) -> None:
    assert dev.cache_kinds(runs) == kinds


def test_the_runs_outcomes_come_from_its_junit(tmp_path: Path) -> None:
    junit = _junit(tmp_path / "r.xml", (
        "<testcase classname='m' name='a'/>"
        "<testcase classname='m' name='b'><failure message='x&#10;y'/></testcase>"
        "<testcase classname='m' name='c'><skipped message='why'/></testcase>"
        "<testcase classname='m' name='d'><error>trace\nmore</error></testcase>"))
    outcomes, messages = dev.run_outcomes(junit)
    assert outcomes == {"m::a": "passed", "m::b": "failed", "m::c": "skipped", "m::d": "error"}
    assert messages == {"m::b": "x", "m::d": "trace"}


def test_hits_are_direct_and_preprocessed_hits(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # `ccache --print-stats` prints one "key<TAB>value" line per counter
    stats = ("cache_miss\t4\ndirect_cache_hit\t2\ndirect_cache_miss\t9\npreprocessed_cache_hit\t3\n"
             "stats_updated_timestamp\t0\n")
    monkeypatch.setattr(dev, "_ccache", lambda d, *a: stats if a == ("--print-stats",) else None)
    assert dev._ccache_stats(tmp_path) == "5 hits, 4 misses"
    monkeypatch.setattr(dev, "_ccache", lambda d, *a: "direct_cache_hit\t1\n")
    assert dev._ccache_stats(tmp_path) == "1 hits, ? misses"


def test_without_ccache_there_are_no_statistics(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert dev._ccache(tmp_path, "--print-stats") is None
    assert dev._ccache_stats(tmp_path) == ""


def test_a_change_alone_or_a_failure_alone_fails_the_flake_check() -> None:
    changed_only = [_run(1, "cold", {"m::a": "passed"}), _run(2, "warm", {"m::a": "skipped"})]
    lines, code = dev.flakes_report(changed_only, "-m integration")
    assert code == 1 and not any(line.startswith("no test changed") for line in lines)
    # failing every run; the last run recorded no message for it: an empty one, never None
    failing_only = [_run(1, "cold", {"m::b": "failed"}, {"m::b": "boom"}), _run(2, "warm", {"m::b": "error"})]
    lines, code = dev.flakes_report(failing_only, "-m integration")
    assert code == 1 and lines[-1] == "  m::b: "
    assert not any(line.startswith("no test changed") for line in lines)


@pytest.mark.parametrize(("line", "depth"), [
    (r"'\'' (", 1),  # an escaped quote does not end the string
    ("'''a'b''' (", 1), ("x = '''a'b''' (", 1),  # a triple-quoted string holds single quotes
    ("f(X)", 0), ("f(aXb, [X])", 0),
])
def test_escapes_and_triple_quotes_inside_strings(line: str, depth: int) -> None:
    assert dev._depth(line) == depth


def test_continuation_lines_without_pytests_prefix_are_stripped_on_the_left() -> None:
    text = "E   Falsifying example: test_a(\n      a=1,\n)\n"
    assert dev._blocks(text) == ["test_a(\na=1,\n)"]


def test_a_one_line_call_and_a_value_holding_an_equals_sign() -> None:
    assert dev._arguments("test_other(x=1)") == ["x=1"]
    assert dev.to_example("test_x(\n    s='k=v',\n    tmp_path=1,\n)", {"s"}) == "@example(\n    s='k=v',\n)"
    # what parses as statements but not as one expression is not an @example
    assert dev.to_example("test_x(\n    a=1)\nx = (1,\n)", None) is None


def test_given_after_another_decorator_and_one_whose_callee_is_no_name() -> None:
    src = ("@settings(max_examples=5)\n@given(x=st.integers())\ndef test_a(fix, x): ...\n"
           "@registry['k'](1)\n@given(st.text())\ndef test_b(y): ...\n")
    assert dev.given_names(src, "test_a") == {"x"}
    assert dev.given_names(src, "test_b") == {"y"}


def test_parametrised_and_errored_cases_find_their_given_names(tmp_path: Path) -> None:
    (tmp_path / "test_p.py").write_text(TEST_FILE)
    block = "Falsifying example: test_parse(\n    tmp_path=PosixPath('/t'),\n    text='',\n    n=[],\n)"
    text = block.replace("<", "&lt;")
    junit = _junit(tmp_path / "f.xml", (
        f"<testcase classname='test_p' name='test_parse[a[0]]'><error message='m'>{text}</error></testcase>"
        "<testcase name='test_z'><failure message='no example'/></testcase>"))
    found = dev.failing_examples(junit, tmp_path)
    assert [f.test for f in found] == ["test_p.py::test_parse[a[0]]"]
    assert found[0].example == "@example(\n    text='',\n    n=[],\n)"  # tmp_path is a fixture
