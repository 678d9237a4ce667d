"""Known failures (toolkit/data/known_failures.toml): validated like the rest of the data, left
out of CI's matrix, brought back by --include-known-failures, refused by plan and sessions
(exit 7), shown by invoke matrix, and a run judged like pytest's strict xfail.

The data here is a copy of the real matrix data with one entry written for each test; which
builds an entry selects is worked out by hand from apex.toml and rocm.toml (apex 1.8.0 builds
on ROCm 6.4 and 7.0 for Pythons 3.9-3.13t), never taken from the code under test.
"""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path
from types import SimpleNamespace

import pytest

from toolkit.cli.main import main
from toolkit.data import known
from toolkit.data.known import KnownFailure
from toolkit.plan.recipes import load_matrix
from toolkit.verify import junit
from toolkit.verify.report import summarise

ROOT = Path(__file__).resolve().parents[2]

ENTRY = """
[failures.apex-demo]
package = "apex"
versions = ">=1.8,<1.9"
rocm = "==7.0"
python = ["3.12"]
fails = "build-wheel"
reason = "a demo entry for the tests"
evidence = "ROCm/TheRock#3413"
"""
SELECTED = "apex-1.8.0-cp312-rocm7.0"  # the one build ENTRY selects (by hand, from apex.toml)


