"""The torch/ROCm consistency tests of the smoke suite, in a real environment of TEST DOUBLES.

The environment holds the torch double (``torch.version.hip`` as a ROCm build reports it),
TheRock's ``rocm_sdk`` double (``rocm-sdk test``) and a pure-Python stand-in for
``fbgemm_gpu-rocm`` (its ``__variant__`` and torch compatibility table, no native code).
The smoke run must fail exactly what is wrong with that environment, and say why.
"""

from __future__ import annotations

import io
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.doubles.sdk import write_torch, write_wheel
from toolkit.cli.commands.smoke import show
from toolkit.core.reporter import ListReporter
from toolkit.data.matrix import load_matrix
from toolkit.verify.smoke import SmokeOutcome, SmokeTarget, manifest_for_id, run

pytestmark = pytest.mark.integration

PY = f"{sys.version_info.major}.{sys.version_info.minor}"
BUILD = next((b for b in load_matrix().builds
              if b.package.name == "fbgemm_gpu" and b.python == PY), None)
ROCM_SDK_MAIN = '''import sys
if sys.argv[1:] == ["test"]:
    print("TEST DOUBLE rocm-sdk test: ok"); sys.exit(0)
sys.exit(2)
'''


def fbgemm_double(out: Path, version: str, torch_minor: str) -> Path:
    minor = ".".join(version.split(".")[:2])
    return write_wheel(out, "fbgemm_gpu-rocm", version, {
        "fbgemm_gpu/__init__.py": (
            '"""TEST DOUBLE of fbgemm_gpu: no native code, no ops."""\nimport torch\n'
            f"__version__ = {version!r}\n__variant__ = 'rocm'\n"
            f"_fbgemm_torch_compat_table = {{{minor!r}: {torch_minor!r}}}\n"),
    }, summary="TEST DOUBLE of fbgemm_gpu-rocm", tag="py3-none-any")


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if BUILD is None:
        pytest.skip(f"the matrix has no fbgemm_gpu build for Python {PY}")
    uv = shutil.which("uv") or str(Path(sys.executable).parent / "uv")
    base = tmp_path_factory.mktemp("smoke-doubles")
    env = base / "env"
    subprocess.run([uv, "venv", "-q", "--python", sys.executable, str(env)], check=True)
    wheels = [
        write_torch(base / "w", f"{BUILD.pkg_version.torch}.0+rocm{BUILD.rocm.version}",
                    f"{BUILD.rocm.hip}.51830-testdouble"),
        fbgemm_double(base / "w", BUILD.version, BUILD.pkg_version.torch),
        write_wheel(base / "w", "rocm-sdk-core", "7.0.0", {
            "rocm_sdk/__init__.py": '"""TEST DOUBLE of TheRock\'s rocm_sdk."""\n',
            "rocm_sdk/__main__.py": ROCM_SDK_MAIN}, summary="TEST DOUBLE of rocm_sdk"),
    ]
    subprocess.run([uv, "pip", "install", "-q", "--python", str(env / "bin" / "python"),
                    *map(str, wheels)], check=True)
    return env


def smoke(env: Path, *targets: str) -> tuple[SmokeOutcome, dict[str, tuple[str, str]], str]:
    assert BUILD is not None
    manifest = manifest_for_id(BUILD.id, env)
    assert manifest is not None
    out = io.StringIO()
    result = run(SmokeTarget(BUILD.id, manifest, env), targets, out=out)
    cases = {c.name.split("::")[1].split("[")[0] + (
        "[" + c.name.split("[", 1)[1] if "op_registered" in c.name else ""):
        (c.outcome, c.message.splitlines()[0] if c.message else "") for c in result.cases}
    show([result], out)
    return result, cases, out.getvalue()


def test_matching_environment(env: Path) -> None:
    result, cases, text = smoke(env, "gfx942")
    assert cases["test_torch_is_the_builds"][0] == "passed"
    assert cases["test_torch_hip_matches_rocm"][0] == "passed"
    assert cases["test_recorded_torch_matches_installed"][0] == "passed"
    assert cases["test_rocm_sdk_selftest"][0] == "passed"
    assert cases["test_fbgemm_variant"][0] == "passed"
    assert cases["test_import"][0] == "passed"
    # what the double lacks is reported, not hidden: no ops, no native library
    assert BUILD is not None
    outcome, message = cases[f"test_fbgemm_op_registered[fbgemm_gpu-{BUILD.version}-jagged_2d_to_dense]"]
    assert outcome == "failed" and message.startswith("torch.ops.fbgemm.jagged_2d_to_dense is not registered")
    assert cases["test_gpu_code_for_target"] == (
        "failed", "AssertionError: fbgemm_gpu-rocm installed no native library")
    assert not result.ok and "Traceback" not in text


def test_mismatched_hip_and_torch(env: Path, tmp_path: Path) -> None:
    assert BUILD is not None
    uv = shutil.which("uv") or str(Path(sys.executable).parent / "uv")
    wrong = write_torch(tmp_path, "2.13.0+rocm9.9", "9.9.1-testdouble")
    subprocess.run([uv, "pip", "install", "-q", "--reinstall", "--python",
                    str(env / "bin" / "python"), str(wrong)], check=True)
    try:
        _, cases, _ = smoke(env, "gfx942")
    finally:
        good = write_torch(tmp_path, f"{BUILD.pkg_version.torch}.0+rocm{BUILD.rocm.version}",
                           f"{BUILD.rocm.hip}.51830-testdouble")
        subprocess.run([uv, "pip", "install", "-q", "--reinstall", "--python",
                        str(env / "bin" / "python"), str(good)], check=True)
    assert cases["test_torch_hip_matches_rocm"] == ("failed", (
        f"AssertionError: torch.version.hip is 9.9.1-testdouble, but the environment's ROCm "
        f"{BUILD.rocm.version} has HIP {BUILD.rocm.hip}"))
    outcome, message = cases["test_torch_is_the_builds"]
    assert outcome == "failed" and message.startswith(
        f"AssertionError: torch 2.13.0+rocm9.9 is installed; {BUILD.id} was built for torch "
        f"{BUILD.pkg_version.torch}")
    outcome, message = cases["test_recorded_torch_matches_installed"]
    assert outcome == "failed" and "fbgemm_gpu._fbgemm_torch_compat_table" in message



def test_without_a_stream_everything_goes_to_the_reporter(
        env: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """The library prints nothing: pytest's output goes to ``reporter.output`` then."""
    assert BUILD is not None
    manifest = manifest_for_id(BUILD.id, env)
    assert manifest is not None
    reporter = ListReporter()
    result = run(SmokeTarget(BUILD.id, manifest, env), ("gfx942",), reporter=reporter)
    assert capfd.readouterr() == ("", "")
    assert result.cases and any("test_consistency.py" in line for line in reporter.lines)
    assert any(line.startswith("=") and "passed" in line for line in reporter.lines)
