"""On-disk locks (filelock): one run per build id and work folder, one writer per cached
environment and per source mirror.

A lock file ``X.lock`` sits next to ``X.holder``, a JSON note naming who holds it (pid,
host, what, since) so that a refusal or a wait can say so in one line. The OS releases the
lock when its holder dies, so an interrupted run never blocks the next one.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from filelock import FileLock, Timeout

from toolkit.core.errors import Busy, ToolkitError, UsageError, describe_os_error
from toolkit.core.files import read_bytes, refuse_special, write_atomic


def _holder(path: Path) -> str:
    try:
        data = json.loads(read_bytes(path.with_suffix(".holder"), "stamp"))
        since = time.strftime("%H:%M:%S", time.localtime(float(data["since"])))
        return f"pid {data['pid']} on {data['host']} ({data['what']}, since {since})"
    except (ToolkitError, ValueError, KeyError, TypeError, RecursionError):
        return "another process"


@contextlib.contextmanager
def hold(path: Path, what: str, *, wait: float = 0.0,
         on_wait: Callable[[str], None] | None = None) -> Iterator[None]:
    """Hold ``path`` (a ``.lock`` file) for ``what``; refuse at once (``wait`` 0) or after
    waiting ``wait`` seconds with ``Busy`` naming the holder."""
    lock = FileLock(str(path))
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # never opened through a symlink (an older filelock opens with O_TRUNC and follows
        # it), nor a FIFO or a folder (filelock >= 4 also opens with O_NOFOLLOW)
        refuse_special(path, "lock file", "opened")
        lock.acquire(timeout=0)
    except Timeout:  # held by another run (a TimeoutError, so before OSError)
        if wait <= 0:
            raise Busy(f"{what} is busy: held by {_holder(path)}",
                       hint="wait for it to finish, or use another --workdir") from None
        if on_wait:
            on_wait(f"waiting for {what}: held by {_holder(path)}")
        try:
            lock.acquire(timeout=wait)
        except Timeout:
            raise Busy(f"{what} still busy after {wait:.0f} s: held by {_holder(path)}") \
                from None
    except OSError as err:  # a folder or a file where the lock (or its folder) should be
        raise UsageError(f"cannot take the lock of {what}: {describe_os_error(err)}",
                         hint="remove what is in the way, or use another --workdir") from None
    note = path.with_suffix(".holder")
    try:
        write_atomic(note, json.dumps({"pid": os.getpid(), "host": socket.gethostname(),
                                       "what": what, "since": time.time()}), "lock holder note")
        yield
    finally:
        lock.release()
