"""A ``--source`` project whose wheel failed the check's GPU-target rule looking CPU-only
(the check's own words: "(a CPU-only build?)", "it has no native library and no code object")
gets the hint naming ``--cpu`` (``nox -s demo -- --source PATH --cpu``); any other failure of
the check keeps its own hint, and a matrix build (no ``--source``) never gets it. The check is
a real executable in the place of ``python -m toolkit check`` that prints one finding line
(the rule's name in brackets and its words, as the check's findings carry them) and exits 1;
the outcome is a failed check (exit 1)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from toolkit.core.errors import CheckFailed
from toolkit.core.steps import CheckWheel, Step
from toolkit.plan.layout import Layout
from toolkit.plan.model import Plan
from toolkit.plan.recipes import load_matrix
from toolkit.run import executor
from toolkit.run.context import Run

CPU_LINE = ("FAIL [gpu-targets] demo-0.1-py3-none-any.whl: none of its 1 native libraries "
            "carries device code or links HIP (a CPU-only build?)")
NO_LIBS_LINE = ("FAIL [gpu-targets] demo-0.1-py3-none-any.whl: it has no native library and "
                "no code object")
MISSING_LINE = "FAIL [gpu-targets] libdemo.so: no code object for gfx942 (has gfx90a)"
OTHER_RULE_LINE = "FAIL [abi3] libdemo.so: the wheel is tagged abi3 (a CPU-only build?)"


def failed_check(tmp_path: Path, line: str, *, source: str | None = "/src/demo",
                 gfx: tuple[str, ...] = ("gfx942",)) -> CheckFailed:
    check = tmp_path / "toolkit-python"
    check.write_text(f"#!/bin/sh\necho '{line}'\nexit 1\n")
    check.chmod(0o755)
    step = Step("check", "check", CheckWheel(str(check), "demo.whl", str(tmp_path), gfx))
    plan = Plan(load_matrix().build("apex-1.8.0-cp311-rocm7.0"), gfx, None, (step,),
                source=source)
    run = Run(plan, Layout(tmp_path / "work", tmp_path / "cache"), io.StringIO())
    with pytest.raises(CheckFailed) as caught:
        executor._verdict(step, run)
    assert caught.value.exit_code == 1
    return caught.value


@pytest.mark.parametrize("line", [CPU_LINE, NO_LIBS_LINE])
def test_a_cpu_only_looking_wheel_of_a_source_project_names_cpu(tmp_path: Path,
                                                                line: str) -> None:
    assert failed_check(tmp_path, line).hint == (
        "a CPU-only project carries no GPU code: --cpu builds and checks it as one "
        "(nox -s demo -- --source PATH --cpu)")


@pytest.mark.parametrize("line", [MISSING_LINE, OTHER_RULE_LINE])
def test_another_failure_of_the_check_names_no_cpu(tmp_path: Path, line: str) -> None:
    assert "--cpu" not in (failed_check(tmp_path, line).hint or "")


def test_a_matrix_build_or_a_check_without_targets_names_no_cpu(tmp_path: Path) -> None:
    assert "--cpu" not in (failed_check(tmp_path, CPU_LINE, source=None).hint or "")
    assert "--cpu" not in (failed_check(tmp_path, CPU_LINE, gfx=()).hint or "")
