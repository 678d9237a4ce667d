"""nox's data-free sessions run with a broken data file (the matrix sessions cannot exist)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.test_data_entrypoints import broken_data, run

pytestmark = pytest.mark.integration


def test_nox_tests_session_runs_with_broken_data(tmp_path: Path) -> None:
    env, needle = broken_data(tmp_path, "unknown-key")
    probe = tmp_path / "probe" / "test_probe.py"
    probe.parent.mkdir()
    marker = tmp_path / "ran.txt"
    probe.write_text(
        "import os\nimport pathlib\n\n\n"
        "def test_probe() -> None:\n"
        f"    pathlib.Path({str(marker)!r}).write_text(os.environ['TOOLKIT_DATA_DIR'])\n")
    res = run(env, "-m", "nox", "-s", "tests", "--", "-n", "0", "-p", "no:cacheprovider",
              "--rootdir", str(probe.parent), str(probe), timeout=300)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    assert marker.read_text() == env["TOOLKIT_DATA_DIR"], "the session ran pytest"
    assert res.stderr.startswith(f"warning: {needle} "), res.stderr[:500]
    assert "Traceback" not in res.stderr


def test_nox_lint_session_starts_with_broken_data(tmp_path: Path) -> None:
    """lint runs ruff and mypy (they may fail on work in progress; never on the data)."""
    env, needle = broken_data(tmp_path, "build-style")
    res = run(env, "-m", "nox", "-s", "lint", timeout=600)
    assert res.stderr.startswith(f"warning: {needle} "), res.stderr[:500]
    assert "nox > Running session lint" in res.stderr
    assert "-m ruff check ." in res.stderr
    assert needle not in res.stdout and "Traceback" not in res.stderr
