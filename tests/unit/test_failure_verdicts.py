"""A failed build's verdict (``toolkit.verify.failures``) and its record
(``toolkit.run.failure``), against hand-written manifests and logs."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolkit.run.failure import READ_LIMIT, _prefixes, _unprefixed, step_output
from toolkit.verify.failures import Failure, judge, side_by_side

ERR = "native.c:2:85: error: expected ';' before '}' token"
OTHER = "native.c:7:1: error: unknown type name 'PyObjct'"


def manifest(**failure: object) -> dict[str, object]:
    return {"outcome": "failed", "failed_step": "build-wheel",
            "failure": {"step": "build-wheel", "exit_code": 5, "signature": [ERR], "log": None,
                        **failure}}


def test_a_failed_manifest_gives_its_failure() -> None:
    f = Failure.of(manifest())
    assert f == Failure("build-wheel", 5, (ERR,))


@pytest.mark.parametrize("outcome", ["ok", "running", "interrupted"])
def test_only_a_failed_outcome_is_a_failure(outcome: str) -> None:
    assert Failure.of({**manifest(), "outcome": outcome}) is None


def test_a_schema_4_manifest_gives_the_step_without_a_signature() -> None:
    f = Failure.of({"outcome": "failed", "failed_step": "check"})
    assert f is not None and f.step == "check" and f.exit_code is None
    assert not f.recorded_signature and f.signature == ()


def test_the_same_step_and_signature_is_reproduced_exit_0() -> None:
    v = judge(Failure("build-wheel", 5, (ERR,)), Failure("build-wheel", 5, (ERR,)), [])
    assert v.reproduced and v.exit_code == 0
    assert v.lines[0] == "reproduced: build-wheel failed here as in CI (exit 5)"
    assert f"  {ERR}" in v.lines


def test_signature_order_does_not_matter() -> None:
    """Parallel compiles print their errors in any order: the lines, not their order."""
    v = judge(Failure("build-wheel", 5, (ERR, OTHER)), Failure("build-wheel", 5, (OTHER, ERR)),
              [])
    assert v.reproduced


def test_a_step_that_passed_here_is_not_reproduced_exit_1() -> None:
    v = judge(Failure("build-wheel", 5, (ERR,)), None, ["check-env", "build-wheel"])
    assert not v.reproduced and v.exit_code == 1
    assert v.headline == "not reproduced: build-wheel passed here (CI: exit 5)"


def test_another_error_at_the_same_step_failed_differently_both_shown() -> None:
    v = judge(Failure("build-wheel", 5, (ERR,)), Failure("build-wheel", 5, (OTHER,)), [])
    assert not v.reproduced
    assert v.headline.startswith("not reproduced: build-wheel failed differently")
    assert f"  - {ERR}" in v.lines and f"  + {OTHER}" in v.lines
    assert v.lines.index("  in CI:") < v.lines.index(f"  - {ERR}") < v.lines.index("  here:")


def test_a_shared_line_is_unmarked_in_both() -> None:
    lines = side_by_side((ERR, OTHER), (ERR,))
    assert lines == ["  in CI:", f"    {ERR}", f"  - {OTHER}", "  here:", f"    {ERR}"]


def test_an_earlier_step_failing_here_is_not_reproduced_naming_both() -> None:
    v = judge(Failure("build-wheel", 5, (ERR,)),
              Failure("install-requirements", 5, ("No solution found",)), [])
    assert not v.reproduced
    assert v.headline == ("not reproduced: build-wheel not reached here: install-requirements "
                          "failed (exit 5)")
    assert "  here: No solution found" in v.lines and f"  CI:   {ERR}" in v.lines


def test_schema_4_matches_on_the_step_only_and_says_so() -> None:
    v = judge(Failure("check", None, (), recorded_signature=False),
              Failure("check", 1, ("x",)), [])
    assert v.reproduced and "records no signature: matched on the step only" in v.headline


@pytest.mark.parametrize(("ci", "here", "same"), [(5, 5, True), (5, 9, False)])
def test_no_signature_on_either_side_matches_on_step_and_exit(ci: int, here: int,
                                                              same: bool) -> None:
    v = judge(Failure("smoke", ci, ()), Failure("smoke", here, ()), [])
    assert v.reproduced is same


# ------------------------------------------------------------------------------ the record
def test_the_step_output_is_read_from_where_the_step_began(tmp_path: Path) -> None:
    log = tmp_path / "build.log"
    first = "earlier step: error: not this one\n"
    log.write_text(first + "$ gcc ...\n" + ERR + "\n")
    assert step_output(log, len(first.encode())) == ["$ gcc ...", ERR]


def test_only_the_last_bytes_are_read_and_a_cut_line_is_dropped(tmp_path: Path) -> None:
    log = tmp_path / "build.log"
    log.write_text("x" * 100 + "\n" + "tail line\n")
    assert step_output(log, 0, limit=15) == ["tail line"]
    assert READ_LIMIT >= 1 << 20


def test_an_unreadable_log_gives_no_lines(tmp_path: Path) -> None:
    assert step_output(tmp_path / "missing.log", 0) == []


def test_interpreter_prefixes_become_one_token_whatever_their_lengths() -> None:
    class FakeRun:
        values = {"PYTHON_PREFIX_MAP": "-ffile-prefix-map=/c/envs/3.11-cpu=/python "
                                       "-ffile-prefix-map=/opt/py=/python"}

    prefixes = _prefixes(FakeRun())  # type: ignore[arg-type]
    assert prefixes == ["/c/envs/3.11-cpu", "/opt/py"]
    line = "gcc -I/c/envs/3.11-cpu/include -I/opt/py/include/python3.11 -I/opt/pyx"
    assert _unprefixed(line, prefixes) == ("gcc -I<python_prefix>/include "
                                           "-I<python_prefix>/include/python3.11 -I/opt/pyx")


def test_the_session_summary_shows_each_failed_builds_signature_escaped() -> None:
    from types import SimpleNamespace

    from toolkit.cli.running import signature_lines

    outcomes = [SimpleNamespace(build_id="a-1-cp311-cpu", failure={
                    "step": "build-wheel", "exit_code": 5, "signature": [ERR, "x\x1b[2Jy"]}),
                SimpleNamespace(build_id="b-1-cp311-cpu", failure=None)]
    lines = signature_lines(outcomes)
    assert lines[0] == "a-1-cp311-cpu failed at build-wheel (exit 5); its signature:"
    assert lines[1] == f"    {ERR}"
    assert "\x1b" not in lines[2] and lines[2].startswith("    x") and len(lines) == 3


def test_the_readmes_verdict_words_are_the_ones_repro_prints() -> None:
    """README's "Reproduce a CI failure" quotes each verdict; each is what repro says in the
    case it describes (the cases written here by hand)."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    section = readme.split("## Reproduce a CI failure", 1)[1].split("\n## ", 1)[0]
    text = " ".join(section.split())
    cases = [judge(Failure("build-wheel", 5, (ERR,)), Failure("build-wheel", 5, (ERR,)), []),
             judge(Failure("build-wheel", 5, (ERR,)), None, []),
             judge(Failure("build-wheel", 5, (ERR,)), Failure("build-wheel", 5, (OTHER,)), []),
             judge(Failure("build-wheel", 5, (ERR,)), Failure("install-requirements", 5, ()),
                   [])]
    for verdict in cases:
        words = verdict.headline.split(" (CI")[0].split(" (- CI")[0]
        assert words.split(";")[0] in text, words
    assert "reproduced: build-wheel failed here as in CI (exit 5)\n  " + ERR in section
