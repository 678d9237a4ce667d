"""A broken data file through the real entry points (subprocesses, ``TOOLKIT_DATA_DIR``):
invoke, ``python -m toolkit`` and nox answer one line naming the problem, exit 3, no traceback;
nox's data-free sessions (tests, lint) stay registered (tests/integration/test_data_sessions.py
runs them)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

DEFECTS = {
    # name: (file, old, new, what the one line must name)
    "unknown-key": ("apex.toml", "[package]", 'colour = "red"\n[package]',
                    "apex.toml: colour: unknown key; valid: package, versions"),
    "build-style": ("apex.toml", 'build_style = "jit-prebuild"', 'build_style = "jit-prebuilt"',
                    "apex.toml: versions[4].build_style: 'jit-prebuilt' is not allowed; "
                    "valid: ext-flags, jit-prebuild (the build styles of its recipe); "
                    "did you mean jit-prebuild?"),
    "renamed-header": ("fbgemm_gpu.toml", "[package]", "[fbgemm]",
                       "fbgemm_gpu.toml: fbgemm: unknown key; valid: package, versions"),
    "wrong-type": ("rocm.toml", 'hip = "7.0"', "hip = 7.0",
                   'rocm.toml: releases."7.0".hip: must be a non-empty string, got float 7.0'),
}


def broken_data(tmp_path: Path, defect: str) -> tuple[dict[str, str], str]:
    """A copy of the real data with one defect; the environment pointing at it; the needle."""
    file, old, new, needle = DEFECTS[defect]
    data = tmp_path / "data"
    shutil.copytree(ROOT / "toolkit" / "data", data)
    text = (data / file).read_text()
    assert old in text, f"{old!r} not in {file}: the real data changed, update the test"
    (data / file).write_text(text.replace(old, new, 1))
    env = {**os.environ, "TOOLKIT_DATA_DIR": str(data), "NO_COLOR": "1"}
    env.pop("NOXSESSION", None)
    return env, f"{data}/{needle}"


def run(env: dict[str, str], *argv: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *argv], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=timeout, check=False)


def assert_one_line_error(res: subprocess.CompletedProcess[str], needle: str) -> None:
    out = (res.stdout + res.stderr).strip()
    assert res.returncode == 3, (res.returncode, out)
    assert "Traceback" not in out, out
    assert out.splitlines() == [f"error: {needle}"], out


@pytest.mark.parametrize("defect", sorted(DEFECTS))
def test_invoke_matrix(tmp_path: Path, defect: str) -> None:
    env, needle = broken_data(tmp_path, defect)
    assert_one_line_error(run(env, "-m", "invoke", "matrix"), needle)


@pytest.mark.parametrize("defect", sorted(DEFECTS))
def test_python_m_toolkit_matrix(tmp_path: Path, defect: str) -> None:
    env, needle = broken_data(tmp_path, defect)
    assert_one_line_error(run(env, "-m", "toolkit", "matrix", "--format", "json"), needle)


@pytest.mark.parametrize("defect", sorted(DEFECTS))
def test_nox_list(tmp_path: Path, defect: str) -> None:
    env, needle = broken_data(tmp_path, defect)
    assert_one_line_error(run(env, "-m", "nox", "-l"), needle)


@pytest.mark.parametrize(
    "argv",
    [["-s", "build-3.12-rocm7.0", "--", "--dry-run"], ["-t", "apex"], ["--usage", "lock-3.12-rocm7.0"],
     ["-l", "-s", "tests"], ["-s", "tests", "demo"]],
    ids=["matrix-session", "tag", "usage-of-matrix-session", "list-with-session", "demo"],
)
def test_nox_anything_that_needs_the_data_gets_the_error(tmp_path: Path, argv: list[str]) -> None:
    env, needle = broken_data(tmp_path, "unknown-key")
    assert_one_line_error(run(env, "-m", "nox", *argv), needle)


def test_nox_data_free_sessions_are_still_registered(tmp_path: Path) -> None:
    env, needle = broken_data(tmp_path, "unknown-key")
    for name, doc in (("tests", "Run the toolkit's test suite"),
                      ("lint", "ruff, mypy --strict, the import contracts")):
        res = run(env, "-m", "nox", "--usage", name)
        assert res.returncode == 0, res.stderr
        assert doc in res.stdout
        assert res.stderr.strip() == (f"warning: {needle} (build/smoke/lock sessions are not "
                                      "registered until it is fixed)")


def test_healthy_copy_lists_the_matrix_sessions(tmp_path: Path) -> None:
    """The control: the same copy without a defect lists every session and exits 0."""
    data = tmp_path / "data"
    shutil.copytree(ROOT / "toolkit" / "data", data)
    env = {**os.environ, "TOOLKIT_DATA_DIR": str(data)}
    env.pop("NOXSESSION", None)
    res = run(env, "-m", "nox", "-l")
    assert res.returncode == 0, res.stderr
    for name in ("build-3.12-rocm7.0", "lock-3.13-rocm7.1", "tests", "lint"):
        assert f"- {name}" in res.stdout or f"* {name}" in res.stdout, name
    assert "warning" not in res.stderr and "error" not in res.stderr
