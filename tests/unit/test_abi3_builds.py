"""One abi3 (``py_limited_api``) wheel serves many Pythons: the data says so once, and the
matrix, the sessions, CI's matrix and the plan build it once, name it once and list it once.
The package is the torchao-style test recipe (tests/fixtures/third_recipe.py): version 0.8.0,
ROCm 6.4, Pythons 3.10-3.12, ``abi3 = "cp39"``; torchao's own wheel is
``torchao-0.8.0-cp39-abi3-linux_x86_64.whl`` (pytorch/ao PR #1276)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures import third_recipe
from tests.fixtures.wheels import make_wheel
from toolkit.core.errors import StepFailed, UsageError
from toolkit.core.steps import ExpectWheel
from toolkit.data.matrix import DATA_DIR, load_matrix
from toolkit.env.host import HostFacts
from toolkit.plan import recipes
from toolkit.plan.layout import Layout
from toolkit.plan.model import Options
from toolkit.plan.planner import plan
from toolkit.run.context import Run
from toolkit.run.prereqs import expect_wheel

ROOT = Path(__file__).resolve().parents[2]
ID = "abi3_ext-0.8.0-cp39-abi3-rocm6.4"  # package-version-<abi3 tag>-rocm<release>


@pytest.fixture()
def data(tmp_path: Path) -> Path:
    return third_recipe.data_folder(tmp_path / "data", DATA_DIR)


@pytest.fixture()
def registered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(recipes._RECIPES, third_recipe.NAME, third_recipe.Abi3Recipe())


def _env(data: Path) -> dict[str, str]:
    return {**os.environ, "TOOLKIT_DATA_DIR": str(data), "PYTHONPATH": str(ROOT),
            "TOOLKIT_RECIPES": f"tests.fixtures.third_recipe:{third_recipe.Abi3Recipe.__name__}"}


def _cli(data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "toolkit", *args], capture_output=True,
                          text=True, env=_env(data), timeout=120, check=False)


def test_one_wheel_per_rocm_release_serves_every_python(data: Path) -> None:
    builds = load_matrix(data).select(packages=["abi3_ext"])
    assert [b.id for b in builds] == [ID]
    (b,) = builds
    assert b.pythons == ("3.10", "3.11", "3.12")  # every listed Python
    assert b.python == "3.12" and b.session == "build-3.12-rocm6.4"  # built by the newest
    assert b.as_json()["serves"] == ["3.10", "3.11", "3.12"] and b.as_json()["abi3"] == "cp39"


def test_a_python_it_serves_selects_it_and_names_the_session_that_builds_it(data: Path) -> None:
    m = load_matrix(data)
    assert [b.id for b in m.select(packages=["abi3_ext"], python=["3.12"])] == [ID]
    with pytest.raises(UsageError) as err:
        m.pair_builds("3.10", "6.4", ["abi3_ext"])
    assert "built once, by Python 3.12" in str(err.value) and "build-3.12-rocm6.4" in str(err.value)
    assert [b.id for b in m.pair_builds("3.12", "6.4", ["abi3_ext"])] == [ID]
    assert [b.id for b in m.select(packages=["abi3_ext"], python=["3.10"])] == [ID]


def test_invoke_matrix_ids_and_ci_list_it_once(data: Path) -> None:
    ids = _cli(data, "matrix", "--ids", "--package", "abi3_ext")
    assert ids.returncode == 0, ids.stderr
    assert ids.stdout.splitlines() == [ID]
    ci = _cli(data, "matrix", "--format", "github", "--trigger", "workflow_dispatch",
              "--package", "abi3_ext")
    assert ci.returncode == 0, ci.stderr
    entries = json.loads(ci.stdout)["include"]
    assert entries and {e["id"] for e in entries} == {ID}
    families = [e["family"] for e in entries]
    assert len(families) == len(set(families))  # once per GPU family, not once per Python
    assert {e["session"] for e in entries} == {"build-3.12-rocm6.4"}


@pytest.mark.parametrize(("pythons", "says"), [
    # PEP 425: the tag cp39 is CPython 3.9; PEP 703: a free-threaded build has no stable ABI
    ('["3.13", "3.13t"]', "3.13t is a free-threaded Python; an abi3 wheel (cp39-abi3) cannot "
     "serve it (no stable ABI there)"),
    ('["3.8", "3.12"]', "3.8 is older than the stable ABI the wheel is tagged for (cp39-abi3 "
     "serves Python 3.9 and newer)"),
])
def test_data_an_abi3_wheel_cannot_serve_is_a_data_error(data: Path, pythons: str,
                                                          says: str) -> None:
    file = data / f"{third_recipe.NAME}.toml"
    file.write_text(file.read_text().replace('["3.10", "3.11", "3.12"]', pythons))
    proc = _cli(data, "matrix", "--ids")
    assert proc.returncode == 3, proc.stderr  # README: 3 = malformed data file
    assert says in proc.stderr and "versions[0].python" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_the_plan_expects_the_abi3_tag(data: Path, registered: None) -> None:
    m = load_matrix(data)
    host = HostFacts(cores=2, mem_available_gib=8.0, interpreters={"3.12": "/usr/bin/python3.12"})
    p = plan(m, m.build(ID), Options(gfx=("gfx90a",)), host, Layout(Path("/w"), Path("/c")))
    expect = p.step("expect-wheel").action
    assert isinstance(expect, ExpectWheel) and expect.tags == "cp39-abi3"
    assert "tagged cp39-abi3" in "\n".join(p.step("expect-wheel").render())


@pytest.mark.parametrize(("tag", "ok"), [("cp39-abi3", True), ("cp310-cp310", False),
                                         ("cp310-abi3", False)])
def test_expect_wheel_refuses_a_wheel_without_the_abi3_tag(
        tmp_path: Path, data: Path, registered: None, tag: str, ok: bool) -> None:
    house = tmp_path / "wheelhouse"
    make_wheel(house, "abi3-ext", "0.8.0", f"{tag}-linux_x86_64", {"abi3_ext/__init__.py": ""})
    m = load_matrix(data)
    host = HostFacts(cores=2, mem_available_gib=8.0, interpreters={"3.12": "/usr/bin/python3.12"})
    p = plan(m, m.build(ID), Options(gfx=("gfx90a",)), host, Layout(tmp_path, tmp_path))
    step = p.step("expect-wheel")
    action = step.action
    assert isinstance(action, ExpectWheel)
    from dataclasses import replace

    step = replace(step, action=replace(action, wheelhouse=str(house)))
    run = Run(p, Layout(tmp_path, tmp_path), io.StringIO())
    if ok:
        expect_wheel(step, run)
    else:
        with pytest.raises(StepFailed, match="not tagged cp39-abi3"):
            expect_wheel(step, run)


def test_explain_names_the_one_wheel_the_pythons_it_serves_and_the_python_that_builds_it(
        data: Path, registered: None, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from toolkit.cli.main import main

    monkeypatch.setenv("TOOLKIT_DATA_DIR", str(data))
    assert main(["matrix", "--explain", ID]) == 0
    wheel = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("  wheel "))
    # the data's Pythons 3.10-3.12, the one cp39-abi3 wheel built by the newest of them
    assert wheel.endswith(" wheel (py_limited_api) for Python 3.10, 3.11, 3.12, built by Python 3.12")
    assert "one cp39-abi3 wheel" in wheel
