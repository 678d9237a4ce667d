"""The signature of the slower real tools' failures: pip, pytest, a setuptools build,
nvcc and hipcc (about a second each). The expected lines are written by hand as pip 24,
pytest 8, gcc 12, nvcc 13 and Debian's hipcc (ROCm 5.2, clang 15) print them."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from tests.fixtures.native import hipcc
from tests.fixtures.wheels import make_wheel
from tests.unit.test_signature import GCC_SYNTAX, SYNTAX, copy_of, output
from toolkit.run.signature import compare, signature

pytestmark = pytest.mark.integration

PIP = [sys.executable, "-m", "pip", "install", "--dry-run", "--no-index"]


def test_pip_finds_no_version(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    lines = output([*PIP, "--find-links", "empty", "nosuchpkg>=1"], cwd=tmp_path)
    assert signature(lines) == [
        "ERROR: Could not find a version that satisfies the requirement nosuchpkg>=1 "
        "(from versions: none)",
        "ERROR: No matching distribution found for nosuchpkg>=1"]


def test_pip_resolution_impossible(tmp_path: Path) -> None:
    wh = tmp_path / "wh"
    make_wheel(wh, "aa", "1.0", "py3-none-any", {"aa/__init__.py": ""}, requires=["cc==1.0"])
    make_wheel(wh, "bb", "1.0", "py3-none-any", {"bb/__init__.py": ""}, requires=["cc==2.0"])
    for version in ("1.0", "2.0"):
        make_wheel(wh, "cc", version, "py3-none-any", {"cc/__init__.py": ""})
    lines = output([*PIP, "--find-links", "wh", "aa", "bb"], cwd=tmp_path,
                   env={"PYTHONUNBUFFERED": "1"})
    assert signature(lines) == [
        "ERROR: Cannot install aa==1.0 and bb==1.0 because these package versions have "
        "conflicting dependencies.",
        "The conflict is caused by: aa 1.0 depends on cc==1.0 bb 1.0 depends on cc==2.0",
        "ERROR: ResolutionImpossible: for help visit https://pip.pypa.io/en/latest/topics/"
        "dependency-resolution/#dealing-with-dependency-conflicts"]


def test_pytest_failing_ids(tmp_path: Path) -> None:
    (tmp_path / "test_x.py").write_text(
        "import pytest\n\ndef test_ok():\n    pass\n\ndef test_bad():\n    assert 1 == 2\n\n"
        "@pytest.mark.parametrize('v', ['a - b', 'c'])\ndef test_p(v):\n    assert v == 'c'\n")
    lines = output([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "test_x.py"],
                   cwd=tmp_path)
    assert "FAILED test_x.py::test_bad - assert 1 == 2" in lines
    assert signature(lines) == ["FAILED test_x.py::test_bad", "FAILED test_x.py::test_p[a - b]"]


def test_pytest_collection_error(tmp_path: Path) -> None:
    (tmp_path / "test_y.py").write_text("import nosuchmod\n")
    lines = output([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "test_y.py"],
                   cwd=tmp_path)
    assert signature(lines) == ["ERROR test_y.py"]


SETUP = ('from setuptools import setup, Extension\n'
         'setup(name="badext", version="0.1", ext_modules=[Extension("badext", ["csrc/bad.cpp"])])\n')


def test_a_setuptools_build_in_two_work_folders(tmp_path: Path) -> None:
    """What the toolkit's build-wheel step runs (pypa/build, no isolation) in two source
    copies: the same one line, without setuptools' and pypa/build's wrappers."""
    sigs = []
    for work in ("a", "bb/cc"):
        root, src = copy_of(tmp_path, work, {"setup.py": SETUP, "csrc/bad.cpp": SYNTAX})
        lines = output([sys.executable, "-m", "build", "--wheel", "--no-isolation"], cwd=src)
        assert "ERROR Backend subprocess exited when trying to invoke build_wheel" in lines
        sigs.append(signature(lines, paths={"workdir": str(root)}, source=str(src)))
    assert sigs[0] == sigs[1] == [GCC_SYNTAX]


def _compile(tmp_path: Path, work: str, argv: list[str], name: str, code: str,
             env: dict[str, str] | None = None) -> list[str]:
    root, src = copy_of(tmp_path, work, {f"csrc/{name}": code})
    lines = output([*argv, "-c", str(src / "csrc" / name), "-o", str(root / "k.o")], cwd=root,
                   env=env)
    return signature(lines, paths={"workdir": str(root)}, source=str(src))


UNDECLARED = "__global__ void k(int *p) {\n  p[0] = y;\n}\n"


def test_nvcc_error_line(tmp_path: Path) -> None:
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc is not installed")
    one = _compile(tmp_path, "a", [nvcc], "k.cu", UNDECLARED)
    two = _compile(tmp_path, "b/c", [nvcc], "k.cu", UNDECLARED)
    assert one == two == ['csrc/k.cu(2): error: identifier "y" is undefined']


@pytest.mark.hipcc
def test_hipcc_for_amd_error_line(tmp_path: Path) -> None:
    exe = hipcc()
    if exe is None:
        pytest.skip("hipcc is not installed")
    argv = [exe, "--offload-arch=gfx90a"]
    env = {"HIP_PLATFORM": "amd"}
    one = _compile(tmp_path, "a", argv, "k.hip", UNDECLARED, env)
    two = _compile(tmp_path, "b/c", argv, "k.hip", UNDECLARED, env)
    assert one == two == ["csrc/k.hip:2:10: error: use of undeclared identifier 'y'"]
    assert compare(one, two).same


@pytest.mark.hipcc
def test_hipcc_without_a_target_behind_rocm_agent_enumerator_s_traceback(tmp_path: Path) -> None:
    """No GPU and no --offload-arch: ROCm 5.2's hipcc runs rocm_agent_enumerator, whose
    traceback (no /sys/class/kfd) comes before clang's error; the compiler's line wins."""
    exe = hipcc()
    if exe is None or not os.path.exists("/usr/bin/rocm_agent_enumerator") \
            or os.path.exists("/sys/class/kfd/kfd/topology/nodes"):
        pytest.skip("needs ROCm 5.2's hipcc on a machine without an AMD GPU driver")
    root, src = copy_of(tmp_path, "a", {"csrc/bad.cpp": "int main() {\n  int x = 1\n}\n"})
    lines = output([exe, "-c", str(src / "csrc" / "bad.cpp"), "-o", "/dev/null"], cwd=root,
                   env={"HIP_PLATFORM": "amd"})
    assert "Traceback (most recent call last):" in lines
    assert signature(lines, source=str(src)) == ["csrc/bad.cpp:2:12: error: expected ';' at end "
                                                 "of declaration"]
