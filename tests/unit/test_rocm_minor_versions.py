"""ROCm releases compare at the minor level: 6.4.1 and 6.4.3 are one release, 6.3 and 6.4 are
two (README "Exit codes": 4 ... "a ROCm mismatch"; a repro on another ROCm release is refused).
The installs are real folders with the files a ROCm install carries (``.info/version``); the
expectations are hand-computed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.system_rocm import rocm_at
from toolkit.core.errors import EnvironmentProblem
from toolkit.env.rocm import check_version, find_system
from toolkit.verify import repro


def _install(root: Path, version: str) -> Path:
    return rocm_at(root, f"{version}-123")


@pytest.mark.parametrize(("found", "session"), [("6.4.1", "6.4"), ("6.4.3", "6.4.1"), ("7.0", "7.0.2"),
                                                ("6.4.0-98", "6.4")])
def test_the_same_minor_is_the_same_release(found: str, session: str) -> None:
    assert check_version(what="ROCm", found=found, session=session, allow=False) is None


@pytest.mark.parametrize(("found", "session"), [("6.3.4", "6.4"), ("6.4.1", "6.3"), ("6.1", "6.10"),
                                                ("7.0.0", "6.0"), ("6.14.0", "6.1")])
def test_another_minor_is_another_release(found: str, session: str) -> None:
    with pytest.raises(EnvironmentProblem) as caught:
        check_version(what="the system ROCm", found=found, session=session, allow=False)
    assert caught.value.exit_code == 4
    assert found in str(caught.value) and session in str(caught.value)
    assert "--allow-rocm-mismatch" in str(caught.value)
    said = check_version(what="ROCm", found=found, session=session, allow=True)
    assert said is not None and said.startswith("warning: ") and "--allow-rocm-mismatch" in said


def test_the_install_of_the_wanted_minor_is_preferred(tmp_path: Path) -> None:
    opt = tmp_path / "opt"
    _install(opt / "rocm-6.4.1", "6.4.1")
    _install(opt / "rocm-6.3.2", "6.3.2")
    assert find_system({}, opt=opt, want="6.3").root == str(opt / "rocm-6.3.2")
    assert find_system({}, opt=opt, want="6.4").root == str(opt / "rocm-6.4.1")


def _recorded(version: str) -> dict[str, Any]:
    return {"sdk": {"provider": "system", "version": version},
            "build": {"rocm": ".".join(version.split(".")[:2])}}


@pytest.mark.parametrize(("recorded", "here"), [("6.4.1", "6.3.2"), ("6.10.1", "6.1.0"), ("6.1.0", "6.10.1")])
def test_a_repro_on_another_rocm_minor_is_refused(recorded: str, here: str, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    root = _install(tmp_path / "rocm", here)
    monkeypatch.setenv("ROCM_PATH", str(root))
    (diff,) = repro._rocm_differences(_recorded(recorded))
    assert diff.fatal and recorded in diff.manifest and here in diff.here


def test_a_repro_on_another_patch_of_the_minor_goes_on(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    root = _install(tmp_path / "rocm", "6.4.3")
    monkeypatch.setenv("ROCM_PATH", str(root))
    assert repro._rocm_differences(_recorded("6.4.1")) == []
