"""The process pool that reads a large wheel's members: started from a documented size on, and
its workers forked (a copy of the caller, holding the open archive) whatever the platform's
default start method: Python 3.14 makes "forkserver" the default on Linux (What's New in
Python 3.14, multiprocessing), and macOS has used "spawn" since 3.8."""

from __future__ import annotations

import base64
import hashlib
import multiprocessing
import os
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fixtures.wheels import make_wheel
from toolkit.inspect.readers import members
from toolkit.inspect.readers.members import start_pool, stop_pool
from toolkit.inspect.readers.wheelzip import Budget, WheelZip


@pytest.fixture
def wheel(tmp_path: Path) -> Path:
    return make_wheel(tmp_path, "demo", "1.0", "py3-none-any",
                      {f"demo/f{i}.txt": f"{i}" * 5000 for i in range(4)})


def _compressed(whl: Path) -> int:
    with zipfile.ZipFile(whl) as zf:  # zipfile's count, not the toolkit's
        return sum(i.compress_size for i in zf.infolist() if not i.filename.endswith("/"))


def test_a_wheel_of_exactly_the_pool_size_gets_a_pool(wheel: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    size = _compressed(wheel)
    with WheelZip.open(wheel, Budget()) as wz:
        monkeypatch.setattr(members, "POOL_MIN_BYTES", size + 1)
        assert start_pool(wz, 2) is None
        monkeypatch.setattr(members, "POOL_MIN_BYTES", size)
        pool = start_pool(wz, 2)
        assert pool is not None
        stop_pool(wz, pool)
        assert start_pool(wz, 1) is None  # one worker: no pool


def _holds(path: str) -> bool:
    """In a worker: does it hold the caller's open archive (only a forked copy does)?"""
    return path in members._WORKER_ZIPS


@pytest.fixture
def spawn_by_default() -> Iterator[None]:
    old = multiprocessing.get_start_method(allow_none=True)
    multiprocessing.set_start_method("spawn", force=True)
    try:
        yield
    finally:
        multiprocessing.set_start_method(old, force=True)


def test_the_workers_are_forked_whatever_the_default_start_method(
    wheel: Path, monkeypatch: pytest.MonkeyPatch, spawn_by_default: None
) -> None:
    monkeypatch.setattr(members, "POOL_MIN_BYTES", 0)
    with WheelZip.open(wheel, Budget()) as wz:
        pool = start_pool(wz, 2)
        assert pool is not None
        try:
            assert pool.submit(_holds, str(wz.path)).result(timeout=60)
        finally:
            stop_pool(wz, pool)


def test_the_pool_has_at_most_eight_workers(wheel: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(members, "POOL_MIN_BYTES", 0)
    with WheelZip.open(wheel, Budget()) as wz:
        for jobs, want in ((64, 8), (9, 8), (8, 8), (3, 3)):
            pool = start_pool(wz, jobs)
            assert pool is not None
            try:
                assert len(pool._processes) == want  # every worker forked at once
            finally:
                stop_pool(wz, pool)


def _record_digest(data: bytes) -> str:
    """A RECORD hash as the wheel spec writes it: sha256=<urlsafe base64, no padding>."""
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def test_the_workers_read_the_archive_the_caller_opened_not_what_its_path_holds_later(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = {f"demo/f{i}.txt": f"{i}" * 5000 for i in range(4)}
    opened = make_wheel(tmp_path / "a", "demo", "1.0", "py3-none-any", files)
    # another wheel with the same member names and other bytes is renamed over the path (a
    # rebuild writing dist/ while a check runs): POSIX rename(2) leaves the open file as it was
    other = make_wheel(tmp_path / "b", "demo", "1.0", "py3-none-any",
                       {name: text.upper() + "!" for name, text in files.items()})
    monkeypatch.setattr(members, "POOL_MIN_BYTES", 0)
    with WheelZip.open(opened, Budget()) as wz:
        pool = start_pool(wz, 2)
        assert pool is not None
        try:
            os.replace(other, opened)
            infos = [i for i in wz.members if i.filename in files]
            got = members.read_members(wz, infos, {}, pool)
        finally:
            stop_pool(wz, pool)
    assert {r.name: (r.digest, r.size, r.error) for r in got} == \
        {name: (_record_digest(text.encode()), len(text), None) for name, text in files.items()}
