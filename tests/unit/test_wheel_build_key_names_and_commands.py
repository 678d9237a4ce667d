"""build-wheel's reuse (``toolkit.run.building.build_wheel``: skipped only when its key file
matches and the wheelhouse holds one wheel), the name the wheel gets from what the run learned
(the commit, a tree hash without git, ``+...dirty`` for uncommitted changes), a command's
environment and where its lines go (``toolkit.run.context.run_command``), an
install-requirements step run by the executor, and a publish that cannot read its wheel.

Commands are real (``sh -c``); wheel names are written by hand (PEP 440 local labels:
``+rocm7.0git<8 hex>``, ``.dirty`` last); exit codes from the README (5: a build step failed).
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest

from toolkit.core.command import Command
from toolkit.core.errors import CommandStepFailed, StepFailed
from toolkit.core.reporter import NullReporter
from toolkit.core.steps import BuildWheel, Publish, Step
from toolkit.plan.layout import Layout
from toolkit.plan.model import Plan
from toolkit.plan.recipes import load_matrix
from toolkit.run import building, executor
from toolkit.run.context import Run, run_command

BUILD = "apex-1.8.0-cp311-rocm7.0"


class Heard(NullReporter):
    def __init__(self) -> None:
        self.shown: list[str] = []
        self.step_lines: list[str] = []

    def output(self, line: str) -> None:
        self.shown.append(line)

    def step_output(self, line: str) -> None:
        self.step_lines.append(line)


def a_run(tmp_path: Path, *steps: Step, reporter: NullReporter | None = None) -> Run:
    plan = Plan(load_matrix().build(BUILD), ("gfx942",), None, steps)
    return Run(plan, Layout(tmp_path / "work", tmp_path / "cache"), io.StringIO(),
               reporter or NullReporter())


def a_wheel(folder: Path, version: str = "1.8.0") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    wheel = folder / f"demo_pkg-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("demo_pkg/__init__.py", "X = 1\n")
        zf.writestr(f"demo_pkg-{version}.dist-info/METADATA",
                    f"Metadata-Version: 2.1\nName: demo-pkg\nVersion: {version}\n")
        zf.writestr(f"demo_pkg-{version}.dist-info/WHEEL",
                    "Wheel-Version: 1.0\nGenerator: t\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        zf.writestr(f"demo_pkg-{version}.dist-info/RECORD", "")
    return wheel


# ------------------------------------------------------------------------------ build-wheel
def build_step(tmp_path: Path, *, force: bool = False) -> Step:
    house = tmp_path / "house"
    tree = tmp_path / "tree"
    tree.mkdir(exist_ok=True)
    (tree / "setup.py").write_text("# the sources\n")
    # the build: counts its runs, leaves one wheel in the wheelhouse
    script = (f'echo run >> {tmp_path}/runs; mkdir -p {house}; '
              f': > {house}/demo_pkg-1.8.0-py3-none-any.whl')
    return Step("build-wheel", "build", BuildWheel(Command(("sh", "-c", script)), str(house),
                                                   str(tree), str(tmp_path / "env"),
                                                   force=force))


def runs(tmp_path: Path) -> int:
    return (tmp_path / "runs").read_text().count("run")


def test_an_unchanged_build_is_skipped_naming_its_key(tmp_path: Path) -> None:
    step = build_step(tmp_path)
    first = building.build_wheel(step, a_run(tmp_path, step))
    assert not isinstance(first, str) and first.returncode == 0
    key = (tmp_path / "house" / ".build-key").read_text()
    assert len(key) == 64 and runs(tmp_path) == 1
    again = building.build_wheel(step, a_run(tmp_path, step))
    assert again == f"up to date: sources, command and environment unchanged ({key[:12]})"
    assert runs(tmp_path) == 1
    assert not (tmp_path / "house" / ".build-key.tmp").exists()


def test_a_key_without_its_wheel_builds_again(tmp_path: Path) -> None:
    step = build_step(tmp_path)
    building.build_wheel(step, a_run(tmp_path, step))
    (tmp_path / "house" / "demo_pkg-1.8.0-py3-none-any.whl").unlink()
    assert not isinstance(building.build_wheel(step, a_run(tmp_path, step)), str)
    assert runs(tmp_path) == 2


def test_a_key_beside_two_wheels_builds_again_from_an_emptied_wheelhouse(
        tmp_path: Path) -> None:
    step = build_step(tmp_path)
    building.build_wheel(step, a_run(tmp_path, step))
    (tmp_path / "house" / "stale-0.1-py3-none-any.whl").write_bytes(b"")
    assert not isinstance(building.build_wheel(step, a_run(tmp_path, step)), str)
    assert runs(tmp_path) == 2
    assert sorted(p.name for p in (tmp_path / "house").glob("*.whl")) == [
        "demo_pkg-1.8.0-py3-none-any.whl"]


def test_changed_sources_or_rebuild_build_again(tmp_path: Path) -> None:
    step = build_step(tmp_path)
    building.build_wheel(step, a_run(tmp_path, step))
    (tmp_path / "tree" / "setup.py").write_text("# changed\n")
    assert not isinstance(building.build_wheel(step, a_run(tmp_path, step)), str)
    forced = build_step(tmp_path, force=True)
    assert not isinstance(building.build_wheel(forced, a_run(tmp_path, forced)), str)
    assert runs(tmp_path) == 3


def test_an_environment_provisioned_again_differently_builds_again(tmp_path: Path) -> None:
    """The key covers the environment as provisioned: its stamp, the file provisioning writes
    (``toolkit.env.venvs.STAMP``). A stamp written, then another, each makes the build run
    again; the same stamp again does not."""
    from toolkit.env.venvs import STAMP

    step = build_step(tmp_path)
    (tmp_path / "env").mkdir()
    building.build_wheel(step, a_run(tmp_path, step))
    (tmp_path / "env" / STAMP).write_text('{"format": 1, "digest": "torch 2.8.0"}\n')
    assert not isinstance(building.build_wheel(step, a_run(tmp_path, step)), str)
    assert runs(tmp_path) == 2
    assert isinstance(building.build_wheel(step, a_run(tmp_path, step)), str)  # unchanged
    (tmp_path / "env" / STAMP).write_text('{"format": 1, "digest": "torch 2.8.1"}\n')
    assert not isinstance(building.build_wheel(step, a_run(tmp_path, step)), str)
    assert runs(tmp_path) == 3


# ------------------------------------------------------------------------------- the name
def test_without_git_the_tree_hash_names_the_wheel(tmp_path: Path) -> None:
    run = a_run(tmp_path)
    a_wheel(tmp_path / "house")
    run.values.update({"SHA": "0" * 40, "TREE": "abcdef12" + "9" * 56})
    named = building.named_wheel("name-wheel", run, tmp_path / "house", tmp_path / "out",
                                 rocm="7.0", naming="toolkit")
    assert named.name == "demo_pkg-1.8.0+rocm7.0gitabcdef12-py3-none-any.whl"


def test_uncommitted_changes_end_the_name_in_dirty(tmp_path: Path) -> None:
    run = a_run(tmp_path)
    a_wheel(tmp_path / "house")
    run.values.update({"SHA": "8d873bb6" + "0" * 32, "DIFF": "f" * 64,
                       "SOURCE_DATE_EPOCH": "1700000000"})
    named = building.named_wheel("name-wheel", run, tmp_path / "house", tmp_path / "out",
                                 rocm="7.0", naming="toolkit")
    assert named.name == "demo_pkg-1.8.0+rocm7.0git8d873bb6.dirty-py3-none-any.whl"
    with zipfile.ZipFile(named) as zf:  # SOURCE_DATE_EPOCH: 2023-11-14 22:13:20 UTC
        assert {i.date_time[:3] for i in zf.infolist()} == {(2023, 11, 14)}


def test_upstream_naming_keeps_the_version_and_toolkit_naming_needs_the_commit(
        tmp_path: Path) -> None:
    run = a_run(tmp_path)
    a_wheel(tmp_path / "house")
    named = building.named_wheel("make-variant", run, tmp_path / "house", tmp_path / "out",
                                 rocm="7.0", naming="upstream")
    assert named.name == "demo_pkg-1.8.0-py3-none-any.whl"
    with pytest.raises(StepFailed) as caught:
        building.named_wheel("make-variant", run, tmp_path / "house", tmp_path / "o2",
                             rocm="7.0", naming="toolkit")
    assert caught.value.message == "make-variant: the source commit (SHA) was never learned"


# --------------------------------------------------------------------- commands and steps
def test_a_commands_variables_reach_it_and_its_lines_go_to_the_step_output(
        tmp_path: Path) -> None:
    heard = Heard()
    run = a_run(tmp_path, reporter=heard)
    run.values["WHERE"] = "learned"
    cmd = Command(("sh", "-c", 'echo "x=$X_FROM_STEP"'), env={"X_FROM_STEP": "{WHERE}-1"})
    result = run_command(Step("compile", "c", cmd), cmd, run)
    assert result.env == {"X_FROM_STEP": "learned-1"} and result.returncode == 0
    assert heard.step_lines == ["x=learned-1\n"] and heard.shown == []
    assert "x=learned-1\n" in run.log.getvalue()  # type: ignore[attr-defined]


def test_a_command_runs_in_its_folder_with_learned_values_filled(tmp_path: Path) -> None:
    heard = Heard()
    run = a_run(tmp_path, reporter=heard)
    (tmp_path / "tree").mkdir()
    run.values["TREE"] = str(tmp_path / "tree")
    cmd = Command(("pwd",), cwd="{TREE}")
    run_command(Step("where", "w", cmd), cmd, run)
    assert heard.step_lines == [f"{tmp_path / 'tree'}\n"]


def test_an_echo_commands_lines_are_shown(tmp_path: Path) -> None:
    heard = Heard()
    run = a_run(tmp_path, reporter=heard)
    cmd = Command(("sh", "-c", "echo passed"), echo=True)
    run_command(Step("smoke", "s", cmd), cmd, run)
    assert heard.shown == ["passed\n"] and heard.step_lines == []


def test_an_install_requirements_step_that_passes_is_ok(tmp_path: Path) -> None:
    step = Step("install-requirements", "reqs", Command(("true",)))
    run = executor.execute(Plan(load_matrix().build(BUILD), ("gfx942",), None, (step,)),
                           Layout(tmp_path / "work", tmp_path / "cache"))
    assert [(r.name, r.returncode) for r in run.results] == [("install-requirements", 0)]


def test_an_install_requirements_command_that_is_no_installer_fails_as_a_step(
        tmp_path: Path) -> None:
    cmd = Command(("sh", "-c", "echo no install here; exit 3"))
    with pytest.raises(CommandStepFailed) as caught:
        building.install_requirements(Step("install-requirements", "r", cmd), a_run(tmp_path))
    assert caught.value.exit_code == 5 and caught.value.returncode == 3


def test_a_publish_that_cannot_read_its_wheel_names_that_wheel(tmp_path: Path) -> None:
    run = a_run(tmp_path)
    run.values["WHEEL"] = str(tmp_path / "gone" / "x-1.0-py3-none-any.whl")
    dest = tmp_path / "dist"
    with pytest.raises(FileNotFoundError) as caught:
        building.publish(Step("publish", "", Publish("{WHEEL}", str(dest))), run)
    assert caught.value.filename == run.values["WHEEL"]  # not the temporary copy
    assert list(dest.iterdir()) == []


def test_a_build_that_made_no_wheel_under_missing_folders_is_named_by_the_wheel_search(
        tmp_path: Path) -> None:
    """The command succeeds but writes nothing: build-wheel itself ends normally (its
    wheelhouse and the folders above it created for the key file), and the one-wheel search
    after it says the wheelhouse holds none, not an OSError of a missing folder."""
    from toolkit.run.wheels import find_one_wheel

    house = tmp_path / "out" / "deeper" / "house"
    tree = tmp_path / "tree"
    tree.mkdir()
    step = Step("build-wheel", "build", BuildWheel(Command(("sh", "-c", "true")), str(house),
                                                   str(tree), str(tmp_path / "env")))
    assert not isinstance(building.build_wheel(step, a_run(tmp_path, step)), str)
    assert house.is_dir()
    with pytest.raises(StepFailed, match="found: none"):
        find_one_wheel(house)


def test_the_build_key_does_not_depend_on_the_order_environment_variables_are_listed(
        tmp_path: Path) -> None:
    """An environment is a set of names (POSIX environ): the same variables listed in another
    order, in the build's command or in an earlier step's, build the same wheel, so the key is
    the same (no rebuild)."""
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "setup.py").write_text("# the sources\n")

    def key(order: tuple[str, str]) -> str:
        env = {k: {"A": "1", "B": "2"}[k] for k in order}
        earlier = Step("prepare", "p", Command(("true",), env=env))
        step = Step("build-wheel", "build", BuildWheel(Command(("true",), env=env),
                                                       str(tmp_path / "house"), str(tree),
                                                       str(tmp_path / "env")))
        action = step.action
        assert isinstance(action, BuildWheel)
        return building.build_key(step, action, a_run(tmp_path, earlier, step))

    assert key(("A", "B")) == key(("B", "A"))
