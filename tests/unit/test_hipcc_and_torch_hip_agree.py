"""apex's preflight (``toolkit.run.preflight.hip_match``): hipcc's HIP major.minor (from its
``--version`` line "HIP version: X.Y.Z-...", as ROCm's hipcc prints it) must equal torch's
``torch.version.hip`` major.minor; otherwise one line naming both, exit 4 (README's table: an
environment problem). hipcc and the environment's Python are real executables here (shell
scripts printing what a ROCm hipcc and the torch probe print), the words written by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolkit.core.errors import EnvironmentProblem
from toolkit.run.preflight import hip_match

HIPCC_OUT = ("HIP version: 6.2.41133-dd7f95766\nAMD clang version 18.0.0git\n"
             "Target: x86_64-unknown-linux-gnu\n")


def tool(path: Path, out: str) -> str:
    path.write_text(f"#!/bin/sh\ncat <<'EOF'\n{out}\nEOF\n")
    path.chmod(0o755)
    return str(path)


def python_with_torch_hip(tmp_path: Path, hip: str | None) -> str:
    return tool(tmp_path / "python", json.dumps(
        {"version": "2.5.1+rocm6.2", "hip": hip, "lib": "/env/torch/lib"}))


def test_equal_major_minor_is_the_compilers_version(tmp_path: Path) -> None:
    hipcc = tool(tmp_path / "hipcc", HIPCC_OUT)
    assert hip_match(hipcc, python_with_torch_hip(tmp_path, "6.2.41134-65d174c3e")) == "6.2"


def test_another_hip_in_torch_names_both(tmp_path: Path) -> None:
    hipcc = tool(tmp_path / "hipcc", HIPCC_OUT)
    with pytest.raises(EnvironmentProblem) as caught:
        hip_match(hipcc, python_with_torch_hip(tmp_path, "6.1.40091-a8dbc0c19"))
    assert caught.value.exit_code == 4
    assert caught.value.message == (
        "hipcc is HIP 6.2 but torch was built with HIP 6.1; apex needs them equal "
        "(major.minor) and would otherwise fail with a misleading message")


def test_a_torch_without_hip_is_no_rocm_build(tmp_path: Path) -> None:
    hipcc = tool(tmp_path / "hipcc", HIPCC_OUT)
    python = python_with_torch_hip(tmp_path, None)
    with pytest.raises(EnvironmentProblem) as caught:
        hip_match(hipcc, python)
    assert caught.value.exit_code == 4
    assert caught.value.message == (
        f"torch in {python} is not a ROCm build (torch.version.hip is None); hipcc is HIP 6.2: "
        "install the ROCm torch of this session")


def test_a_hipcc_version_line_with_spaces_or_none(tmp_path: Path) -> None:
    python = python_with_torch_hip(tmp_path, "5.7.31921")
    assert hip_match(tool(tmp_path / "hipcc", "HIP version:   5.7.31921\n"), python) == "5.7"
    silent = tool(tmp_path / "hipcc2", "clang version 18\n")
    with pytest.raises(EnvironmentProblem) as caught:
        hip_match(silent, python)
    assert caught.value.message == f"{silent} --version printed no 'HIP version: X.Y' line"
