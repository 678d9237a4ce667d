"""How ``read_members`` shares a wheel out to a pool, pinned whole: ``_batches`` puts each large
member alone and the small ones together (hand-computed groups), a worker's ``_batch_job``
opens the wheel once, under the caller's budget, and reads each member with the digest RECORD
asks for (checked with hashlib); results come back in the caller's order. A thread pool
stands in for the process pool so the calls stay in this process."""

from __future__ import annotations

import base64
import hashlib
import zipfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.fixtures.wheels import make_wheel
from toolkit.inspect.readers import members
from toolkit.inspect.readers.errors import ElfError
from toolkit.inspect.readers.members import _batch_job, _batches, read_members, read_one
from toolkit.inspect.readers.wheelzip import Budget, WheelZip

FILES = {"demo/big.txt": "b" * 9000, "demo/small.txt": "s" * 100, "demo/mid.txt": "m" * 3000}


def _b64(algo: str, data: bytes) -> str:
    return f"{algo}=" + base64.urlsafe_b64encode(hashlib.new(algo, data).digest()).rstrip(b"=").decode()


@pytest.fixture
def wheel(tmp_path: Path) -> Iterator[Path]:
    whl = make_wheel(tmp_path, "demo", "1.0", "py3-none-any", FILES, compression=zipfile.ZIP_STORED)
    yield whl
    wz = members._WORKER_ZIPS.pop(str(whl), None)
    if wz is not None:
        wz.close()


def _info(name: str, size: int) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name)
    info.compress_size = size
    return info


def test_large_members_go_alone_and_small_ones_in_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(members, "BATCH_BYTES", 100)
    infos = [_info("a", 10), _info("b", 100), _info("c", 60), _info("d", 250), _info("e", 40),
             _info("f", 99), _info("g", 1), _info("h", 0)]
    got = [[i.filename for i in batch] for batch in _batches(infos)]
    # largest first: d (250) and b (100, at the limit) alone; then f 99 + c 60 reach 100;
    # e 40 + a 10 + g 1 + h 0 are what is left
    assert got == [["d"], ["b"], ["f", "c"], ["e", "a", "g", "h"]]
    assert _batches([]) == []
    assert [[i.filename for i in b] for b in _batches([_info("x", 30), _info("y", 70)])] == [["y", "x"]]


def test_a_batch_job_opens_the_wheel_once_under_the_callers_budget(wheel: Path) -> None:
    members._WORKER_ZIPS.pop(str(wheel), None)
    budget = Budget(member_bytes=5000)
    got = _batch_job(str(wheel), budget, [("demo/big.txt", "sha256"), ("demo/mid.txt", "sha512")])
    assert [r.name for r in got] == ["demo/big.txt", "demo/mid.txt"]
    assert got[0].error is not None
    assert got[0].error.startswith("demo/big.txt declares 9000 inflated bytes, over the ")
    assert got[0].digest is None
    assert (got[1].error, got[1].size, got[1].digest) == (None, 3000, _b64("sha512", b"m" * 3000))
    opened = members._WORKER_ZIPS[str(wheel)]
    assert opened.budget == budget
    again = _batch_job(str(wheel), Budget(), [("demo/small.txt", "sha384")])  # the same archive
    assert members._WORKER_ZIPS[str(wheel)] is opened
    assert again[0].digest == _b64("sha384", b"s" * 100)


def test_members_read_in_a_pool_come_back_in_the_callers_order(
    wheel: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(members, "BATCH_BYTES", 3000)
    members._WORKER_ZIPS.pop(str(wheel), None)
    with WheelZip.open(wheel, Budget()) as wz, ThreadPoolExecutor(2) as pool:
        infos = [wz.zf.getinfo(n) for n in ("demo/small.txt", "demo/big.txt", "demo/mid.txt")]
        algos = {"demo/mid.txt": "sha512"}
        pooled = read_members(wz, infos, algos, pool)  # type: ignore[arg-type]
        inline = read_members(wz, infos, algos)
    want = [("demo/small.txt", _b64("sha256", b"s" * 100)), ("demo/big.txt", _b64("sha256", b"b" * 9000)),
            ("demo/mid.txt", _b64("sha512", b"m" * 3000))]
    assert [(r.name, r.digest) for r in pooled] == want
    assert [(r.name, r.digest) for r in inline] == want


def test_read_one_wants_an_elf_member(wheel: Path) -> None:
    with WheelZip.open(wheel, Budget(member_bytes=5000)) as wz:
        with pytest.raises(ElfError, match="^not an ELF file$"):
            read_one(wz, wz.zf.getinfo("demo/mid.txt"))
        with pytest.raises(ElfError, match="^demo/big.txt declares 9000 inflated bytes"):
            read_one(wz, wz.zf.getinfo("demo/big.txt"))
