"""The pieces of the smoke runner between a build and pytest: the pytest command line (as
pytest's documented options read it), the suite's environment (Python's documented
variables), the outcome of a run from pytest's exit codes (0 all passed, 1 tests failed,
5 nothing collected: pytest's "Exit codes" page) and the JSON summary's counts, computed by
hand."""

from __future__ import annotations

import errno
import io
import json
import os
import sys
from pathlib import Path

import pytest

from toolkit.core.errors import CheckFailed, UsageError
from toolkit.core.reporter import ListReporter
from toolkit.verify import smoke
from toolkit.verify.smoke import Case, SmokeOutcome
from toolkit.verify.smoke_builds import SmokeTarget


def _value(argv: list[str], option: str) -> str:
    return argv[argv.index(option) + 1]


def test_pytest_runs_the_installed_suite_with_the_builds_options(tmp_path: Path) -> None:
    python, manifest, junit = tmp_path / "py", tmp_path / "m.json", tmp_path / "j.xml"
    argv = smoke.pytest_argv(python, manifest, ["gfx90a", "gfx942"], junit, require_gpu=False,
                             workers=None, extra=["-k", "imports"])
    suite = smoke.suite_dir()
    assert argv[:4] == [str(python), "-m", "pytest", str(suite)]
    assert _value(argv, "-c") == str(suite / "pytest.ini")
    assert _value(argv, "--rootdir") == str(suite)
    assert _value(argv, "-p") == "no:cacheprovider"
    assert "--import-mode=importlib" in argv
    assert f"--junitxml={junit}" in argv
    assert _value(argv, "-o") == "junit_family=xunit2"
    assert _value(argv, "--manifest") == str(manifest)
    assert _value(argv, "--gfx") == "gfx90a,gfx942"
    assert "--require-gpu" not in argv and "-n" not in argv
    assert argv[-2:] == ["-k", "imports"]
    gpu = smoke.pytest_argv(python, manifest, ["gfx90a"], junit, require_gpu=True, workers="4")
    assert "--require-gpu" in gpu and _value(gpu, "-n") == "4"
    assert smoke.pytest_argv(python, manifest, ["gfx90a"], junit, require_gpu=False,
                             workers="")[-2:] == ["--gfx", "gfx90a"]


