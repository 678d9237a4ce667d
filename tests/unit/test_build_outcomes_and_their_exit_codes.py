"""What one run of plans leaves behind for each way a build can end (``toolkit.run.jobs``), in
process with hand-made plans whose steps are real commands (``true``, ``false``, ``sh -c``).

The truths: the README's "## Exit codes" table (5: a build step failed, 6: busy, 2: an output
path that is a folder, 130: interrupted) and "## What a build leaves behind" (``running``,
then ``ok``, ``failed`` or ``interrupted`` with the step; a failed build says where the
failing wheel was kept; a second run of a build id is refused), POSIX signal delivery, and
the order of the plans given.

The manifest's host facts and tool versions (a dozen subprocesses of gcc, cmake ... that no
assertion here reads) are replaced by empty ones.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.system_rocm import rocm_at
from toolkit.core.command import Command
from toolkit.core.reporter import NullReporter
from toolkit.core.steps import CopySources, Step, UseSystemRocm
from toolkit.plan.layout import Layout
from toolkit.plan.model import Plan
from toolkit.plan.recipes import load_matrix
from toolkit.run import executor, jobs, manifest
from toolkit.run.context import Run, StepResult
from toolkit.run.locking import hold

BUILD = "apex-1.8.0-cp311-rocm7.0"
OTHER = "apex-1.10.0-cp311-rocm7.0"


class Heard(NullReporter):
    def __init__(self) -> None:
        self.infos: list[str] = []
        self.warnings: list[str] = []
        self.steps: list[tuple[str, str]] = []

    def step(self, index: int, total: int, name: str, status: str, seconds: float,
             reason: str | None = None) -> None:
        self.steps.append((name, status))

    def info(self, text: str) -> None:
        self.infos.append(text)

    def warning(self, text: str) -> None:
        self.warnings.append(text)


ASKED: list[tuple[str, str | None]] = []


def _tools(python: str, rocm_bin: str | None) -> dict[str, str | None]:
    ASKED.append((python, rocm_bin))
    return {"gcc": "gcc (stand-in) 1.0"}


@pytest.fixture
def layout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Layout]:
    ASKED.clear()
    monkeypatch.setattr(manifest, "tool_versions", _tools)
    monkeypatch.setattr(manifest, "host_facts", lambda: {"os": "stand-in"})
    yield Layout(tmp_path / "work", tmp_path / "cache")


def step(name: str, *argv: str, env: dict[str, str] | None = None,
         unset: tuple[str, ...] = ()) -> Step:
    return Step(name, f"the {name} step", Command(tuple(argv), env=env or {}, unset=unset))


def a_plan(*steps: Step, build: str = BUILD) -> Plan:
    m = load_matrix()
    return Plan(m.build(build), ("gfx942",), None, tuple(steps))


def written(layout: Layout, build: str = BUILD) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        (layout.root / "artifacts" / build / "manifest.json").read_text())
    return data


def test_a_build_whose_steps_pass_is_ok_with_exit_0(layout: Layout) -> None:
    p = a_plan(step("compile", "true"), step("check", "true"), step("smoke", "true"))
    heard = Heard()
    [o] = jobs.run_plans([p], layout, heard)
    assert (o.build_id, o.package) == (BUILD, "apex")
    assert isinstance(o.seconds, float) and 0 <= o.seconds < 60
    assert heard.steps == [("compile", "ok"), ("check", "ok"), ("smoke", "ok")]
    assert any("gfx942" in line and BUILD in line for line in heard.infos)
    assert (o.exit_code, o.error) == (0, None)
    assert (o.checks, o.smoke) == ("passed", "passed")
    data = written(layout)
    assert data["outcome"] == "ok"
    assert data["failed_step"] is None and data["failure"] is None and data["error"] is None
    assert [s["name"] for s in data["steps"]] == ["compile", "check", "smoke"]
    assert [s["returncode"] for s in data["steps"]] == [0, 0, 0]
    assert jobs.exit_code([o]) == 0


def test_a_failing_build_step_is_exit_5_and_the_next_build_still_runs(layout: Layout) -> None:
    bad = a_plan(step("compile", "sh", "-c", "echo broken-here; exit 3"), step("check", "true"),
                 step("smoke", "true"))
    good = a_plan(step("compile", "true"), build=OTHER)
    heard = Heard()
    first, second = jobs.run_plans([bad, good], layout, heard)
    assert first.exit_code == 5  # README: a build step (or a command it runs) failed
    assert first.failed_step == "compile"
    assert first.error is not None and "compile" in first.error
    assert str(layout.root / "artifacts" / BUILD / "build.log") in first.error
    assert (first.checks, first.smoke) == ("not run", "not run")
    assert second.exit_code == 0 and second.error is None  # the next build still ran
    assert isinstance(first.seconds, float) and 0 <= first.seconds < 60
    assert ("compile", "FAILED") in heard.steps
    assert data_failure_exit(layout) == 5
    data = written(layout)
    assert data["outcome"] == "failed" and data["failed_step"] == "compile"
    assert data["failure"]["step"] == "compile"
    assert data["error"] == first.error
    assert first.failure == data["failure"]
    assert written(layout, OTHER)["outcome"] == "ok"
    assert jobs.exit_code([first, second]) == 5 == jobs.exit_code([second, first])
    # the failure is said, with where to reproduce it
    assert any(line.startswith("error: ") and "compile" in line for line in heard.infos)
    repro = f"invoke repro {layout.root / 'artifacts' / BUILD}/manifest.json"
    assert sum(repro in line for line in heard.infos) == 2  # at the start and after the error


def test_the_first_failure_in_plan_order_decides_the_exit_code() -> None:
    outcomes = [jobs.Outcome("a", "p"), jobs.Outcome("b", "p", exit_code=6),
                jobs.Outcome("c", "p", exit_code=5)]
    assert jobs.exit_code(outcomes) == 6
    assert jobs.exit_code([jobs.Outcome("a", "p")]) == 0
    assert jobs.exit_code([]) == 0


def test_a_failed_check_says_failed_and_the_smoke_not_run(layout: Layout) -> None:
    p = a_plan(step("compile", "true"), step("check", "false"), step("smoke", "true"))
    [o] = jobs.run_plans([p], layout)
    assert (o.checks, o.smoke, o.failed_step) == ("FAILED", "not run", "check")
    assert o.exit_code != 0


def test_a_failed_smoke_says_failed_after_a_passed_check(layout: Layout) -> None:
    p = a_plan(step("check", "true"), step("smoke", "false"))
    [o] = jobs.run_plans([p], layout)
    assert (o.checks, o.smoke, o.failed_step) == ("passed", "FAILED", "smoke")


def test_a_plan_without_smoke_says_not_planned(layout: Layout) -> None:
    [o] = jobs.run_plans([a_plan(step("check", "true"))], layout)
    assert (o.checks, o.smoke) == ("passed", "not planned")
    [o] = jobs.run_plans([a_plan(step("compile", "true"))], layout)
    assert (o.checks, o.smoke) == ("not run", "not planned")


def _with_wheel(monkeypatch: pytest.MonkeyPatch, wheel: Path) -> None:
    """Each command step first records ``WHEEL`` as a build step does."""
    original = executor.HANDLERS[Command]

    def handler(s: Step, run: Run) -> StepResult | str:
        run.values["WHEEL"] = str(wheel)
        return original(s, run)

    monkeypatch.setitem(executor.HANDLERS, Command, handler)


@pytest.mark.parametrize("failing", ["check", "install-wheel", "smoke"])
def test_a_wheel_failing_after_its_build_is_kept_and_its_place_named(
        layout: Layout, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing: str) -> None:
    wheel = tmp_path / "apex-1.8.0-cp311-cp311-linux_x86_64.whl"
    wheel.write_bytes(b"not a zip, only bytes to hash")
    _with_wheel(monkeypatch, wheel)
    [o] = jobs.run_plans([a_plan(step("compile", "true"), step(failing, "false"))], layout)
    assert o.error is not None
    assert f"the failing wheel is kept for inspection at {wheel}" in o.error
    assert o.wheel == wheel.name
    import hashlib
    assert written(layout)["wheel_sha256"] == hashlib.sha256(wheel.read_bytes()).hexdigest()


def test_a_build_step_failing_before_any_check_names_no_kept_wheel(
        layout: Layout, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _with_wheel(monkeypatch, tmp_path / "x.whl")
    [o] = jobs.run_plans([a_plan(step("compile", "false"))], layout)
    assert o.error is not None and "kept for inspection" not in o.error
    assert written(layout)["wheel_sha256"] is None  # the file is not there: no hash


def test_a_second_run_of_a_build_id_is_refused_with_exit_6_naming_the_holder(
        layout: Layout) -> None:
    lock = layout.root / "build" / (BUILD + ".lock")
    with hold(lock, "the test's own hold"):
        heard = Heard()
        [o] = jobs.run_plans([a_plan(step("compile", "true"))], layout, heard)
    assert o.exit_code == 6  # README: busy (a lock is held)
    assert o.error is not None and f"pid {os.getpid()}" in o.error
    assert "the test's own hold" in o.error
    assert not (layout.root / "artifacts" / BUILD / "manifest.json").exists()  # never started
    assert any(line.startswith("error: ") for line in heard.infos)


def test_a_manifest_path_that_is_a_folder_is_exit_2_and_said(layout: Layout) -> None:
    (layout.root / "artifacts" / BUILD / "manifest.json").mkdir(parents=True)
    heard = Heard()
    [o] = jobs.run_plans([a_plan(step("compile", "true"))], layout, heard)
    assert o.exit_code == 2  # README: an output path that is a folder
    assert o.error is not None and "manifest" in o.error
    assert any("could not record the outcome" in w for w in heard.warnings)
    [warning] = heard.warnings
    assert str(layout.root / "artifacts" / BUILD / "manifest.json") in warning  # the cause named
    # what could not be done, the cause in parentheses, then what the next run does
    assert warning.startswith("the manifest could not record the outcome (manifest ")
    assert warning.endswith("); the next run of this build says so and replaces it")
    assert "not written through; valid: a regular file or a new name); the next run" in warning


def test_a_running_manifest_left_behind_is_said_and_replaced(layout: Layout) -> None:
    p = a_plan(step("compile", "true"))
    jobs.run_plans([p], layout)
    path = layout.root / "artifacts" / BUILD / "manifest.json"
    left = {**written(layout), "outcome": "running"}
    path.write_text(json.dumps(left))
    heard = Heard()
    jobs.run_plans([p], layout, heard)
    assert len(heard.warnings) == 1
    assert str(path) in heard.warnings[0] and "'running'" in heard.warnings[0]
    # in whole words: why it still says so, and that this run's manifest takes its place
    assert re.search(r"\bwithout recording its outcome\b", heard.warnings[0])
    assert re.search(r"\bthis run replaces it$", heard.warnings[0])
    assert written(layout)["outcome"] == "ok"
    heard = Heard()
    jobs.run_plans([p], layout, heard)  # an ``ok`` manifest there: nothing to say
    assert heard.warnings == []


def test_a_copied_source_outside_git_is_recorded_by_its_tree_hash(
        layout: Layout, tmp_path: Path) -> None:
    """docs/reproducibility.md: "a ``--source`` checkout is hashed (``source.tree``)". The
    hash is the documented one (``tree_hash``: sha256 over each file's relative path and
    bytes, sorted), computed here by hand; ``build/`` is not copied, so not hashed; a plain
    folder has no commit (forty zeros)."""
    src = tmp_path / "checkout"
    (src / "pkg").mkdir(parents=True)
    (src / "setup.py").write_text("# one\n")
    (src / "pkg" / "__init__.py").write_text("X = 1\n")
    (src / "build").mkdir()
    (src / "build" / "left.o").write_bytes(b"\x7fELF")
    copy = Step("get-sources", "copy", CopySources(str(src), str(tmp_path / "worktree")))
    [o] = jobs.run_plans([a_plan(copy, step("compile", "true"))], layout)
    assert o.exit_code == 0, o.error
    expected = hashlib.sha256(b"setup.py\0# one\n\0" b"pkg/__init__.py\0X = 1\n\0").hexdigest()
    source = written(layout)["source"]
    assert (source["sha"], source["tree"]) == ("0" * 40, expected)


def test_an_interrupted_step_records_interrupted_and_propagates(
        layout: Layout, monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(s: Step, run: Run) -> StepResult | str:
        raise KeyboardInterrupt

    monkeypatch.setitem(executor.HANDLERS, Command, interrupted)
    with pytest.raises(KeyboardInterrupt):
        jobs.run_plans([a_plan(step("compile", "true"), step("smoke", "true"))], layout)
    data = written(layout)
    assert data["outcome"] == "interrupted" and data["failed_step"] == "compile"
    assert data["failure"] is None  # an interrupted build did not fail
    assert data["error"] == "interrupted"
    assert data["installed"] == []  # not finished: nothing learned from its environment


def test_sigterm_inside_a_run_is_a_keyboard_interrupt_and_the_old_handler_returns() -> None:
    heard: list[int] = []

    def mine(signum: int, frame: object) -> None:
        heard.append(signum)

    before = signal.signal(signal.SIGTERM, mine)
    try:
        with pytest.raises(KeyboardInterrupt), jobs.sigterm_as_interrupt():
            os.kill(os.getpid(), signal.SIGTERM)
            for _ in range(1000):
                pass
        assert signal.getsignal(signal.SIGTERM) is mine
        os.kill(os.getpid(), signal.SIGTERM)
        for _ in range(1000):
            pass
        assert heard == [signal.SIGTERM]
    finally:
        signal.signal(signal.SIGTERM, before)


def test_outside_the_main_thread_sigterm_is_left_alone() -> None:
    seen: list[object] = []

    def body() -> None:
        with jobs.sigterm_as_interrupt():
            seen.append(signal.getsignal(signal.SIGTERM))

    before = signal.getsignal(signal.SIGTERM)
    t = threading.Thread(target=body)
    t.start()
    t.join()
    assert seen == [before]


def test_the_manifest_lists_each_steps_variables_and_every_unset_once(layout: Layout) -> None:
    p = a_plan(step("compile", "true", env={"CC": "gcc"}, unset=("CFLAGS", "LDFLAGS")),
               step("link", "true", unset=("LDFLAGS", "AR")), step("check", "true"))
    jobs.run_plans([p], layout)
    data = written(layout)
    assert data["environment"] == {"compile": {"CC": "gcc"}}
    assert data["unset"] == ["AR", "CFLAGS", "LDFLAGS"]
    assert [s["env"] for s in data["steps"]][0] == {"CC": "gcc"}


def data_failure_exit(layout: Layout) -> int:
    code: int = written(layout)["failure"]["exit_code"]
    return code


def test_the_manifest_says_running_while_the_build_runs(layout: Layout) -> None:
    path = layout.root / "artifacts" / BUILD / "manifest.json"
    copy = layout.root / "seen.json"
    jobs.run_plans([a_plan(step("compile", "cp", str(path), str(copy)))], layout)
    during = json.loads(copy.read_text())
    assert during["outcome"] == "running"
    assert during["tools"] == {} and during["installed"] == []  # nothing learned yet
    assert written(layout)["outcome"] == "ok"


def test_a_finished_manifest_is_complete_by_the_schema_with_what_it_learned(
        layout: Layout, monkeypatch: pytest.MonkeyPatch) -> None:
    from importlib.metadata import version

    from toolkit.plan.model import Options
    from toolkit.run.manifest_schema import SCHEMA_VERSION

    original = executor.HANDLERS[Command]

    def learns(s: Step, run: Run) -> StepResult | str:
        run.values["ROCM_BIN"] = "/opt/rocm-7.0.0/bin"
        run.values["_PRIVATE"] = "not recorded"
        return original(s, run)

    monkeypatch.setitem(executor.HANDLERS, Command, learns)
    m = load_matrix()
    b = m.build(BUILD)
    p = Plan(b, ("gfx942",), "gfx94X-dcgpu", (step("compile", "true"),),
             options=Options(gfx=("gfx942",)), channel="stable")
    jobs.run_plans([p], layout)
    path = layout.root / "artifacts" / BUILD / "manifest.json"
    data = manifest.load(path)  # the schema's own validation: every field, rightly typed
    assert data["schema_version"] == SCHEMA_VERSION
    assert data["toolkit_version"] == version("rocm-wheel-toolkit")
    assert data["family"] == "gfx94X-dcgpu"
    assert data["options"]["gfx"] == ["gfx942"]
    assert data["source"]["repo"] == b.package.repo == "https://github.com/ROCm/apex.git"
    assert data["source"]["ref"] == b.pkg_version.ref
    assert data["sdk"]["channel"] == "stable"
    assert data["learned"]["ROCM_BIN"] == "/opt/rocm-7.0.0/bin"
    assert data["learned"]["MANIFEST"] == str(path)  # the smoke step reads its own manifest
    assert "_PRIVATE" not in data["learned"]
    assert data["tools"] == {"gcc": "gcc (stand-in) 1.0"}
    assert data["host"]["os"] == "stand-in" and data["host"]["paths"]["workdir"] == str(layout.root)
    env_python = str(layout.cache / "envs" / layout.env_name(b) / "bin" / "python")
    assert ASKED == [(env_python, "/opt/rocm-7.0.0/bin")]
    assert data["identity"]["interpreter"] == {"implementation": None, "version": None, "abi": None}
    assert data["repro"] == f"invoke repro {layout.root / 'artifacts' / BUILD}/manifest.json"


def test_a_finished_manifest_lists_what_the_builds_environment_has_installed(
        layout: Layout) -> None:
    """``installed`` is the distributions of the build's own environment (its bin/python),
    not this interpreter's: a real venv (``python -m venv --without-pip``: no distributions of
    its own) holding one hand-made ``.dist-info`` lists exactly that one."""
    import subprocess
    import sys

    b = load_matrix().build(BUILD)
    env = layout.env_dir(b)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True,
                   timeout=120)
    [site] = (env / "lib").glob("python*/site-packages")
    info = site / "hand_made-1.2.3.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: hand-made\nVersion: 1.2.3\n")
    jobs.run_plans([a_plan(step("compile", "true"))], layout)
    assert written(layout)["installed"] == [{"name": "hand-made", "version": "1.2.3"}]


def test_an_interrupted_manifest_learns_nothing_from_the_host(
        layout: Layout, monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(s: Step, run: Run) -> StepResult | str:
        raise KeyboardInterrupt

    monkeypatch.setitem(executor.HANDLERS, Command, interrupted)
    with pytest.raises(KeyboardInterrupt):
        jobs.run_plans([a_plan(step("compile", "true"))], layout)
    data = written(layout)
    assert data["tools"] == {} and ASKED == []
    assert set(data["host"]) == {"paths"}


def test_a_skipped_check_says_why(layout: Layout, monkeypatch: pytest.MonkeyPatch) -> None:
    original = executor.HANDLERS[Command]

    def skip_check(s: Step, run: Run) -> StepResult | str:
        return "environment up to date" if s.name == "check" else original(s, run)

    monkeypatch.setitem(executor.HANDLERS, Command, skip_check)
    [o] = jobs.run_plans([a_plan(step("compile", "true"), step("check", "true"))], layout)
    assert o.checks == "skipped: environment up to date"


def test_the_manifest_rows_are_each_steps_command_and_result(layout: Layout) -> None:
    jobs.run_plans([a_plan(step("compile", "sh", "-c", "exit 0", env={"CC": "gcc"}))], layout)
    [row] = written(layout)["steps"]
    assert row["name"] == "compile" and row["kind"] == "run"
    assert row["argv"] == ["sh", "-c", "exit 0"] and row["env"] == {"CC": "gcc"}
    assert row["returncode"] == 0 and row["skipped"] is None
    assert isinstance(row["seconds"], float) and 0 <= row["seconds"] < 60


def test_a_step_that_runs_no_command_has_an_empty_environment_row(
        layout: Layout, tmp_path: Path) -> None:
    """use-system-rocm only reads the install (its ``.info/version``) and runs no command: its
    manifest row names no argv and no variables, an empty object like any step's that sets
    none, so a reader can take ``env`` of every row as the object it is for a command."""
    root = rocm_at(tmp_path / "rocm-7.0.2", "7.0.2-17")
    use = Step("use-system-rocm", "the system ROCm", UseSystemRocm(str(root), "7.0"))
    jobs.run_plans([a_plan(use, step("compile", "true"))], layout)
    rows = written(layout)["steps"]
    assert [r["name"] for r in rows] == ["use-system-rocm", "compile"]
    assert rows[0]["kind"] == "use-system-rocm" and rows[0]["returncode"] == 0
    assert rows[0]["argv"] == [] and rows[0]["env"] == {}
    assert all(isinstance(r["env"], dict) for r in rows)


def test_a_log_that_cannot_be_written_is_exit_5(layout: Layout) -> None:
    (layout.root / "artifacts" / BUILD / "build.log").mkdir(parents=True)
    [o] = jobs.run_plans([a_plan(step("compile", "true"))], layout)
    assert o.exit_code == 5  # README: a build step failed (here: writing its log)
    assert o.error is not None and o.error.startswith("cannot write: ")
    assert "build.log" in o.error


@pytest.mark.parametrize(("which", "named"), [("root", "--workdir"), ("cache", "TOOLKIT_CACHE_DIR")])
def test_a_file_where_a_folder_should_be_is_refused_before_any_build(
        tmp_path: Path, which: str, named: str) -> None:
    layout = Layout(tmp_path / "work", tmp_path / "cache")
    getattr(layout, which).parent.mkdir(parents=True, exist_ok=True)
    getattr(layout, which).write_text("a file\n")
    from toolkit.core.errors import UsageError

    with pytest.raises(UsageError) as caught:
        jobs.run_plans([a_plan(step("compile", "true"))], layout)
    assert caught.value.exit_code == 2 and named in str(caught.value)
    assert str(getattr(layout, which)) in str(caught.value)


def test_the_builds_of_one_run_share_one_table_of_index_verdicts(
        layout: Layout, monkeypatch: pytest.MonkeyPatch) -> None:
    original = executor.HANDLERS[Command]
    tables: list[object] = []

    def note(s: Step, run: Run) -> StepResult | str:
        tables.append(run.probes)
        return original(s, run)

    monkeypatch.setitem(executor.HANDLERS, Command, note)
    jobs.run_plans([a_plan(step("compile", "true")), a_plan(step("compile", "true"), build=OTHER)],
                   layout)
    assert len(tables) == 2 and isinstance(tables[0], dict) and tables[0] is tables[1]
    jobs.run_plans([a_plan(step("compile", "true"))], layout)
    assert tables[2] == {} and tables[2] is not tables[0]  # the next run probes again
