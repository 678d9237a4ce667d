"""`nox -s mutants`'s refusals, each one line naming what was given and what it needs:
``--unkilled`` and ``--integration`` only mean something with ``--sample N`` (the session's
--help: "with --sample: ..."), exit 2 (README: bad input); mutmut missing is an environment
problem (exit 4) whose next step installs the ``dev`` extra (pyproject.toml lists mutmut
there); and the Wilson interval refuses counts that are no proportion, naming both.

To reach "mutmut is not installed" the test points ``sys.executable`` at an interpreter path in
an empty folder (the session looks for mutmut beside the running interpreter): the one
boundary a unit test cannot otherwise cross on a machine where mutmut is installed."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from tests.fixtures.nox_runs import aborted, in_nox
from toolkit.cli import mutants as m

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("option", ["--unkilled", "--integration"])
def test_a_sample_only_option_without_a_sample_names_itself_and_sample_n(
        option: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    message, code = aborted(in_nox(lambda s: m.mutants(s, [option, "--score-only"])))
    assert code == 2
    assert message.startswith(f"{option} goes with --sample N (")
    assert "\n" not in message


def test_the_unkilled_refusal_says_a_plain_run_already_skips_decided_mutants(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    message, _ = aborted(in_nox(lambda s: m.mutants(s, ["--unkilled"])))
    assert message.endswith("without a sample, a plain run already skips the mutants decided before")


def test_the_integration_refusal_says_each_survivor_runs_real_builds(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    message, _ = aborted(in_nox(lambda s: m.mutants(s, ["--integration"])))
    assert message.endswith("(each drawn survivor runs real builds)")


def test_missing_mutmut_is_exit_4_with_the_dev_extra_as_the_next_step(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    dev = pyproject.split("\ndev = [", 1)[1].split("]\n", 1)[0]
    assert re.search(r'^\s*"mutmut\b', dev, re.M)  # the dev extra is what installs mutmut
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "executable", str(tmp_path / "bin" / "python"))
    message, code = aborted(in_nox(lambda s: m.mutants(s, ["toolkit.plan"])))
    assert code == 4
    assert message == "mutmut is not installed (next: pip install -e '.[dev]')"


@pytest.mark.parametrize(("k", "n"), [(6, 5), (-1, 5), (1, 0)])
def test_the_wilson_interval_refuses_counts_naming_k_and_n(k: int, n: int) -> None:
    with pytest.raises(ValueError) as err:
        m.wilson(k, n)
    assert str(err.value).startswith("need 0 <= k <= n and n > 0")
    assert str(err.value).endswith(f"got k={k}, n={n}")
