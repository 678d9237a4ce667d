"""`nox -s mutants` (toolkit/cli/mutants.py): the score from mutmut's result files, per package
and overall, the module arguments, the random sample and its interval, errors as one line."""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.nox_runs import aborted, in_nox
from toolkit.cli import mutants as m


class FakeSession:
    def __init__(self) -> None:
        self.logs: list[str] = []
        self.ran: list[tuple[str, ...]] = []

    def log(self, text: str) -> None:
        self.logs.append(text)

    def run(self, *args: str, **_: Any) -> None:
        self.ran.append(args)


def _meta(root: Path, module: str, codes: dict[str, int | None], source: bool = True) -> None:
    if source:
        src = root / (module.replace(".", "/") + ".py")
        src.parent.mkdir(parents=True, exist_ok=True)
        src.touch()
    path = root / "mutants" / (module.replace(".", "/") + ".py.meta")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"exit_code_by_key": codes}))


def test_score_counts_failed_timed_out_and_crashed_tests_as_kills(tmp_path: Path) -> None:
    # mutmut's exit codes (mutmut/stats.py): 1 a test failed, 36 timeout, -24 SIGXCPU, -11 segfault:
    # killed; 0 survived; 33 and 5 no test ran it; None not run yet, 34 skipped, 2 interrupted;
    # 99 is no code mutmut names ("suspicious"): not a kill
    codes: dict[str, int | None] = {"a": 1, "b": 36, "c": -24, "d": 0, "e": 33, "f": None, "g": 34,
                                    "h": -11, "i": 5, "j": 2, "k": 99}
    _meta(tmp_path, "toolkit.inspect.readers.policy", codes)
    _meta(tmp_path, "toolkit.inspect.elf", {"x": 1, "y": 1})
    s = m.score(tmp_path, ["toolkit.inspect.readers.policy"])
    assert (s.killed, s.survived, s.no_tests, s.suspicious, s.total) == (4, ["d"], ["e", "i"], ["k"], 8)
    assert s.line() == ("mutants: 4 killed of 8 (50.0%), 1 survived, 2 not covered by any test, "
                        "1 suspicious, 3 not run")
    assert m.score(tmp_path).killed == 6 and m.score(tmp_path).total == 10
    assert m.score(tmp_path, ["toolkit.inspect.pol"]).total == 0  # a prefix of a name is not the module


