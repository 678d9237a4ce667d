"""An index or find-links location that cannot be reached: exit 8 (README "Exit codes"), one
line naming it masked, and a hint naming what applies. Real loopback sockets: a port bound
then closed (nothing listens: connection refused) next to the real local index of the SDK
doubles; through ``python -m toolkit provision`` and a real nox build session."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.doubles.fixtures import local_index, sandbox, toolkit, uv_cache  # noqa: F401
from tests.fixtures.net import dead_port
from tests.fixtures.nox_runs import failure
from toolkit.core.errors import EnvironmentProblem
from toolkit.env.rocm import find_system

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]



def system_rocm(env: dict[str, str]) -> str | None:
    """The `--rocm-from system` words the hint must carry on this machine, or None."""
    try:
        found = find_system({**os.environ, **env}, want="7.0")
    except EnvironmentProblem:
        return None
    other = "" if found.version.split(".")[:2] == ["7", "0"] else \
        ", not 7.0: add --allow-rocm-mismatch"
    return f"--rocm-from system (ROCm {found.version} is at {found.root}{other})"


def one_error_line(proc: subprocess.CompletedProcess[str]) -> str:
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1 and "Traceback" not in proc.stderr, proc.stderr
    return errors[0]


def test_unreachable_index_is_exit_8_and_names_index_url(sandbox: dict[str, str]) -> None:  # noqa: F811
    port = dead_port()
    proc = toolkit("provision", "sample-1.0.0-cp312-rocm7.0", "--workdir", sandbox["WORK"],
                   "--index-url", f"http://ci:hunter2@127.0.0.1:{port}/v2/", env=sandbox)
    assert proc.returncode == 8, proc.stderr
    line = one_error_line(proc)
    assert f"cannot reach ROCm SDK index http://***@127.0.0.1:{port}/v2/gfx94X-dcgpu/" in line
    assert "--index-url URL (or set TOOLKIT_ROCM_INDEX_URL)" in line
    assert "--find-links" not in line
    system = system_rocm(sandbox)
    assert (system in line) if system else ("--rocm-from system" not in line), line
    assert "hunter2" not in proc.stdout + proc.stderr


def test_unreachable_find_links_is_exit_8_and_names_find_links(sandbox: dict[str, str]) -> None:  # noqa: F811
    port = dead_port()  # the index (the local one, from the data) is up; the page is not
    proc = toolkit("provision", "sample-1.0.0-cp312-rocm7.0", "--workdir", sandbox["WORK"],
                   "--find-links", f"http://tok:s3cret@127.0.0.1:{port}/links/", env=sandbox)
    assert proc.returncode == 8, proc.stderr
    line = one_error_line(proc)
    assert f"cannot reach find-links location http://***@127.0.0.1:{port}/links/" in line
    assert "--find-links PATH" in line and "--index-url" not in line
    system = system_rocm(sandbox)
    assert (system in line) if system else ("--rocm-from system" not in line), line
    assert "s3cret" not in proc.stdout + proc.stderr


def test_a_nox_session_of_three_builds_probes_the_dead_index_once(
        sandbox: dict[str, str]) -> None:  # noqa: F811
    """build-3.11-rocm7.0 builds sample 1.0.0, 0.9.0 and 2.0.0 (three environments, one SDK
    index): the first build probes it; the others are told its verdict."""
    port = dead_port()
    work = Path(sandbox["WORK"])
    res = subprocess.run(
        [sys.executable, "-m", "nox", "-s", "build-3.11-rocm7.0", "--", "--rocm-from", "pip",
         "--index-url", f"http://127.0.0.1:{port}/v2/", "--package", "sample", "--gfx",
         "gfx942", "--workdir", str(work), "--no-smoke"],
        cwd=ROOT, env={**os.environ, **sandbox, "CI": "true"}, capture_output=True, text=True,
        timeout=600)
    out = res.stdout + res.stderr
    assert res.returncode == 1 and "Traceback" not in out, out[-3000:]
    message, code = failure(res.stderr)
    assert code == 8, message
    assert message.startswith("3 of 3 builds failed: ") and message.count(" at probe-indexes") == 3
    where = f"ROCm SDK index http://127.0.0.1:{port}/v2/gfx94X-dcgpu/"
    logs = [p.read_text() for p in sorted((work / "artifacts").glob("*/build.log"))]
    assert len(logs) == 3
    probed = [log for log in logs if f"# probe {where}\n" in log]
    told = [log for log in logs if f"# probe {where}: unreachable (probed earlier in this run)"
            in log]
    assert len(probed) == 1 and len(told) == 2
    assert out.count(f"cannot reach {where}") >= 3  # each build says why it failed