def data_with(tmp_path: Path, text: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    data = tmp_path / "data"
    from toolkit.data.matrix import data_dir

    shutil.copytree(data_dir(), data,  # the data the loader reads (TOOLKIT_DATA_DIR honoured)
                    ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    with (data / "known_failures.toml").open("a") as fh:
        fh.write(text)
    monkeypatch.setenv("TOOLKIT_DATA_DIR", str(data))
    return data


def github(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[dict[str, str]]]:
    code = main(["matrix", "--format", "github", *argv])
    out = capsys.readouterr().out
    return code, (json.loads(out)["include"] if code == 0 else [])


# ----------------------------------------------------------------------------- the shipped file
def test_shipped_file_loads_and_every_entry_has_evidence() -> None:
    from toolkit.data.matrix import load_matrix

    m = load_matrix()
    assert m.known_failures  # the real entries: tests/unit/test_known_failures_real.py
    for e in m.known_failures:
        assert e.evidence and e.reason and any(e.selects(b) for b in m.builds)


# ----------------------------------------------------------------------------- CI selection
@pytest.mark.parametrize("trigger", ["pull_request", "push", "schedule", "workflow_dispatch"])
def test_known_failure_leaves_the_ci_matrix_on_every_trigger(
        trigger: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    # the entry selects one build this trigger runs (the first one it lists), by its version,
    # ROCm release and Python: a pull request runs only the newest pairs (ci.toml)
    code, before = github(capsys, "--trigger", trigger, "--package", "apex")
    assert code == 0 and before
    first = before[0]
    selected = first["id"]
    data_with(tmp_path, ENTRY.replace('">=1.8,<1.9"', f'"=={first["version"]}"')
              .replace('"==7.0"', f'"=={first["rocm"]}"')
              .replace('"3.12"', f'"{first["python"]}"'), monkeypatch)
    code, after = github(capsys, "--trigger", trigger, "--package", "apex")
    assert code == 0
    assert {e["id"] for e in before} - {e["id"] for e in after} == {selected}
    # every entry of that build leaves (schedule and workflow_dispatch: one per family)
    assert len(after) == len(before) - len([e for e in before if e["id"] == selected])
    assert all(e["known_failure"] == "" for e in after)


@pytest.mark.parametrize("trigger", ["schedule", "workflow_dispatch"])
def test_include_known_failures_brings_it_back(trigger: str, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    data_with(tmp_path, ENTRY, monkeypatch)
    code, entries = github(capsys, "--trigger", trigger, "--package", "apex", "--rocm", "7.0",
                           "--include-known-failures")
    assert code == 0
    ids = list(dict.fromkeys(e["id"] for e in entries if e["version"] == "1.8.0"))
    # apex 1.8.0 on ROCm 7.0: Pythons 3.9, 3.10, 3.11, 3.12, 3.13, 3.13t (apex.toml)
    assert ids == [f"apex-1.8.0-{py}-rocm7.0"
                   for py in ("cp39", "cp310", "cp311", "cp312", "cp313", "cp313t")]
    marked = {e["id"]: e["known_failure"] for e in entries if e["known_failure"]}
    assert marked == {SELECTED: "apex-demo"}


@pytest.mark.parametrize("trigger", ["pull_request", "push"])
def test_other_triggers_refuse_the_flag(trigger: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["matrix", "--format", "github", "--trigger", trigger,
                 "--include-known-failures"]) == 2
    err = capsys.readouterr().err
    assert "workflow_dispatch, schedule" in err and len(err.strip().splitlines()) == 1


def test_family_selector_only_for_that_familys_targets(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    data_with(tmp_path, ENTRY.replace('python = ["3.12"]', 'families = ["gfx90a"]'),
              monkeypatch)
    _, default = github(capsys, "--trigger", "schedule", "--package", "apex", "--rocm", "7.0",
                        "--families", "gfx94X-dcgpu")
    assert len([e for e in default if e["version"] == "1.8.0"]) == 6, \
        "ROCm 7.0's default family gfx94X-dcgpu is not selected"
    _, both = github(capsys, "--trigger", "schedule", "--package", "apex", "--rocm", "7.0",
                     "--families", "gfx90a,gfx94X-dcgpu")
    assert {e["family"] for e in both if e["version"] == "1.8.0"} == {"gfx94X-dcgpu"}, \
        "every gfx90a entry of apex 1.8.0 is left out"


# ----------------------------------------------------------------------------- invoke matrix
def test_matrix_shows_it_next_to_its_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    data_with(tmp_path, ENTRY, monkeypatch)
    assert main(["matrix", "--package", "apex"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if "│ 7.0 " in line)
    assert "apex-demo" in row
    assert not any("apex-demo" in line for line in out.splitlines() if "│ 6.4 " in line)
    assert ("known failure apex-demo (apex >=1.8,<1.9, ROCm ==7.0, Python 3.12): step build-wheel "
            "fails: a demo entry for the tests (evidence: ROCm/TheRock#3413)") in out
    assert main(["matrix", "--format", "json", "--package", "apex", "--rocm", "7.0"]) == 0
    builds = json.loads(capsys.readouterr().out)
    carried = {b["id"]: [k["id"] for k in b["known_failures"]] for b in builds}
    assert carried.pop(SELECTED) == ["apex-demo"] and not any(carried.values())
    assert main(["matrix", "--explain", "apex-demo"]) == 0
    out = capsys.readouterr().out
    for needle in ("reason      a demo entry for the tests", "evidence    ROCm/TheRock#3413",
                   "fails       step build-wheel", f"builds      {SELECTED}"):
        assert needle in out
    assert main(["matrix", "--explain", SELECTED]) == 0
    assert "apex-demo" in capsys.readouterr().out


# ----------------------------------------------------------------------------- plan, sessions
def test_plan_refuses_with_exit_7_unless_included(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    data_with(tmp_path, ENTRY, monkeypatch)
    assert main(["plan", SELECTED]) == 7
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "a demo entry for the tests" in err[0] and "ROCm/TheRock#3413" in err[0]
    assert main(["plan", SELECTED, "--include-known-failures"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# known failure apex-demo:") and "# plan for " + SELECTED in out
    assert main(["plan", "apex-1.8.0-cp311-rocm7.0"]) == 0, "other builds are not touched"


def test_session_dry_run_says_it_up_front(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    from tests.fixtures.nox_runs import aborted, in_nox
    from toolkit.cli import sessions

    data_with(tmp_path, ENTRY, monkeypatch)
    result = in_nox(lambda s: sessions.build(s, "3.12", "7.0", [
        "--package", "apex", "--version", "1.8.0", "--dry-run"]))
    message, code = aborted(result)  # nox records the session aborted, with the line
    assert code == 7
    assert message.startswith(f"{SELECTED} is not run: known failure ")
    assert "a demo entry for the tests (evidence: ROCm/TheRock#3413)" in message
    assert capsys.readouterr().err == ""  # said once: nox's line

    assert in_nox(lambda s: sessions.build(s, "3.12", "7.0", [
        "--package", "apex", "--version", "1.8.0", "--dry-run", "--include-known-failures"]))
    assert capsys.readouterr().out.startswith("# known failure apex-demo:")


def test_session_runs_the_pairs_other_builds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """Python 3.13 x ROCm 7.0 builds apex 1.8.0 and fbgemm_gpu 1.5.0 (apex.toml,
    fbgemm_gpu.toml): the known failure is left out, the other is planned, exit 7."""
    from tests.fixtures.nox_runs import aborted, in_nox
    from toolkit.cli import sessions

    data_with(tmp_path, ENTRY.replace('"3.12"', '"3.13"'), monkeypatch)
    result = in_nox(lambda s: sessions.build(s, "3.13", "7.0", ["--dry-run"]))
    assert aborted(result) == ("1 known failure left out (--include-known-failures runs them)", 7)
    captured = capsys.readouterr()
    assert captured.err.startswith("warning: apex-1.8.0-cp313-rocm7.0 is not run: known failure")
    assert "# plan for fbgemm_gpu-1.5.0-cp313-rocm7.0" in captured.out
    assert "# plan for apex-1.8.0-cp313-rocm7.0" not in captured.out


def test_a_session_whose_every_build_is_a_known_failure_names_each_build(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With an entry for every apex from 1.8 on (Python 3.13, ROCm 7.0) and ``--package
    apex``, nothing is left to run: exit 7, one line whose '; '-separated parts each name one
    refused apex build of the pair first (apex 1.8.0 and later: at least two, apex.toml)."""
    from tests.fixtures.nox_runs import aborted, in_nox
    from toolkit.cli import sessions

    entry = ENTRY.replace('">=1.8,<1.9"', '">=1.8"').replace('"3.12"', '"3.13"')
    data_with(tmp_path, entry, monkeypatch)
    message, code = aborted(in_nox(lambda s: sessions.build(s, "3.13", "7.0", [
        "--package", "apex", "--dry-run"])))
    assert code == 7 and "\n" not in message
    parts = message.split("; ")
    assert len(parts) >= 2, message
    for part in parts:
        build, _, rest = part.partition(" ")
        assert build.startswith("apex-") and build.endswith("-cp313-rocm7.0"), message
        assert rest.startswith("is not run: known failure apex-demo"), message


# ----------------------------------------------------------------------------- malformed entries
MALFORMED = {
    "unknown key": (ENTRY.replace("reason =", "colour = \"red\"\nreason ="),
                    'failures."apex-demo".colour: unknown key'),
    "matches nothing": (ENTRY.replace('versions = ">=1.8,<1.9"', 'versions = ">=9"'),
                        'failures."apex-demo": its selector (apex >=9, ROCm ==7.0, Python 3.12) '
                        "matches no build of the matrix; `invoke matrix --format json` lists them"),
    "no evidence": (ENTRY.replace('evidence = "ROCm/TheRock#3413"\n', ""),
                    'failures."apex-demo".evidence: missing'),
    "evidence not a reference": (ENTRY.replace('"ROCm/TheRock#3413"', '"an issue somewhere"'),
                                 "has evidence 'an issue somewhere' that is not owner/repo#ISSUE or "
                                 "owner/repo@COMMIT FILE (several: separated by '; ')"),
    "bad range": (ENTRY.replace('">=1.8,<1.9"', '"newer than 1.8"'),
                  "'newer than 1.8' is not a version range like >=1.4,<1.7 or ==7.0 (PEP 440 specifiers)"),
    "unknown package": (ENTRY.replace('package = "apex"', 'package = "nope"'),
                        "'nope' is not allowed; valid: "
                        + ", ".join(sorted(load_matrix().packages))),
    "windows only": (ENTRY.replace('fails =', 'platform = "windows"\nfails ='),
                     "selects no build: the matrix builds linux wheels only"),
    "test without smoke": (ENTRY.replace('fails =', 'test = "test_x.py::test_y"\nfails ='),
                           'failures."apex-demo".test: names a smoke test; valid only with fails = "smoke"'),
    "unknown family": (ENTRY.replace('python = ["3.12"]', 'families = ["gfx999X"]'),
                       "'gfx999X' is not allowed"),
    "commit evidence without holds": (
        ENTRY.replace('"ROCm/TheRock#3413"', '"ROCm/apex@215398d0 setup.py"'),
        'failures."apex-demo".holds: is missing: evidence owner/repo@COMMIT FILE needs `holds`, a '
        "regular expression of what FILE says (invoke upstream re-reads it)"),
    "holds not a regex": (
        ENTRY.replace('fails =', "holds = 'release[1.7'\nfails ="),
        "is not a regular expression"),
}


@pytest.mark.parametrize("defect", sorted(MALFORMED))
def test_malformed_entry_is_a_data_error(defect: str, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    text, needle = MALFORMED[defect]
    data = data_with(tmp_path, text, monkeypatch)
    assert main(["matrix"]) == 3
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert err.startswith(f"error: {data / 'known_failures.toml'}: ") and needle in err, err


# ----------------------------------------------------------------------------- judging a run
def entry(**kw: object) -> KnownFailure:
    fields: dict[str, object] = {"id": "e", "package": "apex", "fails": "build-wheel",
                                 "reason": "r", "evidence": "o/r#1"}
    fields.update(kw)
    return KnownFailure(**fields)  # type: ignore[arg-type]


PLANNED = ["get-sources", "build-wheel", "check", "smoke", "publish"]


@pytest.mark.parametrize(("e", "planned", "failed", "error", "want"), [
    (entry(), PLANNED, "build-wheel", "step 'build-wheel' failed", known.XFAIL),
    (entry(), PLANNED, None, None, known.XPASS),
    (entry(), PLANNED, "get-sources", "could not clone", known.FAILED),
    (entry(fails="smoke"), ["build-wheel", "publish"], None, None, known.NOT_REACHED),
    (entry(fails="smoke", test="test_runtime.py::test_x"), PLANNED, "smoke",
     "smoke tests failed: b: test_runtime.py::test_x", known.XFAIL),
    (entry(fails="smoke", test="test_runtime.py::test_x"), PLANNED, "smoke",
     "smoke tests failed: b: test_imports.py::test_import", known.FAILED),
])
def test_verdict(e: KnownFailure, planned: list[str], failed: str | None, error: str | None,
                 want: str) -> None:
    assert known.verdict(e, planned, failed, error) == want


SMOKE_ENTRY = entry(fails="smoke", test="test_runtime.py::test_x")


@pytest.mark.parametrize(("failed", "error", "outcome", "want"), [
    ("smoke", "smoke tests failed", "failed", known.XFAIL),
    ("smoke", "smoke tests failed", "error", known.XFAIL),
    (None, None, "passed", known.XPASS),  # the named test ran and passed: strict xpass
    (None, None, "skipped", known.NOT_REACHED),  # skipped (no GPU) is not a pass
    (None, None, None, known.NOT_REACHED),  # the run never reported it
    ("smoke", "smoke tests failed", "skipped", known.FAILED),  # another test failed
    ("smoke", "smoke tests failed", "passed", known.XPASS),
    ("build-wheel", "step 'build-wheel' failed", None, known.FAILED),
])
def test_smoke_test_verdict_by_its_junit_outcome(failed: str | None, error: str | None,
                                                 outcome: str | None, want: str) -> None:
    assert known.verdict(SMOKE_ENTRY, PLANNED, failed, error, outcome) == want


def test_exit_codes_like_strict_xfail() -> None:
    from toolkit.cli.known import Verdict, exit_code

    failed = SimpleNamespace(build_id="a", exit_code=5, error="boom")
    ok = SimpleNamespace(build_id="b", exit_code=0, error=None)
    assert exit_code([Verdict("a", entry(), known.XFAIL)], [failed, ok]) == 0
    assert exit_code([Verdict("b", entry(), known.XPASS)], [ok]) == 1
    assert exit_code([Verdict("a", entry(), known.FAILED)], [failed]) == 5
    assert exit_code([], [failed]) == 5


def test_junit_marks_xfail_and_strict_xpass(tmp_path: Path) -> None:
    from toolkit.cli.known import Verdict

    outcomes = [SimpleNamespace(build_id=b, seconds=1.0, error=err)
                for b, err in (("x", "step 'build-wheel' failed"), ("y", None), ("z", "boom"),
                               ("w", None))]
    verdicts = {"x": Verdict("x", entry(), known.XFAIL), "y": Verdict("y", entry(), known.XPASS)}
    path = junit.write_builds(tmp_path / "builds.xml", outcomes, verdicts)
    cases = {c.get("name"): c for c in ET.parse(path).getroot().iter("testcase")}
    skipped = cases["x"].find("skipped")
    assert skipped is not None and skipped.get("type") == "pytest.xfail"
    failure = cases["y"].find("failure")
    assert failure is not None
    assert failure.get("message", "").startswith("[XPASS(strict)] y: known failure no longer fails")
    assert cases["z"].find("failure") is not None and len(cases["w"]) == 0
    assert [c.outcome for c in junit.cases(path)] == ["xfailed", "failed", "failed", "passed"]
    assert summarise([], [path]).test_totals() == {"passed": 1, "failed": 2, "errors": 0,
                                                   "skipped": 0, "xfailed": 1}


def test_pytests_own_xfail_reads_as_xfailed(tmp_path: Path) -> None:
    """pytest's JUnit for an xfail test (written by pytest itself, not by us)."""
    import subprocess
    import sys

    test = tmp_path / "test_x.py"
    test.write_text("import pytest\n\n@pytest.mark.xfail(reason='known')\n"
                    "def test_known():\n    assert False\n\ndef test_ok():\n    pass\n")
    xml = tmp_path / "j.xml"
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p",
                    "no:xdist", str(test), f"--junitxml={xml}", "-o", "junit_family=xunit2"],
                   cwd=tmp_path, capture_output=True, check=False, timeout=120)
    assert sorted(c.outcome for c in junit.cases(xml)) == ["passed", "xfailed"]


def test_upstream_refs_for_the_upstream_command() -> None:
    e = entry(evidence="ROCm/TheRock#3458; ROCm/apex@215398d0 setup.py")
    assert known.upstream_refs([e]) == [("e", "issue", "ROCm/TheRock", "3458", ""),
                                        ("e", "commit", "ROCm/apex", "215398d0", "setup.py")]


def test_nox_list_names_a_malformed_entry_in_one_line(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    import os
    import subprocess
    import sys

    data = data_with(tmp_path, ENTRY.replace('evidence = "ROCm/TheRock#3413"\n', ""), monkeypatch)
    env = {**os.environ, "TOOLKIT_DATA_DIR": str(data)}
    env.pop("NOXSESSION", None)
    res = subprocess.run([sys.executable, "-m", "nox", "-l"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 3
    assert res.stderr.strip().splitlines() == [
        f'error: {data / "known_failures.toml"}: failures."apex-demo".evidence: missing '
        "(a non-empty string is required)"]


# ----------------------------------------------------------------------------- the manifest
@pytest.mark.parametrize(("error", "failed_step", "want", "code"), [
    ("step 'build-wheel' failed", "build-wheel", "xfail", 0),
    (None, None, "xpass", 1),
])
def test_manifest_records_xfail_and_xpass(error: str | None, failed_step: str | None, want: str,
                                          code: int, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """A run of a known failure (the executor stands in: it writes the manifest a run writes
    and returns its outcome): the manifest says xfail or xpass, not only failed or ok."""
    from toolkit.cli.running import Finished, run_and_summarise
    from toolkit.data.matrix import load_matrix
    from toolkit.plan.layout import Layout
    from toolkit.run import jobs, manifest

    data_with(tmp_path, ENTRY, monkeypatch)
    layout = Layout(tmp_path / "work", tmp_path / "cache")
    build = load_matrix().build(SELECTED)
    plan = SimpleNamespace(build=build, targets=("gfx942",),
                           steps=[SimpleNamespace(name=n) for n in PLANNED])
    path = layout.artifacts(build) / "manifest.json"

    def fake_run(plans: list[object], lay: object, reporter: object) -> list[jobs.Outcome]:
        manifest.write(path, {"build": {"id": SELECTED, "package": "apex", "version": "1.8.0"},
                              "outcome": "ok" if error is None else "failed",
                              "failed_step": failed_step, "error": error})
        return [jobs.Outcome(SELECTED, "apex", error=error, failed_step=failed_step,
                             exit_code=5 if error else 0)]

    monkeypatch.setattr(jobs, "run_plans", fake_run)
    if code:
        with pytest.raises(Finished) as exc:
            run_and_summarise([plan], layout, known_failures=True)
        assert exc.value.code == code
    else:
        run_and_summarise([plan], layout, known_failures=True)
    recorded = json.loads(path.read_text())
    assert recorded["outcome"] == ("ok" if error is None else "failed")  # what the run did
    assert recorded["known_failure"]["id"] == "apex-demo"
    assert recorded["known_failure"]["result"] == want
    assert capsys.readouterr().out.count(SELECTED) >= 1


# ----------------------------------------------------------------------------- smoke-level entries
SMOKE_TEST = "test_runtime.py::test_apex_fused_layer_norm"
SMOKE_JUNIT_XML = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" tests="2">
<testcase classname="test_imports" name="test_import[apex]" time="0.1"/>
<testcase classname="test_runtime" name="test_apex_fused_layer_norm[gfx942]" time="0.2">{body}</testcase>
</testsuite></testsuites>
"""


@pytest.mark.parametrize(("body", "smoke_failed", "want", "code"), [
    ('<failure message="AssertionError: mismatch">trace</failure>', True, "xfail", 0),
    ("", False, "xpass", 1),
    ('<skipped type="pytest.skip" message="no GPU"/>', False, "not reached", 0),
])
def test_smoke_level_entry_is_judged_by_its_test(body: str, smoke_failed: bool, want: str,
                                                 code: int, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """The named smoke test runs in the smoke step, which keeps its JUnit XML beside the
    manifest (the executor stands in: it writes what a smoke run writes, by hand)."""
    from toolkit.cli.running import Finished, run_and_summarise
    from toolkit.core.steps import SMOKE_JUNIT
    from toolkit.env.host import HostFacts
    from toolkit.plan.layout import Layout
    from toolkit.plan.model import Options
    from toolkit.plan.planner import plan
    from toolkit.plan.recipes import load_matrix
    from toolkit.run import jobs, manifest

    data_with(tmp_path, ENTRY.replace('fails = "build-wheel"',
                                      f'fails = "smoke"\ntest = "{SMOKE_TEST}"'), monkeypatch)
    m = load_matrix()
    layout = Layout(tmp_path / "work", tmp_path / "cache")
    p = plan(m, m.build(SELECTED), Options(), HostFacts(cores=2, mem_available_gib=8.0), layout)
    smoke = p.step("smoke")
    assert "--junit" in smoke.argv  # the smoke step keeps its JUnit XML
    artifacts = layout.artifacts(p.build)
    error = "smoke tests failed" if smoke_failed else None

    def fake_run(plans: list[object], lay: object, reporter: object) -> list[jobs.Outcome]:
        artifacts.mkdir(parents=True, exist_ok=True)
        (artifacts / SMOKE_JUNIT).write_text(SMOKE_JUNIT_XML.format(body=body))
        manifest.write(artifacts / "manifest.json",
                       {"build": {"id": SELECTED, "package": "apex", "version": "1.8.0"},
                        "outcome": "failed" if error else "ok"})
        return [jobs.Outcome(SELECTED, "apex", error=error,
                             failed_step="smoke" if error else None, exit_code=1 if error else 0)]

    monkeypatch.setattr(jobs, "run_plans", fake_run)
    if code:
        with pytest.raises(Finished) as exc:
            run_and_summarise([p], layout, known_failures=True)
        assert exc.value.code == code
    else:
        run_and_summarise([p], layout, known_failures=True)
    assert json.loads((artifacts / "manifest.json").read_text())["known_failure"]["result"] == want
    out = capsys.readouterr().out
    if want == "xpass":
        assert "known failure no longer fails: remove the entry apex-demo" in out


def test_known_failures_are_retried_only_by_the_retrying_triggers() -> None:
    from toolkit.core.errors import UsageError
    from toolkit.data.ci import github_matrix, load_ci
    from toolkit.data.matrix import load_matrix

    matrix = load_matrix()
    with pytest.raises(UsageError) as err:
        github_matrix(matrix, load_ci(matrix), "push", include_known_failures=True)
    assert err.value.message == (
        "--include-known-failures applies to the triggers workflow_dispatch, schedule, not 'push': "
        "CI selection stays positive on every other trigger")


def test_junit_failure_message_is_the_failures_signature(tmp_path: Path) -> None:
    """A failed build's test case says what failed (the signature's first line, e.g. the
    compiler's error), not only which command; the whole signature is in its text."""
    sig = ["native.c:2:85: error: expected ';' before '}' token", "second line"]
    outcomes = [SimpleNamespace(build_id="z", seconds=1.0, error="step 'build-wheel' failed",
                                failure={"step": "build-wheel", "exit_code": 5,
                                         "signature": sig, "log": None}),
                SimpleNamespace(build_id="n", seconds=1.0, error="no signature", failure=None)]
    path = junit.write_builds(tmp_path / "builds.xml", outcomes, {})
    cases = {c.get("name"): c for c in ET.parse(path).getroot().iter("testcase")}
    failure = cases["z"].find("failure")
    assert failure is not None and failure.get("message") == sig[0]
    assert failure.text is not None and failure.text.endswith("\n".join(sig))
    plain = cases["n"].find("failure")
    assert plain is not None and plain.get("message") == "no signature"
