"""The demo's first line says what it builds and why (README: "The demo compiles real GPU code
for gfx90a and gfx908 when a HIP compiler is installed (``sudo apt-get install -y hipcc ...``
on Debian/Ubuntu); without one it builds the CPU variant and says so"): the HIP found, where,
and the targets; or that there is none, the CPU variant and the Debian package that gives real
GPU code.

Real runs of ``python -m toolkit demo`` in process: which HIP is found is decided by the real
search (``$ROCM_PATH``, ``/opt/rocm``, hipcc on ``$PATH``) over a hand-made ROCm tree whose
``.info/version`` says 7.0.2-17 (so HIP 7.0), or over an empty ``$PATH``. The work folder
holds a plain file named ``build``, so the run stops at its first step (the build's lock
cannot be made there): the line is printed, nothing is built."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fixtures.system_rocm import rocm_at
from toolkit.cli.main import main


def _first_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    work = tmp_path / "w"
    work.mkdir()
    (work / "build").write_text("")  # in the way of the first step: nothing gets built
    assert main(["demo", "--no-smoke", "--workdir", str(work)]) != 0
    return capsys.readouterr().out.splitlines()[0]


@pytest.fixture
def no_rocm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "empty-path"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))  # no hipcc on PATH
    monkeypatch.setenv("TOOLKIT_CACHE_DIR", str(tmp_path / "cache"))
    for var in ("ROCM_PATH", "ROCM_HOME", "HIP_PATH"):
        monkeypatch.delenv(var, raising=False)
    if Path("/opt/rocm").exists():
        pytest.skip("/opt/rocm is installed here")


def test_a_found_hip_is_named_with_its_version_and_root_and_the_targets(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        no_rocm: None) -> None:
    rocm = rocm_at(tmp_path / "rocm-7.0.2", "7.0.2-17")
    monkeypatch.setenv("ROCM_PATH", str(rocm))
    line = _first_line(tmp_path, capsys)
    assert line.startswith(f"demo: HIP 7.0 compiler found under {rocm}: building the sample")
    assert line.endswith(" for gfx90a, gfx908")


def test_no_hip_says_so_and_names_the_cpu_variant_and_debians_hipcc(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], no_rocm: None) -> None:
    line = _first_line(tmp_path, capsys)
    assert line.startswith("demo: no ROCm/HIP compiler on this machine: ")
    assert line.endswith("building the CPU variant of the sample (install Debian's hipcc for "
                         "real GPU code)")
