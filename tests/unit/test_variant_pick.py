"""`python -m toolkit variants DIR --gfx G --python 3.N` (issue 31): the wheel a variant-aware
installer picks, ordered by the real variantlib and rocm-bootstrap's provider, told the GPU by
``ROCM_BOOTSTRAP_FORCE_GFX_ARCH``. The expected picks are written out by hand."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures.wheels import make_wheel
from toolkit.run.variant_wheels import make_variant

pytest.importorskip("variantlib")
pytest.importorskip("rocm_bootstrap")

BASE = "hip_sample-1.0+rocm6.4gitabcdef12-cp312-cp312-linux_x86_64"


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("variants")
    src = make_wheel(tmp / "in", "hip_sample", "1.0+rocm6.4gitabcdef12",
                     "cp312-cp312-linux_x86_64", {"hip_sample/__init__.py": "x = 1\n"})
    folder = tmp / "dist"
    for target in ("gfx90a", "gfx908"):
        make_variant(src, folder, target)
    shutil.copy(src, folder / src.name)  # the fat wheel
    return folder


def _toolkit(*args: str, force: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ROCM_BOOTSTRAP_")}
    if force is not None:
        env["ROCM_BOOTSTRAP_FORCE_GFX_ARCH"] = force
    return subprocess.run([sys.executable, "-m", "toolkit", "variants", *args],
                          capture_output=True, text=True, timeout=180, env=env, check=False)


@pytest.mark.parametrize(("gpu", "wheel"), [
    ("gfx90a", f"{BASE}-gfx90a.whl"),
    ("gfx908", f"{BASE}-gfx908.whl"),
    ("gfx1100", f"{BASE}.whl"),  # no variant: the fat wheel
])
def test_the_detected_gpu_picks(dist: Path, gpu: str, wheel: str) -> None:
    """The GPU as the plugin detects it (the environment variable, no --gfx)."""
    res = _toolkit(str(dist), "--python", "3.12", force=gpu)
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines()[0] == wheel


@pytest.mark.parametrize(("gpu", "wheel"), [
    ("gfx908", f"{BASE}-gfx908.whl"),
    ("gfx90a:xnack-", f"{BASE}-gfx90a.whl"),  # the owner of gfx90a:xnack- is gfx90a
])
def test_gfx_option_tells_the_provider(dist: Path, gpu: str, wheel: str) -> None:
    res = _toolkit(str(dist), "--gfx", gpu, "--python", "3.12", force="gfx1100")
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines()[0] == wheel


def test_the_reason_line_names_the_gpu_the_variant_and_variantlibs_order(dist: Path) -> None:
    """Under the wheel: the GPU asked for, the variant picked as its property (``amd ::
    gfx_arch :: gfx90a``, the label the variant wheel was made with), then the labels in the
    order variantlib ranked them: the variant that fits, and the null variant (the wheel
    without a label) last."""
    res = _toolkit(str(dist), "--gfx", "gfx90a", "--python", "3.12", force="gfx1100")
    assert res.returncode == 0, res.stderr
    why = res.stdout.splitlines()[1]
    assert why.startswith("  GPU gfx90a: variant gfx90a (amd :: gfx_arch :: gfx90a); ")
    assert why.endswith("; variantlib's order: gfx90a, null")


def test_no_gpu_here_gets_the_fat_wheel(dist: Path) -> None:
    res = _toolkit(str(dist), "--python", "3.12")  # this machine has no GPU
    assert res.returncode == 0 and res.stdout.splitlines()[0] == f"{BASE}.whl", res.stderr


def test_none_fits_without_a_fat_wheel(dist: Path, tmp_path: Path) -> None:
    only = tmp_path / "only"
    only.mkdir()
    for wheel in dist.glob("*-gfx*.whl"):
        shutil.copy(wheel, only / wheel.name)
    res = _toolkit(str(only), "--gfx", "gfx1100", "--python", "3.12")
    assert res.returncode == 1 and res.stdout == ""
    assert "no wheel in" in res.stderr and "fits GPU gfx1100 and Python 3.12" in res.stderr


def test_another_python_gets_nothing(dist: Path) -> None:
    res = _toolkit(str(dist), "--gfx", "gfx90a", "--python", "3.11")
    assert res.returncode == 1 and "Python 3.11" in res.stderr


@pytest.mark.parametrize(("args", "word"), [
    (["--gfx", "sm_90", "--python", "3.12"], "bad gfx target id"),
    (["--gfx", "gfx90a", "--python", "twelve"], "not a Python version"),
    (["--gfx", "gfx1234", "--python", "3.12"], "rocm-bootstrap knows no such GPU"),
])
def test_bad_input_is_one_line_exit_2(dist: Path, args: list[str], word: str) -> None:
    res = _toolkit(str(dist), *args)
    assert res.returncode == 2 and word in res.stderr and "Traceback" not in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1, res.stderr


def test_a_missing_folder_says_to_give_the_folder_of_the_wheels(tmp_path: Path) -> None:
    """docs/command-line.md: "`DIR`: folder holding the wheels, e.g. dist/<build-id>"."""
    from toolkit.core.errors import UsageError
    from toolkit.verify.variant_pick import pick

    missing = tmp_path / "nowhere"
    with pytest.raises(UsageError) as err:
        pick(missing, "gfx90a", "3.12")
    assert err.value.exit_code == 2 and str(missing) in err.value.message
    assert "no such folder" in err.value.message
    assert "the wheels" in err.value.message and "dist/<build-id>" in err.value.message


def test_no_wheel_for_the_python_is_exit_1_before_any_gpu_is_asked(dist: Path) -> None:
    """docs/command-line.md: "exit 1 when none fits". No wheel of DIR is for Python 3.11, so
    none fits whatever the GPU: the provider is never asked to order the variants (as an
    installer, which orders only the wheels its Python can install), so even a GPU
    rocm-bootstrap does not know (gfx1234: exit 2 when a wheel is for the Python, see
    test_bad_input_is_one_line_exit_2) gives the no-wheel answer, naming the Python."""
    from toolkit.core.errors import CheckFailed
    from toolkit.verify.variant_pick import pick

    with pytest.raises(CheckFailed) as err:
        pick(dist, "gfx1234", "3.11")
    assert err.value.exit_code == 1
    assert "no wheel in" in err.value.message and "Python 3.11" in err.value.message
