"""`nox -s demo -- --cpu`: the sample's CPU variant, said plainly, checks pass."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]


def test_cpu_variant_is_said_plainly_and_passes(tmp_path: Path) -> None:
    env = {**os.environ, "TOOLKIT_CACHE_DIR": str(tmp_path / "cache"), "CI": "true"}
    res = subprocess.run([sys.executable, "-m", "nox", "-s", "demo", "--", "--cpu", "--no-smoke",
                          "--workdir", str(tmp_path / "work")],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-2000:]
    assert "--cpu: building the CPU variant of the sample, as asked" in res.stdout
    assert "no ROCm/HIP compiler" not in res.stdout  # hipcc may well be here: say what is true
    wheels = list((tmp_path / "work" / "dist").glob("*/*.whl"))
    assert len(wheels) == 1 and "+cpugit" in wheels[0].name, wheels
    check = subprocess.run([sys.executable, "-m", "toolkit", "check", str(wheels[0]), "--json"],
                           capture_output=True, text=True)
    assert check.returncode == 0, check.stdout
    assert '"gpu_targets": []' in check.stdout
    # the identity digest the build recorded is the one its plan gives on any other host
    # (another work folder, cache, interpreter and source path), without building
    from toolkit.plan.model import Options
    from toolkit.plan.recipes import load_matrix
    from toolkit.plan.recipes.sample import DEMO_TARGETS, demo_build
    from toolkit.run.identity import plan_digest
    from toolkit.verify.changed import CANONICAL_LAYOUT, build_plan
    from toolkit.verify.published import read_published

    python = f"{sys.version_info.major}.{sys.version_info.minor}"
    elsewhere = build_plan(load_matrix(), demo_build(python, None),
                           Options(gfx=DEMO_TARGETS, rocm_from="system",
                                   source="/elsewhere/hip_extension", smoke=False))
    published = read_published(str(tmp_path / "work" / "artifacts"))
    assert published.digests == {plan_digest(elsewhere, CANONICAL_LAYOUT)}, published