def test_score_only_reports_without_running(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _meta(tmp_path, "toolkit.inspect.needed", {"a": 1, "b": 0})
    monkeypatch.chdir(tmp_path)
    s = FakeSession()
    m.mutants(s, ["toolkit.inspect.needed", "--score-only"])
    assert s.ran == [] and s.logs == ["survived: b", "toolkit.inspect.needed: 1 killed of 2 (50.0%), "
                                      "1 survived, 0 not covered by any test"]


def test_each_package_is_scored_and_then_all_of_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _meta(tmp_path, "toolkit.plan.planner", {"p1": 1, "p2": 1, "p3": 0})
    _meta(tmp_path, "toolkit.plan.recipes.__init__", {"r1": 1})
    _meta(tmp_path, "toolkit.data.matrix", {"d1": 1, "d2": 33})
    _meta(tmp_path, "toolkit.inspect.elf", {"e1": 1})
    _meta(tmp_path, "toolkit.examples.hip_extension.setup", {"c1": 0})  # not a package of toolkit
    _meta(tmp_path, "toolkit.inspect.policy", {"gone": 0}, source=False)  # moved since it ran
    monkeypatch.chdir(tmp_path)
    s = FakeSession()
    m.mutants(s, ["--score-only"])
    assert s.logs == [
        "survived: p3", "no test covers: d2",
        "toolkit.inspect: 1 killed of 1 (100.0%), 0 survived, 0 not covered by any test",
        "toolkit.plan: 3 killed of 4 (75.0%), 1 survived, 0 not covered by any test",
        "toolkit.data: 1 killed of 2 (50.0%), 0 survived, 1 not covered by any test",
        "overall: 5 killed of 7 (71.4%), 1 survived, 1 not covered by any test",
    ]


def test_a_run_asks_mutmut_for_the_packages_given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    s = FakeSession()
    m.mutants(s, ["toolkit.plan", "toolkit.data.matrix", "--max-children", "1"])
    mutmut = str(Path(sys.executable).with_name("mutmut"))
    assert s.ran == [(mutmut, "run", "--max-children=1", "toolkit.plan.*", "toolkit.data.matrix.*")]


def test_wilson_interval_matches_newcombes_published_values() -> None:
    # Newcombe, "Two-sided confidence intervals for the single proportion: comparison of seven
    # methods", Statistics in Medicine 17 (1998) 857-872, Table II, method 3 (score, no continuity
    # correction), to the 4 decimals printed there
    published = {(81, 263): (0.2553, 0.3662), (15, 148): (0.0624, 0.1605),
                 (0, 20): (0.0, 0.1611), (1, 29): (0.0061, 0.1718)}
    for (k, n), (lo, hi) in published.items():
        got = m.wilson(k, n)
        assert round(got[0], 4) == lo and round(got[1], 4) == hi, (k, n, got)
    # by hand: 10 of 10, z = 1.96: (1 + z²/20 - z·sqrt(z²/400)) / (1 + z²/10) = 1 / 1.38415 = 0.7225
    lo, hi = m.wilson(10, 10)
    assert round(lo, 4) == 0.7225 and hi == pytest.approx(1.0, abs=1e-12)
    for bad in ((1, 0), (-1, 5), (6, 5)):
        with pytest.raises(ValueError):
            m.wilson(*bad)


def test_a_sample_is_a_uniform_draw_without_replacement() -> None:
    names = [f"toolkit.plan.x_f__mutmut_{i}" for i in range(20)]
    one = m.draw(names, 5, seed=7)
    assert len(one) == len(set(one)) == 5 and set(one) <= set(names)
    assert m.draw(reversed(names), 5, seed=7) == one  # the order of the names does not matter
    assert m.draw(names, 50, seed=1) == sorted(names)  # more than there are: all of them
    # uniform: over 4000 seeds each name is drawn 4000 * 5/20 = 1000 times on average; the
    # standard deviation of a count is sqrt(4000 * 0.25 * 0.75) = 27.4, so 6 of them is 164
    counts = Counter(n for seed in range(4000) for n in m.draw(names, 5, seed))
    assert set(counts) == set(names)
    assert all(abs(c - 1000) < 164 for c in counts.values()), counts


def test_an_edit_changes_the_sample_only_by_the_mutants_it_changes() -> None:
    names = [f"toolkit.plan.m.x_f{f}__mutmut_{i}" for f in range(40) for i in range(25)]
    before = m.draw(names, 100, seed=2)
    # one function edited: its 25 mutants renumbered (new names), 3 more of them
    edited = [n for n in names if ".x_f7__" not in n]
    edited += [f"toolkit.plan.m.x_f7__mutmut_{i}" for i in range(30, 58)]
    after = m.draw(edited, 100, seed=2)
    gone = {n for n in names if ".x_f7__" in n}
    came = set(edited) - set(names)
    kept = set(before) - gone
    # everything else that was drawn is drawn again, but for as many as the new names push out
    assert len(kept - set(after)) <= len(set(after) & came)
    assert set(after) - set(before) - came <= set(names)  # no stranger
    assert len(set(before) ^ set(after)) <= 2 * (len(set(before) & gone) + len(set(after) & came))
    assert m.draw(edited, 100, seed=3) != after  # another seed, another sample


def test_sampling_generates_then_runs_the_drawn_names_and_reports_the_interval(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plan = {f"toolkit.plan.planner.x_f__mutmut_{i}": None for i in range(30)}
    _meta(tmp_path, "toolkit.plan.planner", plan)
    _meta(tmp_path, "toolkit.data.matrix", {"toolkit.data.matrix.x_g__mutmut_1": None})
    monkeypatch.chdir(tmp_path)
    s = FakeSession()
    m.mutants(s, ["toolkit.plan", "--sample", "10", "--seed", "3", "--max-children", "1"])
    generate, run = s.ran
    assert generate == (sys.executable, "-c", m.GENERATE, "1")
    drawn = list(run[3:])
    assert run[1:3] == ("run", "--max-children=1") and drawn == m.draw(plan, 10, 3)
    # mutmut ran them: 8 killed, 2 survived (a real run writes these into the meta files)
    codes: dict[str, int | None] = dict(plan)
    codes.update({n: (0 if i < 2 else 1) for i, n in enumerate(drawn)})
    _meta(tmp_path, "toolkit.plan.planner", codes)
    again = FakeSession()
    m.mutants(again, ["toolkit.plan", "--sample", "10", "--seed", "3", "--score-only"])
    assert again.ran == []
    # 8 of 10: p = 0.8, z²/n = 0.38415; (0.8 + 0.19207 ± 1.96·sqrt(0.016 + 0.009604)) / 1.38415
    # = (0.99207 ± 0.31362) / 1.38415 = 0.4901 .. 0.9433
    assert again.logs == ["sample: 10 of 30 mutants, seed 3",
                          f"survived: {drawn[0]}", f"survived: {drawn[1]}",
                          "toolkit.plan: 8 killed of 10 (80.0%) in a sample of 10 of 30 mutants, "
                          "95% interval 49.0-94.3%, 2 survived, 0 not covered by any test"]


@pytest.mark.parametrize("args", [["toolkit.examples"], ["inspect.policy"], ["toolkit.inspect.Policy;rm"],
                                  ["toolkit.plan", "toolkit.tests"]])
def test_a_module_outside_the_three_packages_is_refused_in_one_line(
        args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    message, code = aborted(in_nox(lambda s: m.mutants(s, [*args, "--score-only"])))
    assert code == 2
    assert message.startswith("bad module ")
    assert message.endswith("e.g. toolkit.inspect.readers.policy")
    assert "\n" not in message and capsys.readouterr().err == ""


@pytest.mark.parametrize(("args", "needle"), [(["--sample", "0"], "bad --sample 0"),
                                              (["--max-children", "0"], "bad --max-children 0"),
                                              (["--sample", "x"], "invalid int value: 'x'")])
def test_a_bad_number_is_refused_in_one_line(args: list[str], needle: str,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    message, code = aborted(in_nox(lambda s: m.mutants(s, [*args, "--score-only"])))
    assert code == 2 and needle in message and "\n" not in message
    assert capsys.readouterr().err == ""


def test_a_sample_of_nothing_generated_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    result = in_nox(lambda s: m.mutants(s, ["toolkit.data", "--sample", "5", "--score-only"]))
    assert result.reason == ("error: no mutants of toolkit.data in mutants/: "
                             "run without --score-only first (exit 2)")


def test_data_files_changed_since_mutmut_copied_them_are_refreshed(tmp_path: Path) -> None:
    (tmp_path / "toolkit" / "data").mkdir(parents=True)
    (tmp_path / "toolkit" / "data" / "known.toml").write_text("new\n")
    (tmp_path / "toolkit" / "data" / "same.toml").write_text("same\n")
    (tmp_path / "toolkit" / "data" / "code.py").write_text("x = 2\n")
    assert m.refresh_data(tmp_path) == []  # nothing generated yet: nothing to refresh
    copy = tmp_path / "mutants" / "toolkit" / "data"
    copy.mkdir(parents=True)
    (copy / "known.toml").write_text("old\n")
    (copy / "same.toml").write_text("same\n")
    (copy / "code.py").write_text("x = 1  # mutated: mutmut's own business\n")
    assert m.refresh_data(tmp_path) == [copy / "known.toml"]
    assert (copy / "known.toml").read_text() == "new\n" and (copy / "code.py").read_text().startswith("x = 1")


def test_a_data_file_in_folders_new_since_mutmut_copied_is_copied_with_its_folders(
        tmp_path: Path) -> None:
    """A data file added since mutmut copied the tree, two folders deep under folders the
    copy lacks (``toolkit/data/gpus/eras/``), is copied with those folders made (as
    ``mkdir -p``), byte for byte."""
    (tmp_path / "mutants" / "toolkit").mkdir(parents=True)  # mutmut copied, data/ not yet
    new = tmp_path / "toolkit" / "data" / "gpus" / "eras" / "rdna5.toml"
    new.parent.mkdir(parents=True)
    new.write_bytes(b"[era]\nname = 'x'\n")
    copy = tmp_path / "mutants" / "toolkit" / "data" / "gpus" / "eras" / "rdna5.toml"
    assert m.refresh_data(tmp_path) == [copy]
    assert copy.read_bytes() == new.read_bytes()


def test_a_run_says_which_stale_data_copies_it_refreshed(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Before mutmut runs, each data file copied again into mutants/ is named in the session's
    log, relative to the project folder (the path a contributor can open)."""
    (tmp_path / "toolkit" / "data").mkdir(parents=True)
    (tmp_path / "toolkit" / "data" / "known.toml").write_text("new\n")
    copy = tmp_path / "mutants" / "toolkit" / "data"
    copy.mkdir(parents=True)
    (copy / "known.toml").write_text("old\n")
    monkeypatch.chdir(tmp_path)
    s = FakeSession()
    m.mutants(s, ["toolkit.data"])
    assert [line for line in s.logs if "known.toml" in line] == [
        "refreshed mutants/toolkit/data/known.toml"]
    assert s.logs.index("refreshed mutants/toolkit/data/known.toml") == 0  # before the run


EQUIV_DOC = """\
# Mutation testing

## Runs

- `toolkit.plan.planner.x_f__mutmut_1` was killed by a test (not in the list below).

## Equivalent mutants

One line per mutant.

- `toolkit.plan.planner.x_f__mutmut_2` (`"BUILD"`) and `_3` (`"X"`): names compare
  case-insensitively, as `planner.x_f__mutmut_9` does (a reason's citation, not a listing).
- `toolkit.data.matrix.x_g__mutmut_1` (a key renamed): no reader; see `_7` above.
- `toolkit.plan.planner.x_f__mutmut_4`: killed after all (the doc is wrong about it).

## Later notes

- `toolkit.plan.planner.x_f__mutmut_5` is no equivalent: another section.
"""


def test_documented_equivalents_are_left_out_of_the_score(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    assert m.equivalents(EQUIV_DOC) == {
        "toolkit.plan.planner.x_f__mutmut_2", "toolkit.plan.planner.x_f__mutmut_3",
        "toolkit.data.matrix.x_g__mutmut_1", "toolkit.data.matrix.x_g__mutmut_7",
        "toolkit.plan.planner.x_f__mutmut_4"}
    assert m.equivalents("# no such section\n- `toolkit.plan.a.x_f__mutmut_1`\n") == set()
    codes: dict[str, int | None] = {f"toolkit.plan.planner.x_f__mutmut_{i}": c
                                    for i, c in [(1, 1), (2, 0), (3, 33), (4, 1), (5, 0), (6, 1), (9, 0)]}
    _meta(tmp_path, "toolkit.plan.planner", codes)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "equivalent-mutants.md").write_text(EQUIV_DOC)
    monkeypatch.chdir(tmp_path)
    s = FakeSession()
    m.mutants(s, ["toolkit.plan", "--score-only"])
    # 7 mutants: 2 and 3 equivalent (left out); 1, 4, 6 killed; 5 and 9 survive: 3 of 5
    assert s.logs == [
        "survived: toolkit.plan.planner.x_f__mutmut_5", "survived: toolkit.plan.planner.x_f__mutmut_9",
        "killed, yet listed as equivalent in docs/equivalent-mutants.md: toolkit.plan.planner.x_f__mutmut_4",
        "toolkit.plan: 3 killed of 5 (60.0%), 2 survived, 0 not covered by any test, 2 equivalent (left out)",
    ]


def test_the_equivalents_doc_is_read_as_utf8_whatever_the_locale(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ascii_locale: None) -> None:
    """docs/equivalent-mutants.md is UTF-8 (it holds non-ASCII text: dashes, arrows, ...); in
    the C locale (ASCII) it is still read, and a mutant it lists still left out of the score."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "equivalent-mutants.md").write_text(
        "## Equivalent mutants\n\n- `toolkit.plan.planner.x_f__mutmut_2`: « – » → no reader.\n",
        encoding="utf-8")
    _meta(tmp_path, "toolkit.plan.planner", {"toolkit.plan.planner.x_f__mutmut_1": 1,
                                             "toolkit.plan.planner.x_f__mutmut_2": 0})
    monkeypatch.chdir(tmp_path)
    s = FakeSession()
    m.mutants(s, ["toolkit.plan", "--score-only"])
    assert not [line for line in s.logs if line.startswith("survived")]
    assert s.logs[-1].startswith("toolkit.plan: 1 killed of 1 (100.0%)")
    assert s.logs[-1].endswith("1 equivalent (left out)")


def test_unkilled_runs_again_only_the_drawn_mutants_not_killed(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    names = [f"toolkit.plan.planner.x_f__mutmut_{i}" for i in range(12)]
    codes: dict[str, int | None] = dict.fromkeys(names)
    _meta(tmp_path, "toolkit.plan.planner", codes)
    drawn = m.draw(names, 6, 4)
    # killed (1, 36), survived (0), not covered (33), not run (None), suspicious (99)
    codes.update(zip(drawn, [1, 36, 0, 33, None, 99], strict=True))
    _meta(tmp_path, "toolkit.plan.planner", codes)
    monkeypatch.chdir(tmp_path)
    s = FakeSession()
    m.mutants(s, ["toolkit.plan", "--sample", "6", "--seed", "4", "--unkilled"])
    _generate, run = s.ran
    assert list(run[2:]) == drawn[2:]  # the four not killed, in the sample's order
    assert "running the 4 of them no test has killed yet" in s.logs
    assert aborted(in_nox(lambda s: m.mutants(s, ["--unkilled"])))[1] == 2


def test_two_seeds_run_their_samples_in_one_mutmut_run_and_are_scored_apart(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    names = [f"toolkit.plan.planner.x_f__mutmut_{i}" for i in range(40)]
    _meta(tmp_path, "toolkit.plan.planner", dict.fromkeys(names))
    monkeypatch.chdir(tmp_path)
    one, two = m.draw(names, 8, 11), m.draw(names, 8, 12)
    assert one != two  # two samples, drawn apart (40 choose 8 ways each)
    s = FakeSession()
    m.mutants(s, ["toolkit.plan", "--sample", "8", "--seed", "11", "--seed", "12"])
    assert len(s.ran) == 2  # generating, then ONE mutmut run of every drawn mutant, each once
    ran = list(s.ran[1][2:])
    assert sorted(ran) == sorted(set(one) | set(two)) and len(ran) == len(set(ran))
    # mutmut's results: every mutant of sample 11 killed; of 12's, those not in 11 survive
    codes: dict[str, int | None] = dict.fromkeys(names)
    codes.update(dict.fromkeys(two, 0))
    codes.update(dict.fromkeys(one, 1))
    _meta(tmp_path, "toolkit.plan.planner", codes)
    again = FakeSession()
    m.mutants(again, ["toolkit.plan", "--sample", "8", "--seed", "11", "--seed", "12", "--score-only"])
    both = len(set(one) & set(two))
    lines = [x for x in again.logs if x.startswith(("toolkit.plan:", "sample of seed"))]
    assert lines[0] == "sample of seed 11:" and lines[2] == "sample of seed 12:"
    assert lines[1].startswith("toolkit.plan: 8 killed of 8 (100.0%) in a sample of 8 of 40 mutants")
    assert lines[3].startswith(f"toolkit.plan: {both} killed of 8 ")
    assert lines[3].endswith(f", {8 - both} survived, 0 not covered by any test")
    # one seed alone reports as it always did: no "sample of seed" heading
    alone = FakeSession()
    m.mutants(alone, ["toolkit.plan", "--sample", "8", "--seed", "12", "--score-only"])
    assert not any(x.startswith("sample of seed") for x in alone.logs)
    assert alone.logs[0] == "sample: 8 of 40 mutants, seed 12"


def _help_entries(capsys: pytest.CaptureFixture[str]) -> dict[str, str]:
    """``nox -s mutants -- --help`` (the session succeeds), as its parts: "description" (between
    the usage and the arguments) and each argument's entry, whitespace joined (argparse wraps)."""
    result = in_nox(lambda s: m.mutants(s, ["--help"]))
    assert result.status.name == "SUCCESS", result.reason
    out = capsys.readouterr().out
    head, rest = out.split("\npositional arguments:\n", 1)
    positional, options = rest.split("\noptions:\n", 1)
    described = head.split("\n\n", 1)[1] if "\n\n" in head else ""
    parts = {"description": " ".join(described.split())}
    for block in re.split(r"\n(?=  \S)", positional.rstrip() + "\n" + options):
        # "  --sample N            run N mutants ...": the argument (and metavar), 2+ spaces
        # or a line break, its help
        argument, text = (re.split(r"\s{2,}", block.strip(), maxsplit=1) + [""])[:2]
        parts[argument.split()[0]] = " ".join(text.split())
    return parts


def test_help_says_what_docs_equivalent_mutants_md_says_of_the_session_and_its_options(
        capsys: pytest.CaptureFixture[str]) -> None:
    # docs/equivalent-mutants.md: "`nox -s mutants` runs mutmut over every package of
    # `toolkit/`"; modules: "packages, or modules" (e.g. `toolkit.inspect.readers.policy`), no
    # module given: every package; "--score-only # the last results, nothing run"; --sample
    # "draws N of the generated names uniformly at random" with "a 95% Wilson score
    # interval". Words compared as the doc writes them.
    parts = _help_entries(capsys)
    assert "mutmut" in parts["description"] and "every package" in parts["description"]
    assert "mutation testing" in parts["description"]
    assert re.search(r"(?<!\S)\(default: every package\)(?!\S)", parts["modules"]), parts["modules"]
    # the doc's "packages, or modules" and its example module, spelt as Python imports it
    # (module names are case-sensitive)
    assert re.search(r"\bpackages\b.*\bmodules\b", parts["modules"]), parts["modules"]
    assert re.search(r"(?<!\S)toolkit\.inspect\.readers\.policy(?!\S)", parts["modules"]), parts["modules"]
    assert "the last" in parts["--score-only"] and "nothing" in parts["--score-only"]
    assert "uniformly at random" in parts["--sample"] and "95%" in parts["--sample"]
    assert "interval" in parts["--sample"]


def test_generating_mutants_again_reuses_the_mutants_folder(tmp_path: Path) -> None:
    """The generation command, run by real mutmut in a child Python in a one-module project,
    twice: the second run (an earlier run's mutants/ is there) succeeds as the first did."""
    import subprocess

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "a.py").write_text("def f(x):\n    return x + 1\n")
    (tmp_path / "pyproject.toml").write_text('[tool.mutmut]\nsource_paths = ["pkg/"]\n')
    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", m.GENERATE, "1"], cwd=tmp_path,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
    assert "mutmut" in (tmp_path / "mutants" / "pkg" / "a.py").read_text()
