"""Every output file is replaced whole and never written through a symlink (issue 29, What
to build 9): JUnit XML (session builds, smoke --junit), index pages, manifests, lock holder
notes and the lock files themselves.

For each writer: a symlink at the target pointing elsewhere leaves the file it points to
unchanged (a one-line exit-2 refusal); a FIFO at the target is refused without blocking; a
failure between writing and renaming (``os.replace`` raising) leaves the earlier file as it
was with no temporary file beside it; a writer SIGKILLed mid-write leaves the earlier file.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

from toolkit.core import files
from toolkit.core.errors import UsageError

EARLIER = "the earlier file\n"


def _junit(target: Path) -> None:
    from toolkit.verify.junit import write_builds

    outcome = SimpleNamespace(build_id="a-1-cp311-cpu", seconds=1.0, error=None, failure=None)
    write_builds(target, [outcome], {})


def _smoke_junit(target: Path) -> None:
    from toolkit.verify.smoke import _keep_junit

    report = target.parent / "pytest-report.xml"
    report.write_text("<testsuites/>\n")
    _keep_junit(report, target)


def _index(target: Path) -> None:
    from toolkit.run.findlinks import write_index

    write_index(target.parent, b"<html>new</html>\n")


def _manifest(target: Path) -> None:
    from toolkit.run.manifest import write

    write(target, {"outcome": "ok"})


def _holder(target: Path) -> None:
    from toolkit.run.locking import hold

    with hold(target.with_suffix(".lock"), "build x"):
        pass


WRITERS: dict[str, tuple[str, Callable[[Path], None]]] = {
    "junit": ("builds.xml", _junit),
    "smoke-junit": ("smoke.xml", _smoke_junit),
    "index": ("index.html", _index),
    "manifest": ("manifest.json", _manifest),
    "lock-holder": ("build.holder", _holder),
}


@pytest.fixture(params=sorted(WRITERS))
def writer(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Path, Callable[[Path], None]]]:
    name, write = WRITERS[request.param]
    folder = tmp_path / "out"
    folder.mkdir()
    yield folder / name, write


def test_a_symlink_at_the_target_is_not_followed(writer: tuple[Path, Callable[[Path], None]],
                                                 tmp_path: Path) -> None:
    target, write = writer
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text(EARLIER)
    target.symlink_to(elsewhere)
    with pytest.raises(UsageError, match="a symlink, not written through") as err:
        write(target)
    assert err.value.exit_code == 2 and "\n" not in str(err.value)
    assert elsewhere.read_text() == EARLIER and target.is_symlink()


def test_a_lock_holder_note_refused_is_named_as_one(tmp_path: Path) -> None:
    """The note beside a lock (``<lock>.holder``: who holds it, read by the next run) is
    the output refused: the refusal says which kind of file, then its path."""
    target = tmp_path / "build.holder"
    target.symlink_to(tmp_path / "elsewhere.txt")
    with pytest.raises(UsageError) as err:
        _holder(target)
    assert str(err.value).startswith(f"lock holder note {target}: a symlink")


def test_a_fifo_at_the_target_is_refused_without_blocking(
        writer: tuple[Path, Callable[[Path], None]]) -> None:
    target, write = writer
    os.mkfifo(target)
    signal.signal(signal.SIGALRM, lambda *_: pytest.fail("blocked on the FIFO"))
    signal.alarm(10)
    try:
        with pytest.raises(UsageError, match="a FIFO, not written through"):
            write(target)
    finally:
        signal.alarm(0)


def test_a_failure_before_the_rename_keeps_the_earlier_file(
        writer: tuple[Path, Callable[[Path], None]], monkeypatch: pytest.MonkeyPatch) -> None:
    target, write = writer
    target.write_text(EARLIER)

    def broken(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(files.os, "replace", broken)
    with pytest.raises(UsageError, match="No space left on device"):
        write(target)
    assert target.read_text() == EARLIER
    assert not [p for p in target.parent.iterdir() if p.name.endswith(".tmp")]


def test_a_writer_killed_mid_write_leaves_the_earlier_manifest(tmp_path: Path) -> None:
    """A real process writing a manifest is SIGKILLed once its temporary file holds data (it
    then sleeps in fsync): the manifest is still the earlier one, whole."""
    target = tmp_path / "manifest.json"
    target.write_text(EARLIER)
    code = ("import os, sys, time\n"
            "from pathlib import Path\n"
            "os.fsync = lambda fd: time.sleep(60)\n"
            "from toolkit.run.manifest import write\n"
            "write(Path(sys.argv[1]), {'outcome': 'ok', 'pad': 'x' * 100000})\n")
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.Popen([sys.executable, "-c", code, str(target)], cwd=root,
                            env={**os.environ, "PYTHONPATH": str(root)})
    try:
        deadline = time.monotonic() + 60
        while not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")
                   and p.stat().st_size > 100000]:
            assert proc.poll() is None and time.monotonic() < deadline, "never wrote"
            time.sleep(0.05)
    finally:
        proc.kill()
        proc.wait()
    assert target.read_text() == EARLIER


def test_a_new_output_is_readable_by_others_and_a_replaced_one_keeps_its_mode(
        tmp_path: Path) -> None:
    new = files.write_atomic(tmp_path / "new.json", "{}\n", "manifest")
    assert new.stat().st_mode & 0o777 == 0o644  # like a file open() makes under umask 022
    kept = tmp_path / "kept.json"
    kept.write_text("{}")
    kept.chmod(0o600)
    files.write_atomic(kept, b"{}\n", "manifest")
    assert kept.stat().st_mode & 0o777 == 0o600 and kept.read_bytes() == b"{}\n"


@pytest.mark.parametrize("kind", ["symlink", "fifo", "folder"])
def test_a_lock_is_never_opened_through_a_symlink_a_fifo_or_a_folder(kind: str,
                                                                     tmp_path: Path) -> None:
    from toolkit.run.locking import hold

    lock = tmp_path / "build.lock"
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text(EARLIER)
    if kind == "symlink":
        lock.symlink_to(elsewhere)
    elif kind == "fifo":
        os.mkfifo(lock)
    else:
        lock.mkdir()
    with pytest.raises(UsageError, match="not opened through") as err:
        with hold(lock, "build x"):
            pass
    assert err.value.exit_code == 2
    assert elsewhere.read_text() == EARLIER  # an older filelock would have truncated it
