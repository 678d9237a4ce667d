"""Smoke's time limits with a real hung test: `python -m toolkit smoke` in a real environment.

The environment (uv) holds a tiny real wheel, ``hang_sample``; the suite is a copy of the
smoke suite's own ``conftest.py`` and ``pytest.ini`` with one test file whose tests hang as
``HANG`` says: ``python`` (``time.sleep``: SIGALRM can interrupt it), ``native`` (SIGALRM
blocked, as a test stuck in a GPU driver call never returns to Python) or not at all. The CLI
runs for real; only where it finds the suite is swapped (``suite_dir``), so no test file is
added to the repository. Each hang must end in one line naming the test and the limit,
exit 9 (README, `toolkit smoke --help`), with the hung test recorded in the JUnit XML.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.doubles.sdk import write_wheel
from toolkit.verify.smoke import suite_dir

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
CP = f"cp{sys.version_info.major}{sys.version_info.minor}"
BUILD_ID = f"hang_sample-0.1.0-{CP}-cpu"
HANG_TESTS = '''"""TEST DOUBLE suite: tests that hang as $HANG says."""
import os
import signal
import time

HANG = os.environ.get("HANG", "")


def test_first(build):
    pass


def test_hangs(build):
    if HANG == "python":
        time.sleep(3600)
    if HANG == "native":  # SIGALRM never reaches Python: as a call stuck in a driver
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
        time.sleep(3600)
    if HANG == "total":
        time.sleep(3600)


def test_after(build):
    pass
'''
DRIVER = ("import sys; from pathlib import Path; import toolkit.verify.smoke as s; "
          "s.suite_dir = lambda: Path(sys.argv[1]); from toolkit.cli.main import main; "
          "sys.exit(main(sys.argv[2:]))")


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, str]]:
    base = tmp_path_factory.mktemp("smoke-limits")
    uv = shutil.which("uv") or str(Path(sys.executable).parent / "uv")
    env_dir = base / "env"
    subprocess.run([uv, "venv", "-q", "--python", sys.executable, str(env_dir)], check=True)
    wheel = write_wheel(base / "w", "hang_sample", "0.1.0",
                        {"hang_sample/__init__.py": '"""TEST DOUBLE: nothing inside."""\n'},
                        summary="TEST DOUBLE for smoke's time limits", tag="py3-none-any")
    subprocess.run([uv, "pip", "install", "-q", "--python", str(env_dir / "bin" / "python"),
                    str(wheel), "pytest", "packaging", "zstandard"], check=True)
    suite = base / "suite"
    suite.mkdir()
    for name in ("conftest.py", "pytest.ini", "__init__.py"):
        shutil.copy2(suite_dir() / name, suite / name)
    (suite / "test_hang.py").write_text(HANG_TESTS)
    work = base / "work"
    manifest = work / "artifacts" / BUILD_ID / "manifest.json"
    manifest.parent.mkdir(parents=True)
    manifest.write_text(json.dumps({
        "build": {"id": BUILD_ID, "package": "hang_sample", "version": "0.1.0",
                  "python": f"{sys.version_info.major}.{sys.version_info.minor}",
                  "rocm": "cpu", "torch": ""},
        "recipe": "sample", "dist": "hang_sample", "targets": ["gfx90a"],
        "env_dir": str(env_dir), "expected_modules": ["hang_sample"], "outcome": "ok"}))
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    for var in ("CI", "GITHUB_ACTIONS", "TOOLKIT_SMOKE_TEST_TIMEOUT", "TOOLKIT_SMOKE_TIMEOUT"):
        env.pop(var, None)
    return suite, work, env


def smoke(setup: tuple[Path, Path, dict[str, str]], hang: str, junit: Path,
          *args: str) -> tuple[int, str, float]:
    suite, work, env = setup
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", DRIVER, str(suite), "smoke", "--workdir",
                           str(work), "--build", BUILD_ID, "--junit", str(junit), *args],
                          cwd=ROOT, env={**env, "HANG": hang}, capture_output=True, text=True,
                          timeout=300)
    return proc.returncode, proc.stdout + proc.stderr, time.monotonic() - start


def junit_cases(path: Path) -> dict[str, list[str]]:
    return {tc.get("name", ""): [c.tag for c in tc]
            for tc in ET.parse(path).getroot().iter("testcase")}


def error_lines(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith("error: ")]


def test_no_hang_passes_within_the_limits(setup: tuple[Path, Path, dict[str, str]],
                                          tmp_path: Path) -> None:
    code, out, _ = smoke(setup, "", tmp_path / "j.xml", "--test-timeout", "5", "--timeout", "120")
    assert code == 0, out[-3000:]
    assert junit_cases(tmp_path / "j.xml") == {
        "test_first[hang_sample-0.1.0]": [], "test_hangs[hang_sample-0.1.0]": [],
        "test_after[hang_sample-0.1.0]": []}


def test_a_sleeping_test_fails_at_its_limit_and_the_run_goes_on(
        setup: tuple[Path, Path, dict[str, str]], tmp_path: Path) -> None:
    code, out, secs = smoke(setup, "python", tmp_path / "j.xml", "--test-timeout", "2")
    assert code == 9, out[-3000:]
    assert secs < 60, secs  # the test sleeps for an hour
    assert error_lines(out) == [
        f"error: smoke test test_hang.py::test_hangs[hang_sample-0.1.0] of {BUILD_ID} timed out "
        "after 2 s (the per-test limit, --test-timeout)"], out[-3000:]
    assert "Traceback" not in out.split("short test summary")[-1]
    cases = junit_cases(tmp_path / "j.xml")
    assert cases["test_hangs[hang_sample-0.1.0]"] == ["failure"]
    assert cases["test_after[hang_sample-0.1.0]"] == []  # the run went on


def test_a_test_stuck_in_native_code_ends_the_run_naming_it(
        setup: tuple[Path, Path, dict[str, str]], tmp_path: Path) -> None:
    code, out, secs = smoke(setup, "native", tmp_path / "j.xml", "--test-timeout", "2")
    assert code == 9, out[-3000:]
    assert secs < 60, secs
    assert error_lines(out) == [
        f"error: smoke test test_hang.py::test_hangs[hang_sample-0.1.0] of {BUILD_ID} timed out "
        "after 2 s (the per-test limit, --test-timeout)"], out[-3000:]
    assert junit_cases(tmp_path / "j.xml") == {"test_hangs[hang_sample-0.1.0]": ["error"]}


def test_the_total_limit_stops_the_run_naming_the_running_test(
        setup: tuple[Path, Path, dict[str, str]], tmp_path: Path) -> None:
    code, out, secs = smoke(setup, "total", tmp_path / "j.xml", "--test-timeout", "0",
                            "--timeout", "8")
    assert code == 9, out[-3000:]
    assert secs < 60, secs
    assert error_lines(out) == [
        f"error: the smoke run of {BUILD_ID} timed out after 8 s (the total limit, --timeout), "
        "in test test_hang.py::test_hangs[hang_sample-0.1.0]"], out[-3000:]
    assert junit_cases(tmp_path / "j.xml") == {"test_hangs[hang_sample-0.1.0]": ["error"]}
    # the environment variable is the default of the option
    code, out, _ = smoke(setup, "", tmp_path / "k.xml", "--timeout", "soon")
    assert code == 2 and error_lines(out) == [
        "error: --timeout: not a number of seconds: 'soon' (give e.g. 600; 0: no limit; also "
        "from TOOLKIT_SMOKE_TIMEOUT)"], out[-3000:]


def test_smoke_help_documents_the_limits_and_exit_9() -> None:
    proc = subprocess.run([sys.executable, "-m", "toolkit", "smoke", "--help"], cwd=ROOT,
                          capture_output=True, text=True, env={**os.environ, "COLUMNS": "200"})
    text = " ".join(proc.stdout.split())
    assert "--test-timeout S" in text and "--timeout S" in text
    assert "9 a test or the run passed its time limit" in text



PAIR_DRIVER = ("import sys; from pathlib import Path; import toolkit.verify.smoke as s; "
               "s.suite_dir = lambda: Path(sys.argv[1]); "
               "from toolkit.cli.commands.smoke import run_pair; "
               "from toolkit.core.errors import ToolkitError\n"
               "try:\n    sys.exit(run_pair(sys.argv[2], 'cpu', sys.argv[3:]))\n"
               "except ToolkitError as err:\n    print('error: ' + str(err))\n"
               "    sys.exit(err.exit_code)\n")


def test_the_pair_session_body_gives_exit_9_for_a_hang_too(
        setup: tuple[Path, Path, dict[str, str]], tmp_path: Path) -> None:
    """``nox -s smoke-<py>-rocm<rocm>``'s body: a hung test of any build is exit 9, in one
    line naming the test and the limit (not a generic failure, exit 1)."""
    suite, work, env = setup
    python = f"{sys.version_info.major}.{sys.version_info.minor}"
    proc = subprocess.run([sys.executable, "-c", PAIR_DRIVER, str(suite), python, "--workdir",
                           str(work), "--test-timeout", "2"],
                          cwd=ROOT, env={**env, "HANG": "python"}, capture_output=True,
                          text=True, timeout=300)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 9, out[-3000:]
    assert error_lines(out)[-1].endswith(
        "timed out after 2 s (the per-test limit, --test-timeout)"), out[-3000:]


def test_the_pair_session_names_every_hung_build_in_its_one_line(
        setup: tuple[Path, Path, dict[str, str]], tmp_path: Path) -> None:
    """Two builds of the pair (a second manifest, another package name over the same
    distribution and environment), each with a hung test:
    the one exit-9 line names each build's hung test and limit, in build order, joined by
    "; " as the other one-line errors join their parts."""
    suite, work, env = setup
    twin = f"hang_twin-0.1.0-{CP}-cpu"
    copy = tmp_path / "work"
    shutil.copytree(work / "artifacts" / BUILD_ID, copy / "artifacts" / BUILD_ID)
    data = json.loads((copy / "artifacts" / BUILD_ID / "manifest.json").read_text())
    data["build"].update(id=twin, package="hang_twin")  # its id is its fields' (dist: the same)
    (copy / "artifacts" / twin).mkdir()
    (copy / "artifacts" / twin / "manifest.json").write_text(json.dumps(data))
    python = f"{sys.version_info.major}.{sys.version_info.minor}"
    proc = subprocess.run([sys.executable, "-c", PAIR_DRIVER, str(suite), python, "--workdir",
                           str(copy), "--test-timeout", "2"],
                          cwd=ROOT, env={**env, "HANG": "python"}, capture_output=True,
                          text=True, timeout=300)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 9, out[-3000:]
    line = error_lines(out)[-1]
    limit = "timed out after 2 s (the per-test limit, --test-timeout)"
    assert f" of {BUILD_ID} {limit}; smoke test " in line, line
    assert line.endswith(f" of {twin} {limit}"), line
