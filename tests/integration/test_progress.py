"""How a build shows its progress: a live status on a terminal, log groups in CI, plain lines
when piped; the build log is the same in every mode.

Real runs of `nox -s demo` and `python -m toolkit demo`: on a real pseudo-terminal (``pty.openpty``) with a
compile held at the gate (``tests.fixtures.gate``), so the live status is seen while
build-wheel is silent; with ``CI=true`` and piped for a ``--source`` project whose C file
does not compile (fails fast). The words checked are the ones GitHub Actions reads
(``::group::``, ``::endgroup::``, ``::error::``; docs.github.com, workflow commands).
"""

from __future__ import annotations

import os
import pty
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.fixtures.gate import Gate

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def base_env(tmp_path: Path) -> dict[str, str]:
    env = {**os.environ, "TOOLKIT_CACHE_DIR": str(tmp_path / "cache"), "TERM": "xterm",
           "COLUMNS": "120", "LINES": "40"}
    for var in ("CI", "GITHUB_ACTIONS", "TOOLKIT_HEARTBEAT", "NO_COLOR"):
        env.pop(var, None)
    return env


def broken_project(root: Path) -> Path:
    """A setuptools C extension with a syntax error: build-wheel fails in about a second."""
    root.mkdir(parents=True)
    (root / "setup.py").write_text(
        "from setuptools import Extension, setup\n\n"
        "setup(name='broken_ext', version='0.1.0', "
        "ext_modules=[Extension('broken_ext', ['broken.c'])])\n")
    (root / "broken.c").write_text("int broken(void) {\n    return 1 +;\n}\n")
    return root


def demo_argv(work: Path, *args: str, cpu: bool = True) -> list[str]:
    return [sys.executable, "-m", "toolkit", "demo", *(["--cpu"] if cpu else []), "--no-smoke",
            "--workdir", str(work), *args]


# the gate wraps the compiler launcher, which the toolkit sets for the HIP build (hipcc)
needs_hipcc = pytest.mark.skipif(shutil.which("hipcc") is None,
                                 reason="needs hipcc (Debian: apt-get install hipcc): the gate "
                                        "holds the sample's HIP build")


