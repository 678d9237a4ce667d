"""`nox -s demo -- --variants` (issue 31): the gfx90a and gfx908 wheel variants published beside
the fat wheel, judged by independent tools: the real ``variantlib`` CLI accepts each, LLVM's
``clang-offload-bundler`` lists the one target each carries, rocm-bootstrap names its owner (the
label), ``variantlib generate-index-json`` writes the index JSON ``toolkit index`` writes, and
a variant whose label its code does not back fails the check."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.fixtures.native import bundler_list, hipcc, section
from toolkit.run.variant_wheels import make_variant

pytestmark = [pytest.mark.integration, pytest.mark.hipcc]
ROOT = Path(__file__).resolve().parents[2]
VARIANTLIB = str(Path(sys.executable).parent / "variantlib")


def _toolkit(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "toolkit", *args], capture_output=True,
                          text=True, timeout=300, env=env, check=False)


def _carried(wheel: Path, tmp: Path) -> list[str]:
    """The targets of the offload bundle in the wheel's extension, as LLVM lists them."""
    with zipfile.ZipFile(wheel) as zf:
        (so,) = [n for n in zf.namelist() if n.endswith(".so")]
        lib = tmp / wheel.name / "lib.so"
        lib.parent.mkdir(parents=True)
        lib.write_bytes(zf.read(so))
    off, size = section(lib, ".hip_fatbin")
    ids = bundler_list(lib.read_bytes()[off:off + size], lib.parent)
    return sorted(i.split("--", 1)[1] for i in ids if "amdgcn" in i)


@pytest.mark.skipif(hipcc() is None, reason="hipcc is not installed")
def test_demo_variants_are_published_labelled_and_judged(tmp_path: Path) -> None:
    from rocm_bootstrap.package_metadata import group_package_targets

    env = {**os.environ, "TOOLKIT_CACHE_DIR": str(tmp_path / "cache"), "CI": "true"}
    res = subprocess.run([sys.executable, "-m", "nox", "-s", "demo", "--", "--variants",
                          "--no-smoke", "--workdir", str(tmp_path / "work")],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-2000:]
    (dist,) = (tmp_path / "work" / "dist").iterdir()
    wheels = sorted(p.name for p in dist.glob("*.whl"))
    fat = next(n for n in wheels if n.endswith("linux_x86_64.whl"))
    assert wheels == sorted([fat, fat[:-4] + "-gfx908.whl", fat[:-4] + "-gfx90a.whl"])
    assert _carried(dist / fat, tmp_path) == ["gfx908", "gfx90a"]
    for label in ("gfx90a", "gfx908"):
        wheel = dist / f"{fat[:-4]}-{label}.whl"
        analyzed = subprocess.run([VARIANTLIB, "analyze-wheel", "-i", str(wheel)],
                                  capture_output=True, text=True, timeout=120, check=False)
        assert analyzed.returncode == 0, analyzed.stderr
        assert f"amd :: gfx_arch :: {label}" in analyzed.stdout
        (target,) = _carried(wheel, tmp_path)  # one target's code only
        assert list(group_package_targets([target])) == [label]  # rocm-bootstrap's owner
    # the index JSON, as variantlib writes it for the same folder
    theirs = tmp_path / "theirs"
    shutil.copytree(dist, theirs)
    subprocess.run([VARIANTLIB, "generate-index-json", "-d", str(theirs)], check=True,
                   capture_output=True, timeout=120)
    assert _toolkit("index", str(tmp_path / "work" / "dist")).returncode == 0
    (doc,) = theirs.glob("*-variants.json")
    assert (dist / doc.name).read_text() == doc.read_text()
    # which wheel each GPU gets
    python = f"{sys.version_info.major}.{sys.version_info.minor}"
    for gpu, expect in (("gfx90a", f"{fat[:-4]}-gfx90a.whl"), ("gfx908", f"{fat[:-4]}-gfx908.whl"),
                        ("gfx1100", fat)):
        picked = _toolkit("variants", str(dist), "--python", python,
                          env={**os.environ, "ROCM_BOOTSTRAP_FORCE_GFX_ARCH": gpu})
        assert picked.returncode == 0 and picked.stdout.splitlines()[0] == expect, picked.stderr
    # the failing path: gfx908's code under the gfx90a label
    plain = tmp_path / "plain" / fat
    plain.parent.mkdir()
    shutil.copy(dist / f"{fat[:-4]}-gfx908.whl", plain)
    liar = make_variant(plain, tmp_path / "liar", "gfx90a")
    judged = _toolkit("check", str(liar))
    assert judged.returncode == 1, judged.stdout
    assert "names amd :: gfx_arch :: gfx90a but the wheel carries no GPU code for it" in judged.stdout
