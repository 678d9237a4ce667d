"""How a build's wheel is named: the toolkit's local version, or with ``--naming upstream``
the wheel's own version kept."""

from __future__ import annotations

from pathlib import Path

from toolkit.core.steps import ExpectWheel
from toolkit.data.matrix import load_matrix
from toolkit.env.host import HostFacts
from toolkit.plan.layout import Layout
from toolkit.plan.model import Options
from toolkit.plan.planner import plan

LAYOUT = Layout(Path("/w"), Path("/c"))


def test_upstream_naming_keeps_the_wheels_own_version() -> None:
    m = load_matrix()
    b = m.build("apex-1.8.0-cp312-rocm7.0")
    host = HostFacts(cores=16, mem_available_gib=64.0)
    kept = plan(m, b, Options(naming="upstream", gfx=("gfx942",)), host, LAYOUT)
    ours = plan(m, b, Options(gfx=("gfx942",)), host, LAYOUT)
    expect = kept.step("expect-wheel").action
    assert isinstance(expect, ExpectWheel)  # what apex's setup.py names it
    assert kept.step("name-wheel").description == (
        f"name the wheel apex-{expect.version}-... in the build's staging folder (the upstream name kept)")
    mine = ours.step("name-wheel").description
    assert mine.startswith("name the wheel apex-1.8.0+") and expect.version not in mine and "kept" not in mine
