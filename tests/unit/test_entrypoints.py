"""The CLI, invoke and nox entry points: exit codes, one-line errors, no tracebacks."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from toolkit.cli.main import main
from toolkit.plan.recipes import load_matrix

ROOT = Path(__file__).resolve().parents[2]


SEED = ("1.4.0", "1.5.0", "1.6.0", "1.7.0", "1.8.0")  # the Apex Internal CI seed table


def run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(argv), cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_cli_matrix_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["matrix", "--package", "apex", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    # the seed table's 60 wheels (apex 1.4.0-1.8.0); newer versions may follow
    assert len([r for r in rows if r["version"] in SEED]) == 60
    assert set(rows[0]) == {"id", "package", "version", "python", "rocm", "torch",
                            "known_failures"}
    assert {"id": "apex-1.8.0-cp312-rocm7.0", "package": "apex", "version": "1.8.0",
            "python": "3.12", "rocm": "7.0", "torch": "2.8", "known_failures": []} in rows


def test_cli_matrix_table_totals(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["matrix", "--package", "apex"]) == 0
    out = capsys.readouterr().out
    total = len(load_matrix().select(packages=["apex"]))
    assert "grand total" in out and "cp39-cp313 + cp313t" in out and str(total) in out


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["matrix", "--rocm", "5.0"], "unknown ROCm version '5.0'; valid: 6.0"),
        (["matrix", "--format", "xml"], "unknown format 'xml'; valid: table, json"),
        (["plan", "apex-1.8.0-cp312-rocm7.0", "--gfx", "gfx9999"], "valid targets:"),
        (["plan", "apex-0.0.1-cp312-rocm7.0"], "unknown build id"),
    ],
)
def test_cli_bad_input_exits_2(argv: list[str], needle: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert needle in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def nox_list(*extra: str) -> dict[str, bool]:
    """Session name -> selected, from `nox -l` (``*`` selected, ``-`` not)."""
    res = run(sys.executable, "-m", "nox", "-l", *extra)
    assert res.returncode == 0, res.stderr
    out: dict[str, bool] = {}
    for line in res.stdout.splitlines():
        if line[:2] in {"* ", "- "}:
            out[line[2:].split()[0]] = line.startswith("*")
    return out


def test_nox_list_names_and_tags() -> None:
    sessions = nox_list()
    for name in ("build-3.12-rocm7.0", "build-3.8-rocm6.0", "build-3.13t-rocm6.4",
                 "smoke-3.12-rocm7.0", "lock-3.12-rocm7.0", "tests", "lint", "demo"):
        assert name in sessions
    assert "build-3.8-rocm7.0" not in sessions
    selected = {k for k, v in nox_list("-t", "rocm7.0").items() if v}
    assert "build-3.12-rocm7.0" in selected and "build-3.12-rocm6.4" not in selected
    selected = {k for k, v in nox_list("-t", "fbgemm_gpu").items() if v}
    assert "build-3.13-rocm7.1" in selected and "build-3.8-rocm6.0" not in selected


def test_nox_dry_run_shows_arch_and_runs_nothing(tmp_path: Path) -> None:
    res = run(sys.executable, "-m", "nox", "-s", "build-3.12-rocm7.0", "--",
              "--dry-run", "--gfx", "gfx94X-dcgpu", "--workdir", str(tmp_path))
    assert res.returncode == 0, res.stderr
    assert "PYTORCH_ROCM_ARCH=gfx942" in res.stdout
    assert list(tmp_path.iterdir()) == []


def test_nox_bad_gfx_exits_2_with_valid_list() -> None:
    from tests.fixtures.nox_runs import failure

    res = run(sys.executable, "-m", "nox", "-s", "build-3.12-rocm7.0", "--", "--dry-run",
              "--gfx", "gfx9999")
    assert res.returncode == 1  # nox's own: a session failed; the toolkit's code is in its line
    message, code = failure(res.stderr)
    assert code == 2
    assert "unknown gfx target or family 'gfx9999'" in message and "gfx942" in message
    assert "Traceback" not in res.stderr


def test_invoke_matrix_json_and_bad_value() -> None:
    res = run(sys.executable, "-m", "invoke", "matrix", "--package", "apex", "--format", "json")
    assert res.returncode == 0, res.stderr
    assert len([r for r in json.loads(res.stdout) if r["version"] in SEED]) == 60
    res = run(sys.executable, "-m", "invoke", "matrix", "--python", "2.7")
    assert res.returncode == 2 and "unknown Python version '2.7'" in res.stderr
