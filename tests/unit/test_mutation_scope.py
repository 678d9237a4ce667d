"""`nox -s mutants` covers every package of toolkit/, and its documented second step: with
``--sample N --integration`` a drawn mutant the unit tests let survive runs its package's
integration tests with ``MUTANT_UNDER_TEST`` set (driven here by a real pytest run)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.nox_runs import aborted, in_nox
from toolkit.cli import mutants as m

ROOT = Path(__file__).resolve().parents[2]


def test_every_package_of_the_toolkit_is_mutated() -> None:
    packages = {f"toolkit.{p.name}" for p in (ROOT / "toolkit").iterdir()
                if (p / "__init__.py").is_file()}
    assert set(m.PACKAGES) == packages
    text = (ROOT / "pyproject.toml").read_text()
    only = re.search(r"^only_mutate = \[(.*)\]$", text, re.M)
    assert only is not None
    assert {f"toolkit.{g.split('/')[1]}" for g in re.findall(r'"([^"]+)"', only[1])} == packages


def test_each_package_names_integration_tests_that_exist() -> None:
    assert set(m.AREA_TESTS) == set(m.PACKAGES)
    for files in m.AREA_TESTS.values():
        assert files and all((ROOT / f).is_file() and f.startswith("tests/integration/") for f in files)
    assert m.area_tests("toolkit.run.jobs.x_run_one__mutmut_3") == m.AREA_TESTS["toolkit.run"]
    assert m.area_tests("toolkit.runner.x__mutmut_1") == ()  # not the package toolkit.run


def test_integration_needs_a_sample() -> None:
    message, code = aborted(in_nox(lambda s: m.mutants(s, ["--integration", "--score-only"]), folder=ROOT))
    assert code == 2 and "--integration goes with --sample" in message


class _Session:
    def __init__(self) -> None:
        self.logs: list[str] = []

    def log(self, text: str) -> None:
        self.logs.append(text)

    def run(self, *args: str, **_: Any) -> None:
        pass


def test_a_survivor_the_area_tests_kill_is_recorded_killed(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    killed, survives = "toolkit.run.jobs.x_f__mutmut_1", "toolkit.run.jobs.x_f__mutmut_2"
    meta = tmp_path / "mutants" / "toolkit" / "run" / "jobs.py.meta"
    meta.parent.mkdir(parents=True)
    meta.write_text(json.dumps({"exit_code_by_key": {killed: 0, survives: 0,
                                                     "toolkit.run.jobs.x_f__mutmut_3": 1}}))
    area = tmp_path / "mutants" / "tests" / "integration" / "test_area.py"
    area.parent.mkdir(parents=True)
    area.write_text("import os\n\ndef test_it():\n"
                    f"    assert os.environ.get('MUTANT_UNDER_TEST') != {killed!r}\n")
    (area.parent / "test_more.py").write_text("def test_more():\n    pass\n")
    monkeypatch.setitem(m.AREA_TESTS, "toolkit.run", ("tests/integration/test_area.py",
                                                       "tests/integration/test_more.py"))
    s = _Session()
    m._integration_pass(s, tmp_path, ["toolkit.run"], [killed, survives])
    codes = json.loads(meta.read_text())["exit_code_by_key"]
    assert codes == {killed: 1, survives: 0, "toolkit.run.jobs.x_f__mutmut_3": 1}
    assert any("killed (pytest exit 1)" in line for line in s.logs), s.logs
    # the log names each mutant's area and its test files, space-separated as pytest takes them
    assert (f"integration tests on {killed}: tests/integration/test_area.py "
            "tests/integration/test_more.py") in s.logs


def test_a_sample_with_integration_runs_the_area_tests_of_its_survivors(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole session (``nox -s mutants -- toolkit.run --sample 2 --integration``, mutmut's
    own runs played by the fake session): after mutmut's run, the drawn survivor runs its
    package's integration tests (a real pytest run), is recorded killed, and the session's log
    says so (docs/equivalent-mutants.md: "a failing test records it killed")."""
    killed, kept = "toolkit.run.jobs.x_f__mutmut_1", "toolkit.run.jobs.x_f__mutmut_2"
    (tmp_path / "toolkit" / "run").mkdir(parents=True)
    (tmp_path / "toolkit" / "run" / "jobs.py").touch()
    meta = tmp_path / "mutants" / "toolkit" / "run" / "jobs.py.meta"
    meta.parent.mkdir(parents=True)
    meta.write_text(json.dumps({"exit_code_by_key": {killed: 0, kept: 1}}))
    area = tmp_path / "mutants" / "tests" / "integration" / "test_area.py"
    area.parent.mkdir(parents=True)
    area.write_text("import os\n\ndef test_it():\n"
                    f"    assert os.environ.get('MUTANT_UNDER_TEST') != {killed!r}\n")
    monkeypatch.setitem(m.AREA_TESTS, "toolkit.run", ("tests/integration/test_area.py",))
    monkeypatch.chdir(tmp_path)
    s = _Session()
    m.mutants(s, ["toolkit.run", "--sample", "2", "--integration"])
    assert json.loads(meta.read_text())["exit_code_by_key"] == {killed: 1, kept: 1}
    assert f"integration tests on {killed}: tests/integration/test_area.py" in s.logs
    assert any("killed (pytest exit 1)" in line for line in s.logs), s.logs


def test_only_the_drawn_survivors_run_the_area_tests(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Step 2 is for the drawn mutants the unit tests let survive: a survivor left out of the
    sample keeps its record (0) though its area tests would fail on it, and a drawn mutant
    the unit tests already killed (1) is not run again (the log names neither)."""
    drawn, undrawn, killed = ("toolkit.run.jobs.x_f__mutmut_1", "toolkit.run.jobs.x_f__mutmut_2",
                              "toolkit.run.jobs.x_f__mutmut_3")
    meta = tmp_path / "mutants" / "toolkit" / "run" / "jobs.py.meta"
    meta.parent.mkdir(parents=True)
    meta.write_text(json.dumps({"exit_code_by_key": {drawn: 0, undrawn: 0, killed: 1}}))
    area = tmp_path / "mutants" / "tests" / "integration" / "test_area.py"
    area.parent.mkdir(parents=True)
    area.write_text("import os\n\ndef test_it():\n"  # fails on every mutant but the drawn one
                    f"    assert os.environ.get('MUTANT_UNDER_TEST') == {drawn!r}\n")
    monkeypatch.setitem(m.AREA_TESTS, "toolkit.run", ("tests/integration/test_area.py",))
    s = _Session()
    m._integration_pass(s, tmp_path, ["toolkit.run"], [drawn, killed])
    assert json.loads(meta.read_text())["exit_code_by_key"] == {drawn: 0, undrawn: 0, killed: 1}
    ran = [line for line in s.logs if line.startswith("integration tests on ")]
    assert ran == [f"integration tests on {drawn}: tests/integration/test_area.py"], s.logs
