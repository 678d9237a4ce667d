"""How the entry points word known failures (README "## Known failures": one line, exit 7,
unless ``--include-known-failures``; a run judged like pytest's strict xfail, a success says
"known failure no longer fails: remove the entry", exit 1): each verdict's line, the refusal
and its hint, the header a dry run prints, ``--explain`` of an entry (at most six build ids,
then how many), and the exit code of judged runs. Entries are built here; the matrix a
function reads is replaced by a small one whose selections are known by construction."""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import pytest

from toolkit.cli import known as cli_known
from toolkit.core.errors import KnownFailureRefused
from toolkit.data import known
from toolkit.data.known import KnownFailure

STEP = KnownFailure(id="apex-demo", package="apex", fails="build-wheel",
                    reason="hipcc rejects it", evidence="ROCm/TheRock#3413")
SMOKE = KnownFailure(id="fbgemm-smoke", package="fbgemm_gpu", fails="smoke",
                     reason="no kernel", evidence="pytorch/FBGEMM#1",
                     test="test_runtime.py::test_jagged")


@pytest.mark.parametrize(("entry", "result", "line"), [
    (STEP, known.XFAIL, "b1: xfail: step build-wheel failed as expected: hipcc rejects it "
                        "(ROCm/TheRock#3413)"),
    (SMOKE, known.XFAIL, "b1: xfail: smoke test test_runtime.py::test_jagged failed as "
                         "expected: no kernel (pytorch/FBGEMM#1)"),
    (STEP, known.XPASS, "b1: known failure no longer fails: remove the entry apex-demo from "
                        "known_failures.toml (ROCm/TheRock#3413)"),
    (STEP, known.NOT_REACHED, "b1: known failure apex-demo not exercised: build-wheel was "
                              "not planned"),
    (STEP, known.FAILED, "b1: failed, but not where known failure apex-demo expects (step "
                         "build-wheel)"),
])
def test_each_verdict_in_one_line(entry: KnownFailure, result: str, line: str) -> None:
    assert cli_known.Verdict("b1", entry, result).line() == line


def test_a_refusal_is_one_line_with_exit_7_and_the_way_to_run_it() -> None:
    assert cli_known.refusal("b1", [STEP, SMOKE]) == (
        "b1 is not run: known failure apex-demo: step build-wheel fails: hipcc rejects it "
        "(evidence: ROCm/TheRock#3413); known failure fbgemm-smoke: smoke test "
        "test_runtime.py::test_jagged fails: no kernel (evidence: pytorch/FBGEMM#1)")
    err = cli_known.refuse("b1", [STEP])
    assert isinstance(err, KnownFailureRefused) and err.exit_code == 7
    assert err.line.endswith("(next: --include-known-failures runs it anyway, to see whether "
                             "upstream fixed it)")


def test_the_dry_run_header_and_the_split_of_plans(monkeypatch: pytest.MonkeyPatch) -> None:
    chosen = {"p-known": [STEP], "p-free": []}
    monkeypatch.setattr(cli_known, "known_for_plan", lambda p: chosen[p.build.id])
    plans = [SimpleNamespace(build=SimpleNamespace(id=i)) for i in ("p-known", "p-free")]
    assert cli_known.plan_header(plans[0]) == [
        "# known failure apex-demo: step build-wheel fails: hipcc rejects it (evidence: "
        "ROCm/TheRock#3413); expected to fail (xfail), a success means: remove the entry"]
    assert cli_known.plan_header(plans[1]) == []
    run, refused = cli_known.split(plans, include=False)
    assert run == [plans[1]] and refused == [cli_known.refusal("p-known", [STEP])]
    assert cli_known.split(plans, include=True) == (plans, [])


@dataclass(frozen=True)
class _Entry:
    id: str
    picks: frozenset[str]

    def selects(self, build: Any) -> bool:
        return build.id in self.picks

    def explain(self) -> list[tuple[str, str]]:
        return [("reason", "why"), ("evidence", "where")]


def _matrix(monkeypatch: pytest.MonkeyPatch, *entries: _Entry) -> None:
    builds = [SimpleNamespace(id=f"b{i}") for i in range(10)]
    monkeypatch.setattr(cli_known, "load_matrix",
                        lambda: SimpleNamespace(builds=builds, known_failures=list(entries)))


def test_explain_of_an_entry_names_six_builds_then_the_count(monkeypatch: pytest.MonkeyPatch) -> None:
    _matrix(monkeypatch, _Entry("many", frozenset(f"b{i}" for i in range(1, 9))),
            _Entry("six", frozenset(f"b{i}" for i in range(6))))
    assert cli_known.explain_known("many") == [
        ("reason", "why", ""), ("evidence", "where", ""),
        ("builds", "b1, b2, b3, b4, b5, b6 ... (8 builds)", "")]
    assert cli_known.explain_known("six")[-1] == ("builds", "b0, b1, b2, b3, b4, b5", "")
    assert cli_known.explain_known("b3") is None  # a build id, not an entry


def test_a_table_row_without_rocm_names_no_known_failure() -> None:
    assert cli_known.row_failures([], ["apex", "1.8.0", "3.12", ""]) == ""


def _outcome(build_id: str, code: int) -> SimpleNamespace:
    return SimpleNamespace(build_id=build_id, exit_code=code)


def test_the_exit_code_of_judged_runs() -> None:
    xfail = cli_known.Verdict("b1", STEP, known.XFAIL)
    xpass = cli_known.Verdict("b2", STEP, known.XPASS)
    assert cli_known.exit_code([xfail], [_outcome("b1", 5)]) == 0  # failed as expected
    assert cli_known.exit_code([xfail, xpass], [_outcome("b1", 5), _outcome("b2", 0)]) == 1
    assert cli_known.exit_code([xfail], [_outcome("b1", 5), _outcome("b3", 6),
                                         _outcome("b4", 4)]) == 6  # the first other failure
    assert cli_known.exit_code([], [_outcome("b1", 0)]) == 0


def test_a_table_row_names_the_entries_selecting_its_builds(monkeypatch: pytest.MonkeyPatch) -> None:
    def build(i: int, version: str, rocm: str) -> SimpleNamespace:
        return SimpleNamespace(id=f"b{i}", package=SimpleNamespace(name="apex"), version=version,
                               rocm=SimpleNamespace(version=rocm))

    builds = [build(0, "1.8.0", "7.0"), build(1, "1.8.0", "6.4"), build(2, "1.9.0", "7.0")]
    _matrix(monkeypatch, _Entry("zeta", frozenset({"b0"})), _Entry("alpha", frozenset({"b0", "b2"})),
            _Entry("other-rocm", frozenset({"b1"})))
    assert cli_known.row_failures(builds, ["apex", "1.8.0", "3.12", "7.0"]) == "alpha, zeta"
    assert cli_known.row_failures(builds, ["apex", "1.9.0", "3.12", "7.0"]) == "alpha"
