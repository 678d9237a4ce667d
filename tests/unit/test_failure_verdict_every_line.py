"""Every line of every verdict ``repro`` gives a failed build (``toolkit.verify.failures``),
written out by hand from the module's documented words (README's "reproduced: build-wheel
failed here as in CI (exit 5)" and its ``-`` CI only / ``+`` here only marks)."""

from __future__ import annotations

from toolkit.verify.failures import Failure, judge, side_by_side

ERR = "x.c:1:1: error: boom"
OTHER = "y.c:2:2: error: bang"


def test_a_step_that_passed_here_lists_cis_signature_and_says_when_no_exit_was_recorded() -> None:
    v = judge(Failure("build-wheel", 5, (ERR, OTHER)), None, ["build-wheel"])
    assert (v.reproduced, v.exit_code) == (False, 1)
    assert v.lines == ("not reproduced: build-wheel passed here (CI: exit 5)",
                       f"  CI: {ERR}", f"  CI: {OTHER}")
    old = judge(Failure("check", None, (), recorded_signature=False), None, [])
    assert old.lines == ("not reproduced: check passed here (CI: exit not recorded)",)


def test_another_step_failing_first_shows_both_signatures_labelled() -> None:
    v = judge(Failure("build-wheel", 5, (ERR,)), Failure("check-env", None, (OTHER,)), [])
    assert v.lines == ("not reproduced: build-wheel not reached here: check-env failed "
                       "(exit not recorded)", f"  here: {OTHER}", f"  CI:   {ERR}")
    assert v.headline == v.lines[0] and v.exit_code == 1


def test_a_schema_4_manifest_matches_on_the_step_and_shows_heres_signature() -> None:
    v = judge(Failure("check", None, (), recorded_signature=False), Failure("check", 1, (ERR,)), [])
    assert (v.reproduced, v.exit_code) == (True, 0)
    assert v.lines == ("reproduced: check failed here as in CI (exit 1); the manifest (schema 4) "
                       "records no signature: matched on the step only", f"  here: {ERR}")


def test_no_signature_on_either_side_says_so_and_compares_exit_codes() -> None:
    same = judge(Failure("smoke", 1, ()), Failure("smoke", 1, ()), [])
    assert same.lines == ("reproduced: smoke failed here (CI exit 1, here exit 1); neither output "
                          "holds a signature: matched on the step and exit code",)
    assert same.reproduced
    other = judge(Failure("smoke", 1, ()), Failure("smoke", 9, ()), [])
    assert other.lines == ("not reproduced: smoke failed here (CI exit 1, here exit 9); neither "
                           "output holds a signature: matched on the step and exit code",)
    assert not other.reproduced and other.exit_code == 1


def test_the_same_signature_is_reproduced_with_its_common_lines() -> None:
    v = judge(Failure("build-wheel", 5, (ERR,)), Failure("build-wheel", 5, (ERR,)), [])
    assert v.lines == ("reproduced: build-wheel failed here as in CI (exit 5)", f"  {ERR}")
    assert v.exit_code == 0


def test_a_different_failure_at_the_step_shows_both_sides_marked() -> None:
    v = judge(Failure("build-wheel", 5, (ERR,)), Failure("build-wheel", 9, (OTHER,)), [])
    assert v.lines == ("not reproduced: build-wheel failed differently (CI exit 5, here exit 9; "
                       "- CI only, + here only)",
                       "  in CI:", f"  - {ERR}", "  here:", f"  + {OTHER}")
    assert not v.reproduced


def test_a_side_without_signature_says_so_in_its_place() -> None:
    assert side_by_side((), (ERR,)) == ["  in CI:", "    (no signature recorded)", "  here:",
                                        f"  + {ERR}"]
    assert side_by_side((ERR,), ()) == ["  in CI:", f"  - {ERR}", "  here:",
                                        "    (no signature here)"]
    assert side_by_side((), ()) == ["  in CI:", "    (no signature recorded)", "  here:",
                                    "    (no signature here)"]


def test_a_recorded_failure_reads_step_exit_code_and_signature_as_written() -> None:
    f = Failure.of({"outcome": "failed", "failure": {"step": "check", "exit_code": "1",
                                                      "signature": [ERR, 3]}})
    assert f == Failure("check", 1, (ERR, "3"))
    assert Failure.of({"outcome": "failed", "failure": {"step": "check", "exit_code": 1,
                                                        "signature": None}}) == \
        Failure("check", 1, ())
    assert Failure.of({"outcome": "failed", "failed_step": None}) == \
        Failure("-", None, (), recorded_signature=False)
