"""A lock another holder has (``toolkit.run.locking.hold``) refused in words: who holds it
(pid, host, what, since when, from its holder note), exit 6 (README's table: "busy (a lock is
held)"), with a hint; a wait that ends still busy says how long it waited; a note that cannot
be read names "another process"; a file where the lock's folder belongs is bad input (exit 2)
naming the path and the cause (``strerror (ERRNO)``). The lock is a real one (filelock's ``flock``): held here
through a second open file, which the kernel treats as another holder."""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from filelock import FileLock

from toolkit.core.errors import Busy, UsageError
from toolkit.run.locking import hold

SINCE = 1_700_000_000.0


@pytest.fixture
def held(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "b.lock"
    other = FileLock(str(path))
    other.acquire(timeout=0)
    (tmp_path / "b.holder").write_text(json.dumps(
        {"pid": 4242, "host": "builder7", "what": "build b", "since": SINCE}))
    yield path
    other.release()


def at(since: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(since))


def test_a_held_lock_is_refused_at_once_naming_its_holder(held: Path) -> None:
    with pytest.raises(Busy) as caught, hold(held, "the build b in /w"):
        raise AssertionError("the lock was taken")
    assert caught.value.exit_code == 6
    assert caught.value.message == (
        f"the build b in /w is busy: held by pid 4242 on builder7 (build b, since {at(SINCE)})")
    assert caught.value.hint == "wait for it to finish, or use another --workdir"


def test_a_wait_that_ends_still_busy_says_how_long_and_was_announced(held: Path) -> None:
    said: list[str] = []
    with pytest.raises(Busy) as caught, hold(held, "source mirror m", wait=0.05,
                                             on_wait=said.append):
        raise AssertionError("the lock was taken")
    holder = f"pid 4242 on builder7 (build b, since {at(SINCE)})"
    assert said == [f"waiting for source mirror m: held by {holder}"]
    assert caught.value.message == f"source mirror m still busy after 0 s: held by {holder}"
    assert caught.value.exit_code == 6


@pytest.mark.parametrize("note", ["", "{not json", json.dumps({"pid": 1}), "[]",
                                  json.dumps({"pid": 1, "host": "h", "what": "w",
                                              "since": "later"})])
def test_a_holder_note_that_says_nothing_usable_names_another_process(
        held: Path, note: str) -> None:
    held.with_suffix(".holder").write_text(note)
    with pytest.raises(Busy) as caught, hold(held, "env e"):
        raise AssertionError("the lock was taken")
    assert caught.value.message == "env e is busy: held by another process"


def test_the_holder_note_names_this_process_while_it_holds(tmp_path: Path) -> None:
    path = tmp_path / "deeper" / "e.lock"  # its folder is made
    before = time.time()
    with hold(path, "env e"):
        note = json.loads(path.with_suffix(".holder").read_text())
        assert note["pid"] == os.getpid() and note["host"] == socket.gethostname()
        assert note["what"] == "env e" and before <= note["since"] <= time.time()
        other = FileLock(str(path))
        with pytest.raises(TimeoutError):
            other.acquire(timeout=0)
    other.acquire(timeout=0)  # released on leaving
    other.release()


def test_a_file_where_the_locks_folder_belongs_is_bad_input(tmp_path: Path) -> None:
    (tmp_path / "work").write_text("")  # a file where the lock's folder should be
    with pytest.raises(UsageError) as caught, hold(tmp_path / "work" / "b.lock", "the build b"):
        raise AssertionError("the lock was taken")
    assert caught.value.exit_code == 2
    assert caught.value.message == (f"cannot take the lock of the build b: {tmp_path / 'work'}: "
                                    "File exists (EEXIST)")
    assert caught.value.hint == "remove what is in the way, or use another --workdir"


def test_a_folder_where_the_lock_file_belongs_is_never_opened(tmp_path: Path) -> None:
    (tmp_path / "b.lock").mkdir()
    with pytest.raises(UsageError) as caught, hold(tmp_path / "b.lock", "the build b"):
        raise AssertionError("the lock was taken")
    assert caught.value.exit_code == 2
    assert caught.value.message.startswith(f"lock file {tmp_path / 'b.lock'}: a folder")
