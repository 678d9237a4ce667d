"""`nox -s mutants` (toolkit/cli/mutants.py): the score from mutmut's result files, the module
argument, and errors as one line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolkit.cli import mutants as m


class FakeSession:
    def __init__(self) -> None:
        self.logs: list[str] = []
        self.ran: list[tuple[str, ...]] = []

    def log(self, text: str) -> None:
        self.logs.append(text)

    def run(self, *args: str, **_: Any) -> None:
        self.ran.append(args)

    def error(self, text: str) -> None:
        raise SystemExit(f"error: {text}")


def _meta(root: Path, module: str, codes: dict[str, int | None]) -> None:
    path = root / "mutants" / (module.replace(".", "/") + ".py.meta")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"exit_code_by_key": codes}))


def test_score_counts_failed_and_timed_out_tests_as_kills(tmp_path: Path) -> None:
    # mutmut's exit codes: 1 a test failed, 36 timeout, -24 killed by a signal: killed;
    # 0 survived; 33 no test ran it; None not run yet; 34 skipped
    codes: dict[str, int | None] = {"a": 1, "b": 36, "c": -24, "d": 0, "e": 33, "f": None, "g": 34}
    _meta(tmp_path, "toolkit.inspect.readers.policy", codes)
    _meta(tmp_path, "toolkit.inspect.readers.elf", {"x": 1, "y": 1})
    s = m.score(tmp_path, "toolkit.inspect.readers.policy")
    assert (s.killed, s.survived, s.no_tests, s.total) == (3, ["d"], ["e"], 5)
    assert s.line() == "mutants: 3 killed of 5 (60.0%), 1 survived, 1 not covered by any test"
    assert m.score(tmp_path).killed == 5 and m.score(tmp_path).total == 7
    assert m.score(tmp_path, "toolkit.inspect.pol").total == 0  # a prefix of a name is not the module


def test_score_only_reports_without_running(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _meta(tmp_path, "toolkit.inspect.rules.needed", {"a": 1, "b": 0})
    monkeypatch.chdir(tmp_path)
    s = FakeSession()
    m.mutants(s, ["toolkit.inspect.rules.needed", "--score-only"])
    assert s.ran == [] and s.logs == ["survived: b", "mutants: 1 killed of 2 (50.0%), 1 survived, "
                                      "0 not covered by any test"]


@pytest.mark.parametrize("arg", ["toolkit.plan.planner", "inspect.policy", "toolkit.inspect.Policy;rm"])
def test_a_module_outside_inspect_is_refused_in_one_line(arg: str) -> None:
    with pytest.raises(SystemExit, match=r"^error: bad module .*toolkit\.inspect\.readers\.policy$"):
        m.mutants(FakeSession(), [arg, "--score-only"])
