"""`toolkit smoke`: choosing the build, bad input (exit codes, one line), reading results."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from invoke import Context, Exit

from toolkit.cli.main import main
from toolkit.core.errors import CheckFailed, EnvironmentProblem, UsageError
from toolkit.core.reporter import ListReporter
from toolkit.run.manifest import recipe_facts
from toolkit.verify import smoke
from toolkit.verify.smoke import (
    Case,
    SmokeOutcome,
    build_for_id,
    manifest_for_id,
    parse_junit,
    resolve,
    smoke_facts,
)

ROOT = Path(__file__).resolve().parents[2]

SAMPLE_ID = "hip_sample-0.1.0-cp311-rocm5.2"


def write_manifest(workdir: Path, build_id: str, env_dir: Path, *, package: str = "hip_sample",
                   recipe: str = "sample", dist: str = "hip-sample", rocm: str = "5.2",
                   mtime: float | None = None, **extra: Any) -> Path:
    path = workdir / "artifacts" / build_id / "manifest.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    # the fields the id is made of (a manifest whose id they do not make is refused)
    _pkg, version, cp, label = build_id.rsplit("-", 3)
    python = f"{cp[2]}.{cp[3:]}"
    data = {"build": {"id": build_id, "package": package, "version": version, "python": python,
                      "rocm": rocm, "torch": ""},
            "recipe": recipe, "dist": dist, "targets": ["gfx90a", "gfx908"],
            "env_dir": str(env_dir), "expected_modules": ["hip_sample", "hip_sample._native"],
            "outcome": "ok", **extra}
    path.write_text(json.dumps(data))
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def fake_env(root: Path) -> Path:
    """A folder whose bin/python is this interpreter (which has no hip-sample installed)."""
    (root / "bin").mkdir(parents=True)
    (root / "bin" / "python").symlink_to(sys.executable)
    return root


# ------------------------------------------------------------------------------ bad input
def test_unknown_gfx_is_exit_2_naming_valid_ids(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_manifest(tmp_path, SAMPLE_ID, tmp_path / "env")
    assert main(["smoke", "--workdir", str(tmp_path), "--gfx", "gfx9999"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown gfx target or family 'gfx9999'" in err
    assert "gfx942" in err and "gfx90a" in err and "Traceback" not in err


def test_unknown_build_is_exit_2_listing_builds_with_manifests(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_manifest(tmp_path, SAMPLE_ID, tmp_path / "env")
    write_manifest(tmp_path, "apex-1.8.0-cp312-rocm7.0", tmp_path / "env2", package="apex")
    assert main(["smoke", "--workdir", str(tmp_path), "--gfx", "gfx90a", "--build", "nope-1"]) == 2
    err = capsys.readouterr().err
    assert f"no build 'nope-1' in {tmp_path / 'artifacts'}" in err
    assert f"builds with a manifest: apex-1.8.0-cp312-rocm7.0, {SAMPLE_ID}" in err


def test_no_builds_at_all_suggests_the_demo(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["smoke", "--workdir", str(tmp_path), "--gfx", "gfx90a"]) == 4
    err = capsys.readouterr().err
    assert err.startswith(f"error: no builds in {tmp_path} yet") and "nox -s demo" in err
    assert err.count("\n") == 1


def test_environment_without_the_package(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    env = fake_env(tmp_path / "env")
    write_manifest(tmp_path, SAMPLE_ID, env)
    assert main(["smoke", "--workdir", str(tmp_path), "--gfx", "gfx90a"]) == 4
    err = capsys.readouterr().err
    assert f"error: hip-sample is not installed in {env}" in err and err.count("\n") == 1


def test_failed_build_says_where_it_stopped(tmp_path: Path) -> None:
    env = fake_env(tmp_path / "env")
    write_manifest(tmp_path, SAMPLE_ID, env, outcome="failed", failed_step="build-wheel")
    with pytest.raises(EnvironmentProblem, match=r"its build ended: failed at step build-wheel"):
        smoke.check_environment(resolve(tmp_path, SAMPLE_ID))


def test_missing_environment(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_manifest(tmp_path, SAMPLE_ID, tmp_path / "env")
    assert main(["smoke", "--workdir", str(tmp_path), "--env", str(tmp_path / "gone"),
                 "--build", SAMPLE_ID, "--gfx", "gfx90a"]) == 4
    assert f"environment {tmp_path / 'gone'} of {SAMPLE_ID} does not exist" in capsys.readouterr().err


def test_env_that_no_build_used_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_manifest(tmp_path, SAMPLE_ID, tmp_path / "env")
    assert main(["smoke", "--workdir", str(tmp_path), "--env", str(tmp_path / "other")]) == 2
    assert "give --build ID" in capsys.readouterr().err


@pytest.mark.parametrize(("content", "needle"), [
    ("{not json", "not a readable manifest"),
    ("[1, 2]", "not a manifest (expected a JSON object)"),
    ('{"targets": []}', "not a build manifest (no 'build' object)"),
    ('{"build": {"id": "x"}}', "its 'build' object lacks package, version"),
    (b"\xff\xfe{", "not a readable manifest"),
])
def test_corrupt_manifest_is_exit_2_in_one_line(tmp_path: Path, content: str | bytes, needle: str,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "artifacts" / SAMPLE_ID / "manifest.json"
    path.parent.mkdir(parents=True)
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    assert main(["smoke", "--workdir", str(tmp_path), "--gfx", "gfx90a"]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and needle in err and err.count("\n") == 1, err


def test_manifest_without_environment_is_exit_2(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    path = write_manifest(tmp_path, SAMPLE_ID, tmp_path / "env")
    data = json.loads(path.read_text())
    del data["env_dir"]
    path.write_text(json.dumps(data))
    assert main(["smoke", "--workdir", str(tmp_path), "--gfx", "gfx90a"]) == 2
    err = capsys.readouterr().err
    assert "records no environment (env_dir); give --env PATH" in err and err.count("\n") == 1
    with pytest.raises(EnvironmentProblem, match="does not exist"):  # --env: the manifest still counts
        smoke.check_environment(resolve(tmp_path, SAMPLE_ID, str(tmp_path / "other")))


def test_invoke_task_exits_with_the_code(tmp_path: Path) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    try:
        import tasks
    finally:
        sys.path.pop(0)
    with pytest.raises(Exit) as exc:
        tasks.smoke(Context(), gfx="gfx9999", workdir=str(tmp_path))
    assert exc.value.code == 2


def test_nox_session_without_builds_of_the_pair(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.fixtures.nox_runs import aborted, in_nox
    from toolkit.cli import sessions

    write_manifest(tmp_path, SAMPLE_ID, tmp_path / "env")
    message, code = aborted(in_nox(lambda s: sessions.smoke(s, "3.12", "7.0",
                                                            ["--workdir", str(tmp_path)])))
    assert code == 4
    assert "no build of Python 3.12 / ROCm 7.0 has a manifest" in message and SAMPLE_ID in message
    assert aborted(in_nox(lambda s: sessions.smoke(
        s, "3.12", "7.0", ["--workdir", str(tmp_path), "--gfx", "gfx1"])))[1] == 2


# ------------------------------------------------------------------------------ choosing
def test_default_is_the_newest_manifest(tmp_path: Path) -> None:
    new, old = "hip_sample-0.2.0-cp311-rocm5.2", "hip_sample-0.1.0-cp311-rocm5.2"
    write_manifest(tmp_path, new, tmp_path / "e1", mtime=2_000_000_000)
    write_manifest(tmp_path, old, tmp_path / "e2", mtime=1_000_000_000)
    assert resolve(tmp_path).build_id == new
    assert resolve(tmp_path, env=str(tmp_path / "e2")).build_id == old
    chosen = resolve(tmp_path, old, str(tmp_path / "elsewhere"))
    assert chosen.env_dir == (tmp_path / "elsewhere").resolve() and chosen.manifest_path


def test_build_without_manifest_comes_from_the_matrix(tmp_path: Path) -> None:
    """``--build ID --env PATH`` for a build that wrote no manifest (yet)."""
    t = resolve(tmp_path, "apex-1.8.0-cp312-rocm7.0", str(tmp_path / "env"))
    assert t.manifest_path is None and t.dist == "apex"
    assert "apex.fused_layer_norm_cuda" in t.manifest["expected_modules"]
    assert smoke_facts(t.manifest) == {
        "needs_torch": True, "carries_gpu_code": True, "rocm": "7.0", "hip": "7.0", "torch": "2.8",
        # apex 1.8's prebuilt JIT ops: installed_ops and the torch git_version_info records
        "markers": ["apex_jit"],
        "recorded_torch": [{"module": "apex.git_version_info", "attribute": "torch_info",
                            "key": "version", "ignore": ["0.0"]}]}
    assert manifest_for_id("nope-1.0-cp312-rocm7.0", None) is None
    with pytest.raises(UsageError):
        resolve(tmp_path, "nope-1.0-cp312-rocm7.0", str(tmp_path / "env"))


def test_made_manifest_shares_the_builds_fields() -> None:
    """One source for the fields every manifest has: ``run.manifest.recipe_facts``."""
    build = build_for_id("apex-1.8.0-cp312-rocm7.0")
    assert build is not None
    made = manifest_for_id(build.id, Path("/env"), ("gfx942",))
    assert made is not None
    facts = recipe_facts(build, ("gfx942",))
    assert set(facts) == {"build", "recipe", "dist", "targets", "expected_modules",
                          "required_symbols"}
    assert {k: made[k] for k in facts} == facts
    assert made["env_dir"] == "/env" and made["outcome"] == "running"
    assert facts["build"]["id"] == build.id and facts["targets"] == ["gfx942"]
    json.dumps(made)


def test_the_builds_own_manifest_wins_over_a_made_one(tmp_path: Path) -> None:
    """A running build writes its manifest first; its own smoke step reads that one."""
    bid = "apex-1.8.0-cp312-rocm7.0"
    write_manifest(tmp_path, bid, tmp_path / "env", package="apex", recipe="apex", dist="apex",
                   rocm="7.0", expected_modules=["apex.only_this"], outcome="running")
    t = resolve(tmp_path, bid, str(tmp_path / "env2"))
    assert t.manifest_path == tmp_path / "artifacts" / bid / "manifest.json"
    assert t.manifest["expected_modules"] == ["apex.only_this"]
    assert t.env_dir == (tmp_path / "env2").resolve()


def test_sample_ids(tmp_path: Path) -> None:
    assert build_for_id("hip_sample-0.1.0-cp311-nope") is None
    cpu = build_for_id("hip_sample-0.1.0-cp311-cpu")
    assert cpu is not None and cpu.rocm.version == "cpu"
    assert manifest_for_id("hip_sample-0.1.0-cp311-cpu", None)["dist"] == "hip-sample"  # type: ignore[index]


def test_facts_of_the_sample() -> None:
    facts = smoke_facts({"build": {"id": SAMPLE_ID, "package": "hip_sample", "rocm": "5.2",
                                   "torch": ""}, "recipe": "sample"})
    assert facts == {"needs_torch": False, "carries_gpu_code": True, "rocm": "5.2", "hip": "5.2",
                     "torch": None, "markers": [], "recorded_torch": []}
    cpu = smoke_facts({"build": {"package": "hip_sample", "rocm": "cpu"}, "recipe": "sample"})
    assert cpu["carries_gpu_code"] is False and cpu["hip"] is None


def test_family_names_expand() -> None:
    assert smoke.check_targets(["gfx90X-dcgpu"]) == ("gfx906", "gfx908", "gfx90a")
    with pytest.raises(UsageError, match="empty gfx target list"):
        smoke.check_targets([" , "])


# ------------------------------------------------------------------------------ results
JUNIT = """<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" tests="4">
<testcase classname="test_imports" name="test_import[hip_sample-0.1.0-hip_sample]" time="0.1"/>
<testcase classname="test_gpu_code" name="test_gpu_code_for_target[hip_sample-0.1.0-gfx942]">
<failure message="Failed: no GPU code for gfx942: _native.so carries only gfx908, gfx90a">tb</failure>
</testcase>
<testcase classname="test_runtime" name="test_sample_saxpy[hip_sample-0.1.0-gfx942]">
<skipped type="pytest.skip" message="no AMD GPU found (looked at rocminfo)">where</skipped></testcase>
<testcase classname="test_runtime" name="test_gpu_is_requested_target[gfx942]">
<skipped type="pytest.skip" message="no AMD GPU found (looked at rocminfo)">where</skipped></testcase>
<testcase classname="conftest" name="collect"><error message="collection failure">x</error></testcase>
</testsuite></testsuites>"""


def test_junit_results_and_skip_reasons(tmp_path: Path) -> None:
    path = tmp_path / "j.xml"
    path.write_text(JUNIT)
    cases = parse_junit(path)
    assert [c.outcome for c in cases] == ["passed", "failed", "skipped", "skipped", "error"]
    assert cases[1] == Case("test_gpu_code.py::test_gpu_code_for_target[hip_sample-0.1.0-gfx942]",
                            "failed", "no GPU code for gfx942: _native.so carries only gfx908, gfx90a")
    o = SmokeOutcome("b", ("gfx942",), cases[:4], returncode=1)
    assert not o.ok and o.count("skipped") == 2 and o.count("passed") == 1
    assert o.skip_reasons() == {"no AMD GPU found (looked at rocminfo)": 2}


@pytest.mark.parametrize("content", [None, "", "<testsuites><testcase", "<html/>"])
def test_unreadable_junit_of_a_smoke_run_is_one_line(tmp_path: Path, content: str | None) -> None:
    path = tmp_path / "junit.xml"
    if content is not None:
        path.write_text(content)
    with pytest.raises(CheckFailed, match="the smoke run wrote no readable JUnit report") as exc:
        parse_junit(path)
    assert "\n" not in str(exc.value)


def test_smoke_and_report_read_junit_alike(tmp_path: Path) -> None:
    from toolkit.verify.report import read_junit

    path = tmp_path / "j.xml"
    path.write_text(JUNIT)
    cases = parse_junit(path)
    (row,) = read_junit(path)
    assert (row.passed, row.failed, row.errors, row.skipped) == tuple(
        sum(c.outcome == o for c in cases) for o in ("passed", "failed", "error", "skipped"))
    assert [f.name for f in row.failures] == [
        "test_gpu_code::test_gpu_code_for_target[hip_sample-0.1.0-gfx942]", "conftest::collect"]


def test_outcome_is_ok_only_when_something_ran_and_nothing_failed() -> None:
    passed = Case("t.py::a", "passed")
    skipped = Case("t.py::b", "skipped", "why")
    assert SmokeOutcome("b", ("gfx90a",), [passed, skipped]).ok
    assert not SmokeOutcome("b", ("gfx90a",), []).ok  # nothing ran is not a pass
    assert not SmokeOutcome("b", ("gfx90a",), [passed], returncode=2).ok
    assert not SmokeOutcome("b", ("gfx90a",), [passed, Case("t.py::c", "error", "x")]).ok


def test_summary_lists_failures_and_skip_reasons(capsys: pytest.CaptureFixture[str]) -> None:
    from toolkit.cli.commands.smoke import finish, show
    from toolkit.core.errors import CheckFailed

    o = SmokeOutcome("demo-1", ("gfx942",), [Case("t.py::ok", "passed"),
                                             Case("t.py::code", "failed", "no code\nassert x"),
                                             Case("t.py::gpu", "skipped", "found gfx90a, requested gfx942")])
    show([o])
    out = capsys.readouterr().out
    rows = [[c.strip() for c in re.split("[│┃]", ln)[1:-1]] for ln in out.splitlines()
            if ln.startswith(("│", "┃"))]
    assert rows == [["Build", "Targets", "Passed", "Failed", "Skipped", "Result"],
                    ["demo-1", "gfx942", "1", "1", "1", "FAILED"]]
    assert "FAILED t.py::code: no code" in out and "assert x" not in out
    assert "skipped (1): found gfx90a, requested gfx942" in out
    with pytest.raises(CheckFailed, match=r"smoke tests failed: demo-1: t.py::code"):
        finish([o])
    assert finish([SmokeOutcome("demo-1", ("gfx90a",), [Case("t.py::ok", "passed")])]) == 0


def test_smoke_without_json_prints_the_summary_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """``python -m toolkit smoke`` (no --json) ends with the summary: the build's row and every
    skip reason (README: without an AMD GPU the GPU tests skip with the reason); exit 0 when
    nothing failed. The suite's pytest run in the build's environment (a boundary a unit test
    cannot reach without a built wheel) is played by a stand-in for ``smoke.run``."""
    env = fake_env(tmp_path / "env")
    write_manifest(tmp_path, SAMPLE_ID, env)

    def suite(target: Any, targets: Any, **_: Any) -> SmokeOutcome:
        return SmokeOutcome(target.build_id, tuple(targets),
                            [Case("test_imports.py::test_import", "passed"),
                             Case("test_gpu.py::test_add", "skipped", "no AMD GPU of gfx90a")])
    monkeypatch.setattr(smoke, "run", suite)
    assert main(["smoke", "--workdir", str(tmp_path), "--build", SAMPLE_ID, "--env", str(env),
                 "--gfx", "gfx90a"]) == 0
    out = capsys.readouterr().out
    rows = [[c.strip() for c in re.split("[│┃]", ln)[1:-1]] for ln in out.splitlines()
            if ln.startswith(("│", "┃"))]
    assert rows[0][:3] == ["Build", "Targets", "Passed"]
    assert rows[1][:3] == [SAMPLE_ID, "gfx90a", "1"]
    assert "no AMD GPU of gfx90a" in out


# ------------------------------------------------------------------------------ no printing
def fake_python(root: Path, probe_output: str) -> Path:
    """An environment whose bin/python answers every probe with ``probe_output``."""
    (root / "bin").mkdir(parents=True)
    python = root / "bin" / "python"
    python.write_text(f"#!/bin/sh\necho '{probe_output}'\n")
    python.chmod(0o755)
    return python


def test_installing_suite_deps_reports_and_fails_in_one_line(
        tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    python = fake_python(tmp_path / "env", "pytest zstandard")
    reporter = ListReporter()
    with pytest.raises(EnvironmentProblem, match="could not install pytest, zstandard into") as exc:
        smoke.ensure_suite_deps(python, "/bin/false", xdist=False, reporter=reporter)
    assert reporter.lines == [f"smoke: installing pytest, zstandard into {tmp_path / 'env'}"]
    assert "\n" not in exc.value.message
    with pytest.raises(EnvironmentProblem, match="command not found"):
        smoke.ensure_suite_deps(python, str(tmp_path / "no-uv"), xdist=False, reporter=reporter)
    assert fake_python(tmp_path / "env2", "") and smoke.ensure_suite_deps(
        tmp_path / "env2" / "bin" / "python", "/bin/false", xdist=True) == []
    assert capfd.readouterr() == ("", "")  # the library printed nothing


def test_suite_is_found_in_a_source_tree_that_is_not_installed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.resources

    def missing(name: str) -> Any:
        raise ModuleNotFoundError(name)

    assert (smoke.suite_dir() / "pytest.ini").is_file()
    monkeypatch.setattr(importlib.resources, "files", missing)
    assert smoke.suite_dir() == ROOT / "smoke_tests"
    monkeypatch.setattr(smoke, "PACKAGE", ROOT / "nowhere" / "toolkit")
    with pytest.raises(EnvironmentProblem, match="the smoke suite is missing"):
        smoke.suite_dir()


def test_run_needs_targets(tmp_path: Path) -> None:
    target = smoke.SmokeTarget(SAMPLE_ID, {"build": {"package": "hip_sample"}}, tmp_path)
    with pytest.raises(UsageError, match="no gfx targets"):
        smoke.run(target, ())


# ------------------------------------------------------------------------------ honest picks
OTHER_ID = "hip_sample-0.1.0-cp312-rocm5.2"
THIRD_ID = "hip_sample-0.1.0-cp310-rocm5.2"


@pytest.mark.parametrize("outcome", ["failed", "running", "interrupted"])
def test_without_build_the_newest_successful_build_is_picked_and_named(
        tmp_path: Path, outcome: str) -> None:
    """Issue 27: a newer failed, running or interrupted build is passed over, by name."""
    write_manifest(tmp_path, SAMPLE_ID, tmp_path / "env-ok", mtime=1_000)
    write_manifest(tmp_path, OTHER_ID, tmp_path / "env-new", mtime=2_000, outcome=outcome,
                   failed_step="build-wheel" if outcome != "running" else None)
    target = resolve(tmp_path)
    assert target.build_id == SAMPLE_ID and target.env_dir == tmp_path / "env-ok"
    assert target.picked is not None and "the newest successful build" in target.picked
    assert f"not picked: {OTHER_ID} ({outcome}" in target.picked


def test_the_newest_build_when_it_succeeded_is_picked_with_nothing_passed_over(
        tmp_path: Path) -> None:
    write_manifest(tmp_path, SAMPLE_ID, tmp_path / "env-old", mtime=1_000)
    write_manifest(tmp_path, OTHER_ID, tmp_path / "env-new", mtime=2_000)
    target = resolve(tmp_path)
    assert target.build_id == OTHER_ID and target.picked == "the newest successful build"


def test_no_successful_build_is_exit_4_naming_each_build_and_its_outcome(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_manifest(tmp_path, SAMPLE_ID, tmp_path / "e1", mtime=1_000, outcome="failed",
                   failed_step="check")
    write_manifest(tmp_path, OTHER_ID, tmp_path / "e2", mtime=2_000, outcome="interrupted",
                   failed_step="build-wheel")
    assert main(["smoke", "--workdir", str(tmp_path), "--gfx", "gfx90a"]) == 4
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no successful build" in err, err
    assert f"{SAMPLE_ID} (failed at check)" in err
    assert f"{OTHER_ID} (interrupted at build-wheel)" in err
    assert "--build ID" in err


def test_the_smoke_line_names_the_pick(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    """What the user reads: the build smoked and why it was chosen, before anything runs."""
    env = fake_env(tmp_path / "env")
    write_manifest(tmp_path, SAMPLE_ID, env, mtime=1_000)
    write_manifest(tmp_path, OTHER_ID, tmp_path / "e2", mtime=2_000, outcome="failed",
                   failed_step="build-wheel")
    main(["smoke", "--workdir", str(tmp_path), "--gfx", "gfx90a"])
    out = capsys.readouterr().out
    assert f"smoke: {SAMPLE_ID} in {env} for gfx90a (the newest successful build; newer, not " \
           f"picked: {OTHER_ID} (failed at build-wheel))" in out, out


def test_an_explicit_manifest_is_used_wherever_it_lies(tmp_path: Path) -> None:
    """A repro's smoke step names its own ``repro-manifest.json``: no ``manifest.json`` is
    needed beside it (repro in another work folder)."""
    made = write_manifest(tmp_path / "elsewhere", SAMPLE_ID, tmp_path / "env", outcome="running")
    repro = made.with_name("repro-manifest.json")
    made.rename(repro)
    target = resolve(tmp_path, SAMPLE_ID, None, str(repro))
    assert target.manifest_path == repro and target.env_dir == tmp_path / "env"
    with pytest.raises(UsageError, match=f"--build {OTHER_ID} but the manifest"):
        resolve(tmp_path, OTHER_ID, None, str(repro))


def test_the_pair_session_passes_over_failed_builds_by_name(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from toolkit.cli.commands.smoke import run_pair

    write_manifest(tmp_path, SAMPLE_ID, tmp_path / "e1", outcome="failed",
                   failed_step="build-wheel")
    with pytest.raises(EnvironmentProblem, match="no successful build of Python 3.11 / ROCm 5.2"):
        run_pair("3.11", "5.2", ["--workdir", str(tmp_path)])
    out = capsys.readouterr().out
    assert f"smoke: {SAMPLE_ID} passed over: its build did not succeed (outcome failed)" in out
