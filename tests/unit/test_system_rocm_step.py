"""use-system-rocm (``toolkit.run.provisioning.use_system_rocm``) on ROCm folders made here:
it reads the install at the planned root (never another one the environment or PATH names),
learns ROCM_ROOT, ROCM_BIN, ROCM_CMAKE and ROCM_SDK_VERSION from it, refuses a major.minor
other than the session's (exit 4, README: "a ROCm mismatch") and, with
--allow-rocm-mismatch, warns instead. install-rocm-sdk (``install_sdk``) learns the same
values through the pip SDK's own CLI (``python -m rocm_sdk``: its TEST DOUBLE,
``tests.doubles.sdk``, run by a real interpreter) and judges its version alike."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from tests.fixtures.system_rocm import rocm_at
from toolkit.core.errors import EnvironmentProblem
from toolkit.core.reporter import NullReporter
from toolkit.core.steps import Step, UseSystemRocm
from toolkit.plan.layout import Layout
from toolkit.plan.model import Plan
from toolkit.plan.recipes import load_matrix
from toolkit.run import provisioning
from toolkit.run.context import Run


class Heard(NullReporter):
    def __init__(self) -> None:
        self.warnings: list[str] = []

    def warning(self, text: str) -> None:
        self.warnings.append(text)


def rocm(tmp_path: Path, version: str) -> Path:
    return rocm_at(tmp_path / f"rocm-{version}", f"{version}-123")


@pytest.fixture
def heard(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Heard:
    # another ROCm the environment names: never the one used
    monkeypatch.setenv("ROCM_PATH", str(rocm(tmp_path / "other", "6.4.1")))
    monkeypatch.setenv("HIP_PATH", str(tmp_path / "other" / "rocm-6.4.1"))
    return Heard()


def use(tmp_path: Path, root: Path, heard: Heard, *, allow: bool = False) -> Run:
    plan = Plan(load_matrix().build("apex-1.8.0-cp311-rocm7.0"), ("gfx942",), None, ())
    run = Run(plan, Layout(tmp_path / "work", tmp_path / "cache"), io.StringIO(), heard)
    step = Step("use-system-rocm", "rocm", UseSystemRocm(str(root), "7.0", allow))
    result = provisioning.use_system_rocm(step, run)
    assert not isinstance(result, str) and result.returncode == 0
    return run


def test_the_planned_root_is_read_and_its_folders_learned(tmp_path: Path, heard: Heard) -> None:
    root = rocm(tmp_path, "7.0.2")
    run = use(tmp_path, root, heard)
    assert run.values == {"ROCM_ROOT": str(root), "ROCM_BIN": f"{root}/bin",
                          "ROCM_CMAKE": f"{root}/lib/cmake", "ROCM_SDK_VERSION": "7.0.2"}
    assert f"# system ROCm 7.0.2 at {root}\n" in run.log.getvalue()  # type: ignore[attr-defined]
    assert heard.warnings == []


def test_another_major_minor_is_an_environment_problem(tmp_path: Path, heard: Heard) -> None:
    root = rocm(tmp_path, "6.4.1")
    with pytest.raises(EnvironmentProblem) as caught:
        use(tmp_path, root, heard)
    assert caught.value.exit_code == 4
    assert caught.value.message == (f"the system ROCm at {root} is version 6.4.1 but this "
                                    "session builds for ROCm 7.0 (6.4 != 7.0)")
    assert caught.value.hint == "use the matching ROCm, or pass --allow-rocm-mismatch"


def test_an_allowed_mismatch_is_one_warning_and_the_root_is_used(tmp_path: Path,
                                                                 heard: Heard) -> None:
    root = rocm(tmp_path, "6.4.1")
    run = use(tmp_path, root, heard, allow=True)
    said = (f"the system ROCm at {root} is version 6.4.1 but this session builds for ROCm 7.0 "
            "(6.4 != 7.0); continuing because of --allow-rocm-mismatch")
    assert heard.warnings == [said]
    assert f"warning: {said}\n" in run.log.getvalue()  # type: ignore[attr-defined]
    assert run.values["ROCM_ROOT"] == str(root)


def test_a_root_without_rocm_names_where_it_looked(tmp_path: Path, heard: Heard) -> None:
    with pytest.raises(EnvironmentProblem) as caught:
        use(tmp_path, tmp_path / "empty", heard)
    assert caught.value.message.startswith("no system ROCm install found (looked at: $ROCM_PATH "
                                           f"({tmp_path / 'empty'})")
    assert "other" not in caught.value.message  # nothing but the planned root


# ------------------------------------------------------------------- install-rocm-sdk (pip)
def sdk_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, version: str) -> Path:
    """The TEST DOUBLE of TheRock's ``rocm_sdk`` CLI (tests.doubles.sdk) importable by this
    interpreter, its core folder beside it, as ``pip install rocm[devel]`` leaves them."""
    from tests.doubles.sdk import ROCM_SDK_MAIN

    site = tmp_path / "site"
    (site / "rocm_sdk").mkdir(parents=True)
    (site / "rocm_sdk" / "__init__.py").write_text("")
    (site / "rocm_sdk" / "__main__.py").write_text(ROCM_SDK_MAIN)
    (site / "rocm_sdk" / "_dist_info.py").write_text(
        f"VERSION = {version!r}\nLAYOUT = 'family'\nFAMILY = 'gfx94X-dcgpu'\n"
        "TARGETS = ['gfx942']\n")
    (site / "_rocm_sdk_core" / "bin").mkdir(parents=True)
    (site / "_rocm_sdk_core" / "__init__.py").write_text("")
    monkeypatch.setenv("PYTHONPATH", str(site))
    return site / "_rocm_sdk_core"


def install(tmp_path: Path, heard: Heard, *, allow: bool = False) -> Run:
    import sys

    from toolkit.core.command import Command
    from toolkit.core.steps import InstallSdk

    plan = Plan(load_matrix().build("apex-1.8.0-cp311-rocm7.0"), ("gfx942",), None, ())
    run = Run(plan, Layout(tmp_path / "work", tmp_path / "cache"), io.StringIO(), heard)
    step = Step("install-rocm-sdk", "sdk", InstallSdk(Command(("true",)), sys.executable, "7.0",
                                                      allow))
    result = provisioning.install_sdk(step, run)
    assert not isinstance(result, str) and result.returncode == 0
    return run


def test_the_pip_sdk_is_learned_through_its_own_cli(tmp_path: Path, heard: Heard,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    core = sdk_on_path(tmp_path, monkeypatch, "7.0.1")
    run = install(tmp_path, heard)
    assert run.values == {"ROCM_ROOT": str(core), "ROCM_BIN": f"{core}/bin",
                          "ROCM_CMAKE": f"{core}/lib/cmake", "ROCM_SDK_VERSION": "7.0.1",
                          "ROCM_SDK_TARGETS": "gfx942"}
    assert heard.warnings == []


def test_a_pip_sdk_of_another_release_is_refused_or_warned(
        tmp_path: Path, heard: Heard, monkeypatch: pytest.MonkeyPatch) -> None:
    core = sdk_on_path(tmp_path, monkeypatch, "6.4.2")
    said = (f"the pip ROCm SDK ({core}) is version 6.4.2 but this session builds for ROCm 7.0 "
            "(6.4 != 7.0)")
    with pytest.raises(EnvironmentProblem) as caught:
        install(tmp_path, heard)
    assert caught.value.message == said
    install(tmp_path, heard, allow=True)
    assert heard.warnings == [f"{said}; continuing because of --allow-rocm-mismatch"]
