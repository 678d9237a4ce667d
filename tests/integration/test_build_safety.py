"""A build never loses a good wheel: failed checks, concurrent runs and interrupts.

Each test works in its own copy of the repository's working tree (the toolkit imported from
that copy through PYTHONPATH, so a test may edit the bundled sample) with its own work
folder and cache, and runs the real ``nox -s demo``. A test that races a second run or a
signal against a build holds the build at a gate (``tests.fixtures.gate``): it acts only once
a compile of ``build-wheel`` is waiting for it, so the outcome never depends on how fast the
machine or ccache is.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures.gate import Gate
from tests.fixtures.nox_runs import toolkit_code

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.integration


def _tracked_copy(dest: Path) -> Path:
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT,
                           capture_output=True, text=True, check=True).stdout.split("\n")
    for name in filter(None, files):
        src = ROOT / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    return dest


@pytest.fixture
def clone(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    repo = _tracked_copy(tmp_path / "clone")
    env = {**os.environ, "PYTHONPATH": str(repo), "TOOLKIT_CACHE_DIR": str(tmp_path / "cache"),
           "CI": "true"}
    env.pop("UPDATE_GOLDENS", None)
    return repo, env


def demo(repo: Path, env: dict[str, str], *args: str, **kw: object) -> subprocess.Popen[str]:
    argv = [sys.executable, "-m", "nox", "-f", str(repo / "noxfile.py"), "-s", "demo", "--",
            "--workdir", str(repo), *args]
    kw.setdefault("preexec_fn", default_sigint)
    proc: subprocess.Popen[str] = subprocess.Popen(  # type: ignore[call-overload]
        argv, cwd=repo, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)
    return proc


def default_sigint() -> None:
    """In the child: SIGINT at its default, as in a terminal's foreground job, whatever this
    process inherited (a suite started as a background job passes SIGINT ignored)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def finish(proc: subprocess.Popen[str], timeout: float = 600) -> tuple[int, str]:
    out, _ = proc.communicate(timeout=timeout)
    return proc.returncode, out


def wheels(repo: Path) -> list[Path]:
    return sorted((repo / "dist").glob("*/*.whl"))


def manifest(repo: Path) -> dict[str, object]:
    (path,) = list((repo / "artifacts").glob("*/manifest.json"))
    return json.loads(path.read_text())  # type: ignore[no-any-return]


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_failed_check_keeps_the_earlier_wheel(clone: tuple[Path, dict[str, str]]) -> None:
    repo, env = clone
    code, out = finish(demo(repo, env, "--no-smoke"))
    assert code == 0, out[-3000:]
    (good,) = wheels(repo)
    before = sha256(good)
    setup = repo / "toolkit" / "examples" / "hip_extension" / "setup.py"
    text = setup.read_text()
    assert 'language="c++")' in text
    leak = 'language="c++", extra_link_args=["-Wl,-rpath,/home/leak/lib"])'
    setup.write_text(text.replace('language="c++")', leak, 1))
    code, out = finish(demo(repo, env, "--no-smoke"))
    assert toolkit_code(code, out) == 1, out[-3000:]  # a check failed: the documented exit code 1
    assert "Traceback" not in out
    assert "/home/leak/lib" in out
    assert wheels(repo) == [good] and sha256(good) == before  # untouched, alone in its folder
    kept = [line for line in out.splitlines() if "kept for inspection at" in line]
    assert kept, out[-3000:]
    staged = Path(kept[0].split("kept for inspection at ", 1)[1].strip())
    assert staged.is_file() and staged.parent != good.parent
    m = manifest(repo)
    assert m["outcome"] == "failed" and m["failed_step"] == "check"


def test_a_second_demo_is_refused_while_the_first_builds(
        clone: tuple[Path, dict[str, str]], gate: Gate) -> None:
    repo, env = clone
    env = gate.env(env)
    first = demo(repo, env, "--no-smoke")
    gate.wait_reached(first)  # the first holds the build lock and is compiling
    c2, o2 = finish(demo(repo, env, "--no-smoke"), timeout=300)
    assert toolkit_code(c2, o2) == 6 and "is busy: held by pid" in o2, o2[-3000:]
    assert f"held by pid {first.pid} " in o2, o2[-3000:]  # names the holder (nox runs the demo)
    assert len([ln for ln in o2.splitlines() if ln.startswith("error:")]) == 1, o2[-3000:]
    assert "Traceback" not in o2
    assert wheels(repo) == []
    gate.release()
    c1, o1 = finish(first)
    assert c1 == 0 and "Traceback" not in o1, o1[-3000:]
    assert manifest(repo)["outcome"] == "ok"
    (wheel,) = wheels(repo)
    check = subprocess.run([sys.executable, "-m", "toolkit", "check", str(wheel)], cwd=repo,
                           env=env, capture_output=True, text=True, timeout=300)
    assert check.returncode == 0, check.stdout + check.stderr


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_interrupt_during_build_then_recover(clone: tuple[Path, dict[str, str]], gate: Gate,
                                             sig: signal.Signals) -> None:
    repo, env = clone
    proc = demo(repo, gate.env(env), "--no-smoke", "--rebuild", start_new_session=True)
    gate.wait_reached(proc)  # a compile of build-wheel is running and cannot finish
    # SIGINT to the group is Ctrl-C in a terminal; SIGTERM to the group is a CI cancel
    os.killpg(proc.pid, sig)
    code, out = finish(proc)
    assert code == 130, out[-3000:]  # the documented exit code for an interrupted run
    m = manifest(repo)
    assert m["outcome"] == "interrupted" and m["failed_step"] == "build-wheel", m
    assert wheels(repo) == []
    gate.release()
    code, out = finish(demo(repo, env, "--no-smoke"))
    assert code == 0, out[-3000:]
    assert manifest(repo)["outcome"] == "ok"
    assert len(wheels(repo)) == 1


def test_sigterm_to_the_toolkit_alone_stops_the_whole_build(
        clone: tuple[Path, dict[str, str]], gate: Gate) -> None:
    """`kill PID`, a supervisor or a CI step timeout signals the toolkit's process only: the
    build backend and its compilers must stop with it, not keep writing into the build folder
    after the run ended and its lock was released."""
    repo, env = clone
    proc = demo(repo, gate.env(env), "--no-smoke", "--rebuild", start_new_session=True)
    compile_pid = int(gate.wait_reached(proc).split()[0])
    os.kill(proc.pid, signal.SIGTERM)
    code, out = finish(proc)
    assert code == 130, out[-3000:]
    assert manifest(repo)["outcome"] == "interrupted"
    assert gate.wait_gone(compile_pid), f"the compile (pid {compile_pid}) outlived the toolkit"