class Terminal:
    """A child on a real pseudo-terminal; everything it writes, kept as it arrives."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path) -> None:
        master, slave = pty.openpty()
        self.proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env,
                                     cwd=cwd, start_new_session=True)
        os.close(slave)
        self.master = master
        self.data = b""
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        while True:
            try:
                chunk = os.read(self.master, 65536)
            except OSError:  # EIO: every writer closed the terminal
                return
            if not chunk:
                return
            self.data += chunk

    def text(self) -> str:
        return self.data.decode(errors="replace")

    def wait_for(self, pattern: re.Pattern[str], timeout: float = 60) -> list[str]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = pattern.findall(self.text())
            if found:
                return found
            time.sleep(0.1)
        pytest.fail(f"{pattern.pattern!r} never appeared on the terminal:\n{self.text()[-3000:]}")

    def finish(self, timeout: float = 300) -> int:
        code = self.proc.wait(timeout=timeout)
        self.reader.join(timeout=10)
        os.close(self.master)
        return code


@needs_hipcc
def test_a_terminal_shows_a_live_status_while_a_compile_is_held(tmp_path: Path,
                                                                  gate: Gate) -> None:
    env = gate.env(base_env(tmp_path))
    # `nox -s demo` (the session of the README), on a terminal
    term = Terminal([sys.executable, "-m", "nox", "-s", "demo", "--", "--no-smoke",
                     "--workdir", str(tmp_path / "work")], env, ROOT)
    try:
        gate.wait_reached(term.proc)  # build-wheel is inside a compile that cannot finish
        # the status line names the step and counts the time while the step prints nothing
        status = re.compile(r"\[\d+/\d+\] build-wheel  running 0m(\d\d)s")
        term.wait_for(re.compile(r"\[\d+/\d+\] build-wheel  running 0m0[2-9]s"), timeout=30)
        seen = {int(s) for s in status.findall(term.text())}
        assert len(seen) >= 2, seen  # refreshed: at least two elapsed times shown
    finally:
        gate.release()
    code = term.finish()
    out = term.text()
    assert code == 0, out[-3000:]
    # removed cleanly: the last status render is erased, then the usual one-line result
    last = out.rindex("build-wheel  running")
    assert "\x1b[2K" in out[last:]
    lines = [ANSI.sub("", x).strip("\r") for x in out.split("\n")]
    assert any(re.fullmatch(r"\[\d+/\d+\] build-wheel\s+ok\s+\d+\.\ds", x) for x in lines), lines


def test_ci_groups_each_steps_output_and_marks_the_failed_step(tmp_path: Path) -> None:
    project = broken_project(tmp_path / "broken")
    env = {**base_env(tmp_path), "CI": "true"}
    proc = subprocess.run(demo_argv(tmp_path / "work", "--source", str(project)), cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=300)
    out = proc.stdout
    assert proc.returncode == 5, out[-3000:] + proc.stderr[-2000:]
    lines = out.splitlines()
    opened = [i for i, x in enumerate(lines) if x.startswith("::group::")]
    closed = [i for i, x in enumerate(lines) if x == "::endgroup::"]
    assert opened and len(opened) == len(closed)
    for start, end in zip(opened, closed, strict=True):
        assert start < end and not any(x.startswith("::group::") for x in lines[start + 1:end])
        name = lines[start].split("] ", 1)[1]
        # the step's result line comes right after its group closes
        assert re.match(rf"\[\d+/\d+\] {re.escape(name)}\s", lines[end + 1]), lines[end + 1]
    build = next(i for i in opened if lines[i].endswith("] build-wheel"))
    inside = lines[build:closed[opened.index(build)]]
    assert any("broken.c:2:" in x and "error:" in x for x in inside), inside
    # no line of a step's output is outside its group
    assert not any("broken.c:2:" in x for x in lines[:build])
    errors = [x for x in lines if x.startswith("::error::")]
    assert errors == [lines[closed[opened.index(build)] + 2]], errors  # after the FAILED line
    assert errors[0].startswith("::error::step 'build-wheel' failed (exit 1): ")
    assert "%0A" not in errors[0] and "\n" not in errors[0]  # one line


def test_github_escaping_of_an_error_message() -> None:
    from toolkit.cli.console import github_escape

    # docs.github.com: % -> %25, CR -> %0D, LF -> %0A in workflow command data
    assert github_escape("50% done\r\nnext\x1b[2J") == "50%25 done%0D%0Anext\\x1b[2J"


def test_piped_output_has_no_escape_sequences_and_the_log_is_the_same(tmp_path: Path) -> None:
    project = broken_project(tmp_path / "broken")
    work = tmp_path / "work"
    env = base_env(tmp_path)
    logs = {}
    # a first run makes the environment: the runs compared below all find it made
    for mode, extra in (("first", {}), ("piped", {}), ("ci", {"CI": "true"})):
        proc = subprocess.run(demo_argv(work, "--source", str(project)), cwd=ROOT,
                              env={**env, **extra}, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 5, proc.stdout[-3000:]
        if mode == "piped":
            assert "\x1b" not in proc.stdout + proc.stderr
            assert "::" not in proc.stdout
            assert re.search(r"^\[\d+/\d+\] build-wheel\s+FAILED", proc.stdout, re.M)
        (found,) = work.glob("artifacts/*/build.log")
        logs[mode] = found.read_bytes()
    term = Terminal(demo_argv(work, "--source", str(project)), env, ROOT)
    assert term.finish() == 5
    assert "\x1b[" in term.text()  # it was a terminal: rich drew there
    (found,) = work.glob("artifacts/*/build.log")
    logs["terminal"] = found.read_bytes()
    def timeless(log: bytes) -> str:  # wall-clock times (uv's "in 2ms") differ run to run
        return re.sub(rb"\b\d+(\.\d+)?(ms|s)\b", b"<time>", log).decode()

    assert logs["piped"] != logs["first"]  # the comparison sees a difference of state
    for mode in ("ci", "terminal"):
        assert timeless(logs[mode]) == timeless(logs["piped"]), mode
    assert b"broken.c:2:15: error: expected expression" in logs["piped"]


@needs_hipcc
def test_piped_long_step_says_it_is_still_running(tmp_path: Path, gate: Gate) -> None:
    env = {**gate.env(base_env(tmp_path)), "TOOLKIT_HEARTBEAT": "1"}
    proc = subprocess.Popen(demo_argv(tmp_path / "work", cpu=False), cwd=ROOT, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        gate.wait_reached(proc)
        time.sleep(2.5)  # the compile is held: build-wheel prints nothing meanwhile
    finally:
        gate.release()
    out, _ = proc.communicate(timeout=300)
    assert proc.returncode == 0, out[-3000:]
    assert re.search(r"^still running: build-wheel \(\d+s\)$", out, re.M), out[-3000:]
    assert "\x1b" not in out
