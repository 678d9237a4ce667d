"""Preparing pip-tools for a lock fails with one clear line (exit 4, README "Exit codes": 4 an
environment problem) naming the Python and the command that failed, and the last line of its
output. Driven with the real uv, given an interpreter path that does not exist."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolkit.core.errors import EnvironmentProblem
from toolkit.plan.layout import Layout
from toolkit.run.lockfiles import _tools_env


def test_a_failing_venv_names_its_command_and_python(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-python"
    with pytest.raises(EnvironmentProblem) as caught:
        _tools_env(Layout(tmp_path, tmp_path / "cache"), str(missing), "3.12")
    msg = str(caught.value)
    assert caught.value.exit_code == 4
    assert "Python 3.12" in msg
    assert f"venv -q --python {missing}" in msg
    assert "\n" not in msg.strip()
