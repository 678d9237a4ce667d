"""A step the toolkit does itself (no command: a check, a rename, a copy, a stamp) ends as a
command that exited 0 would: ``returncode`` 0, no argv, no environment, not skipped. The
manifest's step rows carry that ``returncode`` (its schema: an integer, or null for a step the
executor skipped, whose row says why in ``skipped``), so a passed in-process step is never
read as a skipped one. Each step is driven to success here with real files."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

from toolkit.core.steps import (
    ExpectWheel,
    FetchSubmodules,
    MarkEnvReady,
    NameWheel,
    ProvideLibrary,
    Publish,
    PublishVariant,
    Step,
)
from toolkit.plan.layout import Layout
from toolkit.plan.model import Plan
from toolkit.plan.recipes import load_matrix
from toolkit.run import building, prereqs, provisioning, sources, variant_steps
from toolkit.run.context import Run, StepResult


def a_run(tmp_path: Path) -> Run:
    plan = Plan(load_matrix().build("apex-1.8.0-cp311-rocm7.0"), ("gfx942",), None, ())
    return Run(plan, Layout(tmp_path / "work", tmp_path / "cache"), io.StringIO())


def a_wheel(folder: Path, name: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    version = name.split("-")[1]
    with zipfile.ZipFile(folder / name, "w") as zf:
        zf.writestr("apex/__init__.py", "X = 1\n")
        zf.writestr(f"apex-{version}.dist-info/METADATA",
                    f"Metadata-Version: 2.1\nName: apex\nVersion: {version}\n")
        zf.writestr(f"apex-{version}.dist-info/WHEEL",
                    "Wheel-Version: 1.0\nGenerator: t\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        zf.writestr(f"apex-{version}.dist-info/RECORD", "")
    return folder / name


def ended_as_exit_0(step: Step, result: StepResult | str) -> bool:
    return result == StepResult(step.name, step.kind, [], {}, returncode=0, seconds=0.0,
                                skipped=None)


def test_the_expected_wheel_check(tmp_path: Path) -> None:
    run = a_run(tmp_path)
    a_wheel(tmp_path / "house", "apex-1.8.0-py3-none-any.whl")
    step = Step("expect-wheel", "check", ExpectWheel(str(tmp_path / "house"), "apex", "1.8.0"))
    assert ended_as_exit_0(step, prereqs.expect_wheel(step, run))


def test_a_library_already_in_place(tmp_path: Path) -> None:
    run = a_run(tmp_path)
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "libtbb.so").write_bytes(b"")
    (tmp_path / "inc" / "tbb").mkdir(parents=True)
    (tmp_path / "inc" / "tbb" / "tbb.h").write_text("")
    step = Step("provide-tbb", "tbb", ProvideLibrary(
        None, "system", "tbb", ("tbb/tbb.h",), (str(tmp_path / "lib"),),
        (str(tmp_path / "inc"),)))
    assert ended_as_exit_0(step, prereqs.provide_library(step, run))


def test_naming_and_publishing_the_wheel(tmp_path: Path) -> None:
    run = a_run(tmp_path)
    run.values["SHA"] = "8d873bb6" + "0" * 32
    a_wheel(tmp_path / "house", "apex-1.8.0-py3-none-any.whl")
    name = Step("name-wheel", "name", NameWheel(str(tmp_path / "house"),
                                                  str(tmp_path / "staging"), "7.0", "toolkit"))
    assert ended_as_exit_0(name, building.name_wheel_step(name, run))
    named = Path(run.values["WHEEL"])
    assert named.name == "apex-1.8.0+rocm7.0git8d873bb6-py3-none-any.whl"
    publish = Step("publish", "publish", Publish("{WHEEL}", str(tmp_path / "dist")))
    assert ended_as_exit_0(publish, building.publish(publish, run))
    assert run.values["WHEEL"] == str(tmp_path / "dist" / named.name)


def test_publishing_a_variant(tmp_path: Path) -> None:
    run = a_run(tmp_path)
    a_wheel(tmp_path / "staging", "apex-1.8.0-py3-none-any-gfx942.whl")
    step = Step("publish-variant-gfx942", "publish", PublishVariant(
        "gfx942", str(tmp_path / "staging"), str(tmp_path / "dist")))
    assert ended_as_exit_0(step, variant_steps.publish_variant(step, run))


def test_no_submodule_to_fetch(tmp_path: Path) -> None:
    run = a_run(tmp_path)
    (tmp_path / "src").mkdir()
    step = Step("get-submodules", "git", FetchSubmodules(str(tmp_path / "src"), (),
                                                         str(tmp_path / "mirrors")))
    assert ended_as_exit_0(step, sources.fetch_submodules(step, run))


def test_stamping_the_environment_ready(tmp_path: Path) -> None:
    run = a_run(tmp_path)
    run.env_digest, run.interpreter = "d" * 64, "/usr/bin/python3.11 3.11.2"
    env_dir = tmp_path / "env"
    env_dir.mkdir()
    step = Step("mark-env-ready", "stamp", MarkEnvReady(str(env_dir)))
    assert ended_as_exit_0(step, provisioning.mark_env_ready(step, run))
    stamps = [p for p in env_dir.rglob("*") if p.is_file()]
    assert len(stamps) == 1 and json.loads(stamps[0].read_text())["digest"] == "d" * 64
    # the stamp says, for whoever opens it, which build and interpreter it was made for
    described = json.loads(stamps[0].read_text())["described"]
    assert (described["build"], described["python"]) == (run.plan.build.id, run.interpreter)