def test_the_suite_imports_the_scratch_path_first_and_no_user_site(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONHOME", "/elsewhere")
    monkeypatch.setenv("KEEP_ME", "1")
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    monkeypatch.delenv("PYTHONNOUSERSITE", raising=False)
    env = smoke._suite_env(tmp_path)
    assert env["PYTHONPATH"] == str(tmp_path / "path")
    assert env["PYTHONDONTWRITEBYTECODE"] == "1" and env["PYTHONNOUSERSITE"] == "1"
    assert "PYTHONHOME" not in env and env["KEEP_ME"] == "1"
    monkeypatch.delenv("PYTHONHOME")
    assert "PYTHONHOME" not in smoke._suite_env(tmp_path)  # none to drop: no error either


def _target(tmp_path: Path) -> SmokeTarget:
    return SmokeTarget("b-1", {"build": {"id": "b-1", "package": "p"}}, tmp_path / "env")


_JUNIT = """<?xml version="1.0"?><testsuites><testsuite name="pytest">
<testcase classname="test_imports" name="test_a"/>
<testcase classname="test_imports" name="test_b"><skipped message="Skipped: no GPU"/></testcase>
</testsuite></testsuites>"""


def test_a_runs_outcome_from_its_junit_or_its_exit_code(tmp_path: Path) -> None:
    report = tmp_path / "junit.xml"
    # no report: pytest passed (0) or collected nothing (5) is an empty run, never a crash
    for code in (0, 5):
        empty = smoke._outcome(_target(tmp_path), ["gfx90a"], code, "", report, None)
        assert (empty.cases, empty.returncode, empty.ok) == ([], code, False)
    with pytest.raises(CheckFailed) as err:
        smoke._outcome(_target(tmp_path), ["gfx90a"], 4, "ERROR: usage", report, None)
    # pytest's exit 4 is a usage error (pytest's "Exit codes"): the env, the code, pytest's last line
    assert err.value.message.startswith(f"pytest did not run in {tmp_path / 'env'} (exit 4)")
    assert err.value.message.endswith("(exit 4): ERROR: usage")
    assert str(tmp_path / "env") in err.value.message and err.value.exit_code == 1
    with pytest.raises(CheckFailed) as err:
        smoke._outcome(_target(tmp_path), ["gfx90a"], 1, "", report, None)
    assert err.value.message.endswith("(exit 1)")
    report.write_text(_JUNIT)
    kept = tmp_path / "out" / "kept.xml"
    result = smoke._outcome(_target(tmp_path), ["gfx90a"], 0, "", report, kept)
    assert [(c.name, c.outcome, c.message) for c in result.cases] == [
        ("test_imports.py::test_a", "passed", ""), ("test_imports.py::test_b", "skipped", "no GPU")]
    assert result.junit == kept and kept.read_text() == _JUNIT
    assert smoke._outcome(_target(tmp_path), ["gfx90a"], 0, "", report, None).junit is None


def test_a_junit_that_cannot_be_kept_is_one_usage_error(tmp_path: Path) -> None:
    report = tmp_path / "junit.xml"
    report.write_text(_JUNIT)
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(UsageError) as err:
        smoke._keep_junit(report, blocker / "kept.xml")
    # the --junit path given, what cannot be done there, then the OS's reason (strerror(3))
    assert err.value.message in {
        f"{blocker / 'kept.xml'}: cannot write the JUnit XML there ({os.strerror(code)})"
        for code in (errno.EEXIST, errno.ENOTDIR)}


def test_the_json_summary_counts_each_outcome() -> None:
    cases = [Case("t.py::a", "passed"), Case("t.py::b", "failed", "boom"), Case("t.py::c", "error", "e"),
             Case("t.py::d", "skipped", "no GPU"), Case("t.py::e", "skipped", "no GPU"),
             Case("t.py::f", "skipped", "old torch"), Case("t.py::g", "passed")]
    outcome = SmokeOutcome("b-1", ("gfx90a", "gfx942"), cases)
    doc = outcome.to_json()
    assert {k: doc[k] for k in ("build", "targets", "ok", "passed", "failed", "errors", "skipped")} == {
        "build": "b-1", "targets": ["gfx90a", "gfx942"], "ok": False,
        "passed": 2, "failed": 1, "errors": 1, "skipped": 3}
    assert doc["cases"][1] == {"name": "t.py::b", "outcome": "failed", "message": "boom"}
    assert outcome.skip_reasons() == {"no GPU": 2, "old torch": 1}
    assert SmokeOutcome("b", ("gfx90a",), [Case("t.py::a", "failed")]).ok is False
    assert SmokeOutcome("b", ("gfx90a",), [Case("t.py::a", "passed")]).to_json()["ok"] is True


def test_pytests_lines_go_to_the_stream_else_to_the_reporter() -> None:
    stream, reporter = io.StringIO(), ListReporter()
    smoke._sink(stream, reporter)("line 1\n")
    assert stream.getvalue() == "line 1\n" and reporter.lines == []
    smoke._sink(None, reporter)("line 2\n")
    assert reporter.lines == ["line 2"]


def test_colour_only_on_a_terminal() -> None:
    class _Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    class _Closed(io.StringIO):
        def isatty(self) -> bool:
            raise ValueError("I/O operation on closed file")

    assert smoke._is_tty(_Tty()) is True
    assert smoke._is_tty(io.StringIO()) is False
    assert smoke._is_tty(None) is False
    assert smoke._is_tty(_Closed()) is False


def test_pytests_exit_code_and_last_line_and_an_unended_line(tmp_path: Path) -> None:
    lines: list[str] = []
    code = ("import sys; print('first'); print('== 1 failed =='); print('  '); "
            "sys.stdout.write('cut'); sys.exit(1)")
    returncode, last = smoke._pytest([sys.executable, "-c", code], tmp_path, {}, lines.append, 30)
    assert (returncode, last) == (1, "cut")
    assert lines[-1] == "\n" and "".join(lines).startswith("first\n== 1 failed ==\n")
    lines.clear()
    returncode, last = smoke._pytest([sys.executable, "-c", "print('ok  ')"], tmp_path, {}, lines.append, 30)
    assert (returncode, last) == (0, "ok") and lines == ["ok  \n"]
    with pytest.raises(CheckFailed) as err:
        smoke._pytest([str(tmp_path / "no-such-python")], tmp_path, {}, lines.append, 30)
    # pytest could not start (no such executable: the shell's "command not found", exit 127)
    assert err.value.message == "the smoke run did not finish: command not found"


def test_the_hip_version_of_a_rocm_outside_the_matrix_is_its_major_minor() -> None:
    def facts(rocm: str, **build: str) -> dict[str, object]:
        return smoke.smoke_facts({"recipe": "sample", "build": {"package": "hip_sample",
                                                                "version": "0.1.0", "rocm": rocm, **build}})

    assert facts("9.7.3")["hip"] == "9.7"
    cpu = facts("cpu")
    assert (cpu["hip"], cpu["carries_gpu_code"], cpu["rocm"]) == (None, False, "cpu")
    gpu = facts("9.7.3")
    assert gpu["carries_gpu_code"] is True and gpu["torch"] is None and gpu["needs_torch"] is False
    assert facts("9.7.3", torch="2.5")["needs_torch"] is True
    assert facts("9.7.3", torch="2.5")["torch"] == "2.5"


def test_the_installed_suite_is_found_through_the_package(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(smoke, "PACKAGE", tmp_path / "toolkit")  # no smoke_tests/ beside it
    found = smoke.suite_dir()
    assert (found / "pytest.ini").is_file() and (found / "conftest.py").is_file()


def test_a_missing_suite_says_how_to_get_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.resources

    from toolkit.core.errors import EnvironmentProblem

    def files(name: str) -> Path:
        raise ModuleNotFoundError(name)

    monkeypatch.setattr(importlib.resources, "files", files)
    monkeypatch.setattr(smoke, "PACKAGE", tmp_path / "toolkit")
    with pytest.raises(EnvironmentProblem) as err:
        smoke.suite_dir()
    assert err.value.exit_code == 4 and str(tmp_path / "smoke_tests") in err.value.message
    assert err.value.hint is not None and "pip install" in err.value.hint and "reinstall" in err.value.hint


def test_the_suite_is_handed_the_hosts_facts_and_a_link_to_the_toolkit(tmp_path: Path) -> None:
    """The manifest the suite reads carries what only the host knows (a ROCm outside the matrix:
    its HIP is its major.minor), the environment, and the targets asked for when the build
    recorded none; ``path/toolkit`` links the package the host runs."""
    build = {"id": "hip_sample-0.1.0-py3.12-rocm9.7.3", "package": "hip_sample",
             "version": "0.1.0", "rocm": "9.7.3"}
    target = SmokeTarget(build["id"], {"recipe": "sample", "build": build}, tmp_path / "env")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    written = json.loads(smoke._scratch(scratch, target, ["gfx90a"]).read_text(encoding="utf-8"))
    assert written["build"] == build and written["env_dir"] == str(tmp_path / "env")
    assert written["targets"] == ["gfx90a"]
    assert {k: written["smoke"][k] for k in ("hip", "rocm", "carries_gpu_code", "needs_torch")} \
        == {"hip": "9.7", "rocm": "9.7.3", "carries_gpu_code": True, "needs_torch": False}
    link = scratch / "path" / "toolkit"
    assert link.is_symlink() and (link / "verify" / "smoke.py").samefile(smoke.__file__)
    recorded = SmokeTarget(build["id"], {"recipe": "sample", "build": build,
                                         "targets": ["gfx942"]}, tmp_path / "env")
    again = tmp_path / "again"
    again.mkdir()
    assert json.loads(smoke._scratch(again, recorded, ["gfx90a"]).read_text())["targets"] == ["gfx942"]
