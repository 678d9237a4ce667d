"""A repro on a system whose ROCm is another release is refused, and what it names as the
difference is the ROCm release (README "Exit codes": 4 ... "a ROCm mismatch"): the label is
ROCm, with the recorded version and the one found here. The install is a real folder with the
file a ROCm install carries (``.info/version``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fixtures.system_rocm import rocm_at
from toolkit.verify import repro


def test_another_rocm_release_here_is_named_rocm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = rocm_at(tmp_path / "rocm", "6.3.2-45")
    monkeypatch.setenv("ROCM_PATH", str(root))
    (diff,) = repro._rocm_differences({"sdk": {"provider": "system", "version": "6.4.1"},
                                       "build": {"rocm": "6.4"}})
    assert diff.what == "ROCm" and diff.fatal
    assert diff.manifest == "6.4.1"
    assert diff.here.startswith("6.3.2") and str(root) in diff.here

