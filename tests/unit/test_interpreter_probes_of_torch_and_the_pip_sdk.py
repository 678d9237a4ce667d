"""What the toolkit learns by running an environment's own interpreter: torch's version facts
(``torchprobe.torch_info``) and a pip ROCm SDK's paths, version and targets (``rocm``'s
``python -m rocm_sdk`` queries), and the one-line errors when that interpreter cannot tell.

Each "environment" is the real Python with a folder on ``PYTHONPATH`` holding a small
``torch`` or ``rocm_sdk`` package (the commands and answers TheRock's ``rocm_sdk`` CLI and
torch document); expectations are hand-written."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from toolkit.core.errors import CommandFailed, EnvironmentProblem
from toolkit.env import rocm, torchprobe


def _python_with(tmp_path: Path, package: str, files: dict[str, str]) -> str:
    site = tmp_path / "site"
    for name, text in files.items():
        path = site / package / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    python = tmp_path / "bin" / "python"
    python.parent.mkdir(parents=True, exist_ok=True)
    python.write_text(f'#!/bin/sh\nPYTHONPATH={site} exec {sys.executable} -S "$@"\n')
    python.chmod(0o755)
    return str(python)


def test_torch_info_reads_version_hip_and_lib_folder(tmp_path: Path) -> None:
    python = _python_with(tmp_path, "torch", {
        "__init__.py": "__version__ = '2.8.0+rocm7.0'\nfrom . import version\n",
        "version.py": "hip = '7.0.51830'\n"})
    assert torchprobe.torch_info(python) == {
        "version": "2.8.0+rocm7.0", "hip": "7.0.51830", "lib": str(tmp_path / "site" / "torch" / "lib")}


def test_a_torch_that_does_not_import_is_named_with_its_last_line(tmp_path: Path) -> None:
    python = _python_with(tmp_path, "torch", {"__init__.py": "raise ImportError('libamdhip64.so.7: gone')\n"})
    with pytest.raises(EnvironmentProblem) as caught:
        torchprobe.torch_info(python)
    assert str(caught.value) == f"torch does not import in {python}: ImportError: libamdhip64.so.7: gone"
    assert caught.value.exit_code == 4


@pytest.mark.parametrize("tail", [
    "import os, sys\nsys.stdout = open(os.devnull, 'w')\n",  # prints nothing at all
    "import atexit\natexit.register(print, '[1, 2]')\n",  # last line JSON, but no object
    "import atexit\natexit.register(print, 'not json')\n"])
def test_a_torch_printing_no_facts_is_named(tmp_path: Path, tail: str) -> None:
    python = _python_with(tmp_path, "torch", {
        "__init__.py": "__version__ = '1'\nfrom . import version\n" + tail, "version.py": "hip = None\n"})
    with pytest.raises(EnvironmentProblem) as caught:
        torchprobe.torch_info(python)
    assert str(caught.value) == f"torch in {python} printed no version facts"
    assert caught.value.exit_code == 4


def test_torch_hip_mismatch_lines() -> None:
    assert torchprobe.check_torch_hip("2.8.0", "7.0.1", "7.0", "7.0.2", allow=False) is None
    with pytest.raises(EnvironmentProblem) as caught:
        torchprobe.check_torch_hip("2.7.0+rocm6.4", "6.4.43482", "7.0", "7.0.1", allow=False)
    assert caught.value.message == ("torch 2.7.0+rocm6.4 was built with HIP 6.4.43482 (6.4) but ROCm 7.0.1 "
                                    "needs HIP 7.0")
    assert caught.value.hint == "fix the torch source in rocm.toml, or pass --allow-rocm-mismatch"
    assert torchprobe.check_torch_hip("2.9.0+cpu", None, "6.4", "6.4.2", allow=True) == (
        "torch 2.9.0+cpu is not a ROCm build (torch.version.hip is None, a CPU/CUDA build); ROCm 6.4.2 "
        "needs torch built with HIP 6.4; continuing because of --allow-rocm-mismatch")


SDK_MAIN = """\
import sys
args = sys.argv[1:]
answers = {
    ("targets",): "gfx942;gfx950, gfx1100\\n",
    ("path", "--root"): "/sdk/root\\n",
    ("path", "--bin"): "/sdk/root/bin\\n",
    ("path", "--cmake"): "/sdk/root/lib/cmake\\n",
    ("version",): "7.0.1rc2\\n",
}
if tuple(args) not in answers:
    sys.stderr.write("usage: rocm_sdk {targets,path,version}\\nrocm_sdk: error: bad %r\\n" % (args,))
    sys.exit(2)
sys.stdout.write(answers[tuple(args)])
"""


def test_a_pip_sdk_is_described_through_its_own_cli(tmp_path: Path) -> None:
    python = _python_with(tmp_path, "rocm_sdk", {"__init__.py": "", "__main__.py": SDK_MAIN})
    assert rocm.describe_pip_sdk(python) == rocm.SdkInfo(
        root="/sdk/root", bin="/sdk/root/bin", cmake="/sdk/root/lib/cmake", version="7.0.1rc2",
        targets=("gfx942", "gfx950", "gfx1100"))


def test_a_failing_sdk_query_names_the_command_the_exit_code_and_the_last_line(tmp_path: Path) -> None:
    python = _python_with(tmp_path, "rocm_sdk", {"__init__.py": "", "__main__.py": SDK_MAIN})
    with pytest.raises(EnvironmentProblem) as caught:
        rocm._query(python, "path", "--lib")
    assert str(caught.value) == (f"`python -m rocm_sdk path --lib` failed in {python} (exit 2): "
                                 "rocm_sdk: error: bad ['path', '--lib']")


def test_an_interpreter_that_cannot_start_is_named(tmp_path: Path) -> None:
    missing = str(tmp_path / "no" / "python")
    with pytest.raises(EnvironmentProblem) as caught:
        rocm._query(missing, "version")
    assert str(caught.value) == f"cannot run {missing} -m rocm_sdk version: command not found"


def test_a_torch_whose_import_hangs_is_stopped_not_waited_for(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A torch whose import never ends (a driver call that blocks) must not hang the toolkit:
    the probe is stopped past its limit and the failure says it timed out (``CommandFailed``,
    ``timed_out``), naming the interpreter. Fault injection: the clock ``subprocess`` reads
    for its timeouts runs 1000 times fast, so a limit of minutes passes in a fraction of a
    second; the import below writes a line every 10 ms (waking the wait to look at that
    clock) and would end after 3 s real, almost an hour on that clock."""
    real = time.monotonic
    start = real()
    monkeypatch.setattr(subprocess, "_time", lambda: start + (real() - start) * 1000)
    python = _python_with(tmp_path, "torch", {
        "__init__.py": "import sys, time\nfor _ in range(300):\n"
                       "    print('.', file=sys.stderr, flush=True)\n    time.sleep(0.01)\n"
                       "__version__ = '2.8.0+rocm7.0'\nfrom . import version\n",
        "version.py": "hip = '7.0.51830'\n"})
    with pytest.raises(CommandFailed) as caught:
        torchprobe.torch_info(python)
    assert caught.value.timed_out and caught.value.argv[0] == python
    assert "timed out" in str(caught.value) and python in str(caught.value)
