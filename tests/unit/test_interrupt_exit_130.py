"""Ctrl-C is exit 130 (README "Exit codes": 130 interrupted (Ctrl-C, SIGTERM); "nox ... exits 1
at the end (130 when interrupted)"), without a build: a real ``python -m toolkit`` process and a
real nox session, each interrupted by a real SIGINT while its body waits. The integration tests
(tests/integration/test_build_safety.py) interrupt real builds."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

NOXFILE = textwrap.dedent('''
    import os, sys, time
    import nox
    from toolkit.cli.sessions import _guard
    from toolkit.cli.running import Finished

    @nox.session(python=False)
    def waits(session):
        def body():
            print("ready", flush=True)
            time.sleep(60)
        _guard(session, body)

    @nox.session(python=False)
    def finished_interrupted(session):
        def body():
            raise Finished(Finished.INTERRUPTED, "interrupted")
        _guard(session, body)

    @nox.session(python=False)
    def after(session):
        print("the session after ran", flush=True)
''')


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _interrupt_when_ready(argv: list[str], cwd: Path) -> tuple[int, str]:
    # as a terminal's foreground job: SIGINT at its default, whatever this process inherited (a
    # background job, or an xdist worker, ignores it, and a child starts with it ignored)
    proc = subprocess.Popen(argv, cwd=cwd, env=_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True,
                            preexec_fn=_default_sigint)
    assert proc.stdout is not None
    seen = []
    for line in proc.stdout:  # the body has started: its line is out (no sleeping, no polling)
        seen.append(line)
        if "ready" in line:
            break
    else:
        proc.wait(timeout=60)
        pytest.fail(f"exited ({proc.returncode}) before its body started:\n{''.join(seen)}")
    os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C in a terminal signals the foreground group
    out, _ = proc.communicate(timeout=60)
    return proc.returncode, "".join(seen) + out


def test_ctrl_c_in_a_nox_session_is_exit_130_and_stops_nox(tmp_path: Path) -> None:
    (tmp_path / "noxfile.py").write_text(NOXFILE)
    code, out = _interrupt_when_ready([sys.executable, "-m", "nox", "-s", "waits", "after"], tmp_path)
    assert code == 130, out
    assert "the session after ran" not in out and "Traceback" not in out, out


def test_a_body_that_finished_interrupted_is_exit_130(tmp_path: Path) -> None:
    (tmp_path / "noxfile.py").write_text(NOXFILE)
    res = subprocess.run([sys.executable, "-m", "nox", "-s", "finished_interrupted", "after"],
                         cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=120)
    assert res.returncode == 130, res.stdout + res.stderr
    assert "the session after ran" not in res.stdout + res.stderr
