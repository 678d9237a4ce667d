"""Code built for a generic GPU target (``gfx9-4-generic`` ...) runs on every target it covers,
for every target TheRock builds, and on no other.

Two independent statements, written out here by hand:

- TheRock's targets and families: ROCm/TheRock@418cd5f63 (tag therock-7.14)
  cmake/therock_amdgpu_targets.cmake, the ``therock_add_amdgpu_target(gfxN ... FAMILY ...)``
  lines (checked against the mirror below when ``TOOLKIT_UPSTREAM_DIR`` holds it);
- which processors a generic processor covers: LLVM's AMDGPUUsage, table "AMDGPU Generic
  Processors" (gfx9-generic: gfx900 gfx902 gfx904 gfx906 gfx909 gfx90c; gfx9-4-generic: gfx940
  gfx941 gfx942 gfx950; gfx10-1-generic: gfx1010-gfx1013; gfx10-3-generic: gfx1030-gfx1036;
  gfx11-generic: gfx1100-gfx1103, gfx1150-gfx1153; gfx12-generic: gfx1200 gfx1201;
  gfx12-5-generic: gfx1250 gfx1251). gfx908 and gfx90a have no generic processor.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from toolkit.core.gfx import parse_target
from toolkit.inspect.rules.gpu import code_runs_on

# ROCm/TheRock@418cd5f63 cmake/therock_amdgpu_targets.cmake: family -> its targets
THEROCK_FAMILIES = {
    "gfx900-dgpu": ("gfx900",), "gfx90c-igpu": ("gfx90c",), "gfx906-dgpu": ("gfx906",),
    "gfx908-dcgpu": ("gfx908",), "gfx90a-dcgpu": ("gfx90a",),
    "gfx94X-dcgpu": ("gfx942",), "gfx950-dcgpu": ("gfx950",),
    "gfx101X-dgpu": ("gfx1010", "gfx1011", "gfx1012"),
    "gfx103X-all": ("gfx1030", "gfx1031", "gfx1032", "gfx1033", "gfx1034", "gfx1035", "gfx1036"),
    "gfx110X-all": ("gfx1100", "gfx1101", "gfx1102", "gfx1103"),
    "gfx115X-all": ("gfx1150", "gfx1151", "gfx1152", "gfx1153"),
    "gfx120X-all": ("gfx1200", "gfx1201"),
    "gfx125X-all": ("gfx1250",),
}
# LLVM AMDGPUUsage "AMDGPU Generic Processors": the generic processor of each target above
GENERIC_OF = {
    "gfx900": "gfx9-generic", "gfx90c": "gfx9-generic", "gfx906": "gfx9-generic",
    "gfx942": "gfx9-4-generic", "gfx950": "gfx9-4-generic",
    **{t: "gfx10-1-generic" for t in ("gfx1010", "gfx1011", "gfx1012")},
    **{f"gfx103{i}": "gfx10-3-generic" for i in range(7)},
    **{t: "gfx11-generic" for t in ("gfx1100", "gfx1101", "gfx1102", "gfx1103",
                                    "gfx1150", "gfx1151", "gfx1152", "gfx1153")},
    "gfx1200": "gfx12-generic", "gfx1201": "gfx12-generic",
    "gfx1250": "gfx12-5-generic",
}
GENERICS = sorted(set(GENERIC_OF.values()))
TARGETS = sorted({t for ts in THEROCK_FAMILIES.values() for t in ts})


@pytest.mark.parametrize("family", sorted(THEROCK_FAMILIES))
def test_a_generic_target_runs_on_every_member_of_the_families_it_covers(family: str) -> None:
    for target in THEROCK_FAMILIES[family]:
        device = parse_target(target)
        runs = {g for g in GENERICS if code_runs_on(g, device)}
        want = {GENERIC_OF[target]} if target in GENERIC_OF else set()
        assert runs == want, (family, target, runs)


@pytest.mark.parametrize("generic", GENERICS)
def test_each_generic_target_runs_on_no_target_it_does_not_cover(generic: str) -> None:
    covered = {t for t in TARGETS if GENERIC_OF.get(t) == generic}
    assert covered  # every generic above covers a TheRock target
    assert {t for t in TARGETS if code_runs_on(generic, parse_target(t))} == covered


def test_a_generic_target_keeps_its_features() -> None:
    # LLVM: a generic code object's xnack/sramecc settings must match the device's
    assert code_runs_on("gfx9-4-generic:xnack+", parse_target("gfx942:xnack+"))
    assert not code_runs_on("gfx9-4-generic:xnack+", parse_target("gfx942:xnack-"))
    assert code_runs_on("gfx9-4-generic", parse_target("gfx942:xnack-"))


def _mirror() -> Path:
    base = os.environ.get("TOOLKIT_UPSTREAM_DIR")
    repo = Path(base or "/nonexistent") / "ROCm+TheRock" / "repo"
    if not repo.is_dir():
        pytest.skip("needs TOOLKIT_UPSTREAM_DIR with ROCm+TheRock")
    return repo


def test_the_hand_written_families_are_therocks_at_the_tag() -> None:
    text = subprocess.run(["git", "-C", str(_mirror()), "show",
                           "418cd5f63:cmake/therock_amdgpu_targets.cmake"],
                          capture_output=True, text=True, check=True).stdout
    found: dict[str, set[str]] = {}
    for target, families in re.findall(r'therock_add_amdgpu_target\((gfx\w+) "[^"]*" FAMILY ([^\n)]*)',
                                       text):
        for fam in families.split():
            found.setdefault(fam, set()).add(target)
    for family, targets in THEROCK_FAMILIES.items():
        assert found.get(family) == set(targets), (family, found.get(family))
    assert {t for ts in found.values() for t in ts} == set(TARGETS)
