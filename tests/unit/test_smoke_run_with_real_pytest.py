"""``smoke.run`` end to end with the real pytest in a real environment (this test's own
virtual environment, where the toolkit's distribution is installed): the suite is run from
its scratch folder, its lines streamed, its JUnit XML kept where asked. The truths are
pytest's own: its exit codes (1: tests failed; "Exit codes" in pytest's documentation), the
JUnit XML it writes (``<testsuite tests= failures=>``, read here with ElementTree) and its
summary line. One run, two tests selected with ``-k``: one that passes here, one that fails
(``json`` is no module of the environment's site-packages)."""

from __future__ import annotations

import io
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from toolkit.core.reporter import ListReporter
from toolkit.verify import smoke
from toolkit.verify.smoke_builds import SmokeTarget

BUILD = "hip_sample-0.1.0-cp311-rocm5.2"


def test_the_suite_runs_with_the_given_options_and_its_junit_is_kept(tmp_path: Path) -> None:
    manifest = {"build": {"id": BUILD, "package": "hip_sample", "version": "0.1.0",
                          "python": "3.11", "rocm": "5.2", "torch": ""},
                "recipe": "sample", "dist": "rocm-wheel-toolkit", "targets": ["gfx90a"],
                "expected_modules": ["json"], "outcome": "ok"}
    target = SmokeTarget(BUILD, manifest, Path(sys.prefix))
    out, reporter = io.StringIO(), ListReporter()
    junit = tmp_path / "kept" / "smoke.xml"
    result = smoke.run(target, ["gfx90a"], junit=junit, reporter=reporter, out=out,
                       uv=str(tmp_path / "no-uv"),  # nothing is missing: uv never runs
                       extra=["-k", "test_runs_in_build_environment or json"])
    assert (result.build_id, result.targets, result.returncode) == (BUILD, ("gfx90a",), 1)
    assert [(c.name, c.outcome) for c in result.cases] == [
        ("test_imports.py::test_runs_in_build_environment[hip_sample-0.1.0]", "passed"),
        ("test_imports.py::test_import[hip_sample-0.1.0-json]", "failed")]
    assert not result.ok
    assert "json was imported from" in result.cases[1].message
    assert result.junit == junit
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("2", "1", "0")
    text = out.getvalue()
    assert "1 failed, 1 passed" in text and "deselected" in text
    assert "\x1b[" not in text  # a StringIO is no terminal: no colour asked
    assert text.endswith("\n")
    assert reporter.lines == [] or all("installing" not in str(x) for x in reporter.lines)
