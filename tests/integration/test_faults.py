"""Faults while building or publishing: one line naming the path and the cause, the right
exit code, a manifest that says ``failed`` (or, when it cannot be written, a next run that
says so and recovers), and nothing lost in dist/.

A full disk (ENOSPC) and a read-only dist/ (EROFS) are injected at the OS boundary by the
test double ``tests/faults/sitecustomize.py`` (as root, chmod makes nothing read-only); a
file where a folder should be and a lock path that is a folder are real.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures.gate import Gate
from tests.fixtures.nox_runs import failures, toolkit_code
from toolkit.run.manifest_schema import SCHEMA_VERSION

ROOT = Path(__file__).resolve().parents[2]
FAULTS = ROOT / "tests" / "faults"
pytestmark = pytest.mark.integration


def demo(work: Path, env: dict[str, str], *args: str,
         faults: str = "") -> subprocess.CompletedProcess[str]:
    env = {**env, "TOOLKIT_TEST_FAULTS": faults}
    if faults:
        env["PYTHONPATH"] = os.pathsep.join([str(FAULTS), str(ROOT)])
    return subprocess.run([sys.executable, "-m", "nox", "-f", str(ROOT / "noxfile.py"), "-s",
                           "demo", "--", "--workdir", str(work), "--no-smoke", "--cpu", *args],
                          cwd=Path(env["TOOLKIT_CACHE_DIR"]).parent, env=env,
                          capture_output=True, text=True, timeout=900)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    base = tmp_path_factory.mktemp("faults")
    env = {**os.environ, "TOOLKIT_CACHE_DIR": str(base / "cache"), "CI": "true",
           "PYTHONPATH": str(ROOT)}
    work = base / "work"
    res = demo(work, env)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-2000:]
    return work, env


def _dist(work: Path) -> dict[str, str]:
    return {str(p.relative_to(work)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in (work / "dist").rglob("*") if p.is_file()}


def _manifest(work: Path) -> dict[str, object]:
    (path,) = (work / "artifacts").glob("*/manifest.json")
    data: dict[str, object] = json.loads(path.read_text())
    return data


def _one_line_error(res: subprocess.CompletedProcess[str]) -> str:
    out = res.stdout + res.stderr
    assert "Traceback" not in out, out[-3000:]
    errors = [ln for ln in out.splitlines() if ln.startswith("error:")]  # a build's own line
    errors += [f"error: {message}" for message, _ in failures(out).values()]  # the session's
    assert errors, out[-3000:]
    return errors[0]


@pytest.mark.parametrize("fault, cause", [
    ("replace:/dist/:EROFS", "Read-only file system (EROFS)"),
    ("copyfile:/dist/:ENOSPC", "No space left on device (ENOSPC)"),
])
def test_publish_fault_is_one_line_exit_5_manifest_failed_dist_kept(
        built: tuple[Path, dict[str, str]], fault: str, cause: str) -> None:
    work, env = built
    before = _dist(work)
    res = demo(work, env, faults=fault)
    assert toolkit_code(res.returncode, res.stderr) == 5, res.stdout[-3000:] + res.stderr[-2000:]
    line = _one_line_error(res)
    assert "publish" in line and cause in line and "/dist/" in line, line
    manifest = _manifest(work)
    assert manifest["outcome"] == "failed" and manifest["failed_step"] == "publish"
    assert cause in str(manifest["error"])
    assert _dist(work) == before  # the earlier wheel, byte for byte, and no half copy


def test_manifest_that_cannot_be_written_is_recovered_by_the_next_run(
        built: tuple[Path, dict[str, str]]) -> None:
    work, env = built
    before = _dist(work)
    # the start ("running") is written, the end cannot be: a disk that filled up meanwhile
    res = demo(work, env, faults="replace:manifest.json:ENOSPC:1")
    out = res.stdout + res.stderr
    assert toolkit_code(res.returncode, res.stderr) == 5 and "Traceback" not in out, out[-3000:]
    assert "could not record the outcome" in out and "ENOSPC" in out
    assert _manifest(work)["outcome"] == "running"
    again = demo(work, env)
    out = again.stdout + again.stderr
    assert again.returncode == 0, out[-3000:]
    assert "still says 'running'" in out
    assert _manifest(work)["outcome"] == "ok"
    assert set(_dist(work)) == set(before)


def test_bad_folders_are_exit_2_in_one_line(built: tuple[Path, dict[str, str]],
                                            tmp_path: Path) -> None:
    work, env = built
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    cases = [
        (dict(env), a_file, "a file is in the way"),
        (dict(env), a_file / "sub", "Not a directory (ENOTDIR)"),
        ({**env, "TOOLKIT_CACHE_DIR": str(a_file)}, tmp_path / "w1", "a file is in the way"),
        (dict(env), tmp_path / ("x" * 5000), "File name too long (ENAMETOOLONG)"),
    ]
    for e, folder, why in cases:
        res = demo(folder, e)
        assert toolkit_code(res.returncode, res.stderr) == 2, (folder, res.stdout[-2000:],
                                                              res.stderr[-2000:])
        line = _one_line_error(res)
        assert why in line, line
        assert len(line) < 600, line  # a 5,000-char path is cut


def test_lock_path_that_is_a_folder_is_exit_2(built: tuple[Path, dict[str, str]]) -> None:
    work, env = built
    (lock,) = (work / "build").glob("*.lock")
    lock.unlink()
    lock.mkdir()
    try:
        res = demo(work, env)
        assert toolkit_code(res.returncode, res.stderr) == 2, res.stdout[-2000:] + res.stderr[-2000:]
        line = _one_line_error(res)
        assert f"lock file {lock}: a folder, not opened through" in line, line
    finally:
        lock.rmdir()


def test_an_interrupted_repro_marks_its_repro_manifest_interrupted(
        built: tuple[Path, dict[str, str]], gate: Gate) -> None:
    import signal

    work, env = built
    fresh = demo(work, env)  # a successful build's manifest, whatever ran before in this worker
    assert fresh.returncode == 0, fresh.stdout[-3000:] + fresh.stderr[-2000:]
    (manifest,) = (work / "artifacts").glob("*/manifest.json")
    repro_manifest = manifest.with_name("repro-manifest.json")
    argv = [sys.executable, "-m", "toolkit", "repro", str(manifest)]
    first = subprocess.run(argv, cwd=work, env=env, capture_output=True, text=True, timeout=900)
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-2000:]
    assert json.loads(repro_manifest.read_text())["outcome"] == "ok"
    # setuptools skips an extension whose built library is newer than its sources: without its
    # build folder the repro compiles (so it reaches the gate) instead of only packing
    import shutil

    for objects in (work / "build").glob("*/src/build"):
        shutil.rmtree(objects)
    # SIGINT at its default in the child, as in a terminal (a suite started as a background
    # job passes it ignored)
    proc = subprocess.Popen(argv, cwd=work, env=gate.env(env), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    # the repro is compiling and cannot finish: no race with a fast repro, no polling; the
    # gate fails the test, with the repro's output, if it exits before reaching a compile
    gate.wait_reached(proc, timeout=600)
    assert json.loads(repro_manifest.read_text())["outcome"] == "running"
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 130, out[-3000:]
    assert "Traceback" not in out
    data = json.loads(repro_manifest.read_text())
    assert data["outcome"] == "interrupted", data["outcome"]


def _tamper(path: Path, edit: object) -> None:
    data = json.loads(path.read_text())
    edit(data)  # type: ignore[operator]
    path.write_text(json.dumps(data))


@pytest.mark.parametrize("edit, needle", [
    (lambda m: m["build"].update(id="../../etc/hip_sample-0.1.0-cp311-cpu"), "is not a build id"),
    (lambda m: m["build"].update(id="hip_sample-0.1.0-cp311-cpu;rm"), "is not a build id"),
    (lambda m: m["build"].update(id="hip_sample-0.1.0-cp311-cpu$(id)"), "is not a build id"),
    (lambda m: m["build"].update(id="other-0.1.0-cp311-cpu"), "is not the build its fields name"),
    (lambda m: m.update(env_dir="/tmp/../etc"), "manifest field env_dir"),
    (lambda m: m.update(env_dir="relative/env"), "manifest field env_dir"),
    (lambda m: m.update(workdir="/w/\n/x"), "manifest field workdir"),
    (lambda m: m["source"].update(path="../../elsewhere"), "manifest field source.path"),
    (lambda m: m.update(schema_version=str(SCHEMA_VERSION)),
     f"schema_version '{SCHEMA_VERSION}' is a string, expected the integer {SCHEMA_VERSION}"),
    (lambda m: m.update(targets="gfx90a"),
     "manifest field targets: 'gfx90a' is a string, expected an array"),
    (lambda m: m["build"].update(python=3.11),
     "manifest field build.python: 3.11 is a number, expected a string"),
])
def test_tampered_manifest_is_exit_2_dry_run_too(
        built: tuple[Path, dict[str, str]], tmp_path: Path, edit: object, needle: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    from toolkit.cli.main import main

    work, _env = built
    (manifest,) = (work / "artifacts").glob("*/manifest.json")
    altered = tmp_path / "manifest.json"
    altered.write_text(manifest.read_text())
    _tamper(altered, edit)
    for argv in (["repro", str(altered), "--dry-run"], ["repro", str(altered)]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert needle in err and err.count("\n") == 1, err


@pytest.mark.parametrize("edit", [
    lambda m: m.update(env_dir="/tmp/../etc"),
    lambda m: m["build"].update(id="../x"),
    lambda m: m["source"].update(path="/a/../../b"),
])
def test_smoke_refuses_a_tampered_manifest(built: tuple[Path, dict[str, str]], tmp_path: Path,
                                           edit: object,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    from toolkit.cli.main import main

    work, _env = built
    (manifest,) = (work / "artifacts").glob("*/manifest.json")
    copy = tmp_path / "artifacts" / manifest.parent.name / "manifest.json"
    copy.parent.mkdir(parents=True)
    copy.write_text(manifest.read_text())
    _tamper(copy, edit)
    assert main(["smoke", "--workdir", str(tmp_path), "--gfx", "gfx90a"]) == 2
    err = capsys.readouterr().err
    assert "tampered manifest" in err and err.count("\n") == 1, err
