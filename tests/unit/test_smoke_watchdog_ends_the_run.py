"""``smoke.run`` when the suite's watchdog ended pytest (a test stuck in native code): the
run is a ``TimedOut`` (exit 9, README's exit codes) naming the test and the per-test limit,
and CI still gets a JUnit XML with that test as an error, although pytest, ended by
``os._exit``, wrote none. The integration test (tests/integration/test_smoke_time_limits.py)
hangs a real test for this; here only pytest's process is played, as the watchdog in
``smoke_tests/conftest.py`` leaves things: its status file names the test with
``"hung": true`` and the exit code is its ``WATCHDOG_EXIT`` (9), read from that file."""

from __future__ import annotations

import json
import re
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import pytest

from toolkit.core.errors import CheckFailed, TimedOut
from toolkit.core.reporter import ListReporter
from toolkit.verify import smoke
from toolkit.verify.smoke_builds import SmokeTarget

BUILD = "hip_sample-0.1.0-cp311-rocm5.2"
HUNG = "test_runtime.py::test_kernel_runs[hip_sample-0.1.0-gfx90a]"
CONFTEST = (Path(smoke.__file__).resolve().parents[2] / "smoke_tests" / "conftest.py").read_text()
EXIT = re.search(r"^WATCHDOG_EXIT = ([0-9]+)", CONFTEST, re.M)


def _pytest_ended(code: int, hung: bool) -> Callable[..., tuple[int, str]]:
    """pytest's process as the suite leaves it: the status file, no JUnit, exit ``code``."""
    def run(argv: list[str], cwd: Path, env: dict[str, str], on_line: Callable[[str], None],
            timeout: float | None) -> tuple[int, str]:
        status = Path(argv[argv.index("--status-file") + 1])
        status.write_text(json.dumps({"test": HUNG, "limit": 2.0, "hung": hung}))
        on_line("smoke: ... did not stop; ending the run\n")
        return code, "smoke: ... did not stop; ending the run"
    return run


def _run(tmp_path: Path) -> None:
    manifest = {"build": {"id": BUILD, "package": "hip_sample", "version": "0.1.0",
                          "python": "3.11", "rocm": "5.2", "torch": ""},
                "recipe": "sample", "dist": "rocm-wheel-toolkit", "targets": ["gfx90a"],
                "expected_modules": ["json"], "outcome": "ok"}
    smoke.run(SmokeTarget(BUILD, manifest, Path(sys.prefix)), ["gfx90a"],
              junit=tmp_path / "kept.xml", reporter=ListReporter(), uv=str(tmp_path / "no-uv"),
              test_timeout=2.0)


def test_the_watchdogs_exit_is_a_time_out_naming_the_test_with_its_junit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert EXIT is not None
    monkeypatch.setattr(smoke, "_pytest", _pytest_ended(int(EXIT.group(1)), hung=True))
    with pytest.raises(TimedOut) as err:
        _run(tmp_path)
    assert err.value.exit_code == 9
    assert HUNG in err.value.message and BUILD in err.value.message
    assert "2 s" in err.value.message and "--test-timeout" in err.value.message
    cases = list(ET.parse(tmp_path / "kept.xml").getroot().iter("testcase"))
    assert [(c.get("name"), [x.tag for x in c]) for c in cases] == [
        ("test_kernel_runs[hip_sample-0.1.0-gfx90a]", ["error"])]


def test_another_exit_with_no_junit_is_no_time_out(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """pytest ended otherwise (exit 3: an internal error) while the status file names a test
    the watchdog did not mark: the run did not time out, and no JUnit means it did not run."""
    monkeypatch.setattr(smoke, "_pytest", _pytest_ended(3, hung=False))
    with pytest.raises(CheckFailed) as err:
        _run(tmp_path)
    assert "exit 3" in err.value.message
    assert not (tmp_path / "kept.xml").exists()
