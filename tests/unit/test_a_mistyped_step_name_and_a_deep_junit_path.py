"""Two small promises a user leans on: a step name given wrong (``--from``/``--only``) is
refused naming every step and the nearest ones (README: "did you mean"), and the smoke run's
JUnit copy goes where ``--junit`` says, folders made as needed (as pytest's own
``--junit-xml`` does)."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolkit.core.errors import UsageError
from toolkit.env.host import HostFacts
from toolkit.plan.layout import Layout
from toolkit.plan.model import Options
from toolkit.plan.planner import plan
from toolkit.plan.recipes import load_matrix
from toolkit.verify import smoke


def test_a_mistyped_step_is_refused_with_every_step_and_the_nearest() -> None:
    m = load_matrix()
    build = next(b for b in m.builds if b.package.name == "apex")
    p = plan(m, build, Options(), HostFacts(cores=2, mem_available_gib=8.0),
             Layout(Path("/w"), Path("/c")), toolkit_python="/t/python")
    names = [s.name for s in p.steps]
    assert "build-wheel" in names
    with pytest.raises(UsageError) as err:
        p.step("biuld-wheel")
    assert err.value.message == f"unknown step 'biuld-wheel'; valid: {', '.join(names)}"
    assert err.value.nearest is not None and "build-wheel" in err.value.nearest
    assert "did you mean" in err.value.line and err.value.line.endswith("?")


def test_the_junit_copy_makes_its_folders(tmp_path: Path) -> None:
    report = tmp_path / "report.xml"
    report.write_bytes(b"<testsuites/>")
    kept = smoke._keep_junit(report, tmp_path / "a" / "b" / "junit.xml")
    assert kept == tmp_path / "a" / "b" / "junit.xml"
    assert kept.read_bytes() == b"<testsuites/>"
