"""``MemberReader`` pinned whole: which members it refuses, and each way a member's bytes can
disagree with its headers (an archive cut short under the reader, compressed data that ends
early, a member that inflates past its declared size or stops before it, corrupt deflate
data, a wrong CRC-32), each with its message; the bytes it yields, in order, and every
checkpoint it leaves, are the bytes Python's zipfile inflates (the independent judge)."""

from __future__ import annotations

import os
import random
import zipfile
import zlib
from pathlib import Path

import pytest

from tests.fixtures.wheels import edit_member_headers, make_wheel, wrong_crc
from toolkit.core.errors import MemberError
from toolkit.inspect.readers import inflate
from toolkit.inspect.readers.inflate import MemberReader
from toolkit.inspect.readers.wheelzip import Budget, WheelZip

MEMBER = "demo/blob.bin"
FAIL = f"{MEMBER}: corrupt or truncated archive member"


def _wheel(tmp_path: Path, payload: bytes, compression: int = zipfile.ZIP_DEFLATED) -> Path:
    return make_wheel(tmp_path, "demo", "1.0", "py3-none-any", {MEMBER: payload}, compression=compression)


def _payload(n: int, seed: int = 5) -> bytes:
    rnd = random.Random(seed)
    return bytes(rnd.choices(b"ACGT", k=n))  # deflates to about a quarter


@pytest.mark.parametrize(("compression", "method"), [(zipfile.ZIP_BZIP2, 12), (zipfile.ZIP_LZMA, 14)])
def test_only_stored_and_deflated_members_are_read(tmp_path: Path, compression: int, method: int) -> None:
    whl = _wheel(tmp_path, b"data" * 100, compression)
    with WheelZip.open(whl) as wz:
        info = wz.zf.getinfo(MEMBER)
        assert info.compress_type == method  # APPNOTE 4.4.5: 12 BZIP2, 14 LZMA
        with pytest.raises(MemberError) as err:
            MemberReader(wz, info)
    assert str(err.value) == f"{MEMBER}: unsupported compression method {method}"


def test_a_member_over_the_budget_is_refused_before_reading(tmp_path: Path) -> None:
    whl = _wheel(tmp_path, bytes(5000))
    with WheelZip.open(whl, Budget(member_bytes=4999)) as wz, pytest.raises(MemberError) as err:
        MemberReader(wz, wz.zf.getinfo(MEMBER))
    assert str(err.value).startswith(f"{MEMBER} declares 5000 inflated bytes, over the ")


@pytest.mark.parametrize("compression", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])
def test_a_fresh_reader_knows_its_member_and_has_verified_nothing(tmp_path: Path, compression: int) -> None:
    payload = _payload(3000)
    whl = _wheel(tmp_path, payload, compression)
    with WheelZip.open(whl) as wz:
        info = wz.zf.getinfo(MEMBER)
        r = MemberReader(wz, info)
        assert (r.name, r.size, r.info, r.verified) == (MEMBER, 3000, info, False)
        # where the data starts: after the 30-byte local header, its name and extra field
        with open(whl, "rb") as f:
            f.seek(info.header_offset + 26)
            n, m = int.from_bytes(f.read(2), "little"), int.from_bytes(f.read(2), "little")
            f.seek(info.header_offset + 30 + n + m)
            raw = f.read(info.compress_size)
        assert (zlib.decompress(raw, -15) if compression else raw) == payload
        assert r.read(0, 3000) == payload and r.verified


@pytest.mark.parametrize("compression", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])
def test_an_archive_cut_short_under_the_reader_is_a_short_read(tmp_path: Path, compression: int) -> None:
    payload = random.Random(1).randbytes(600_000)  # incompressible: 600 KB on disk either way
    whl = _wheel(tmp_path, payload, compression)
    with WheelZip.open(whl) as wz:
        r = MemberReader(wz, wz.zf.getinfo(MEMBER))
        os.truncate(whl, r._start + 1000)  # the file loses its data after the reader opened it
        with pytest.raises(MemberError) as err:
            list(r.chunks())
    assert str(err.value) == f"{FAIL} (short read)"
    assert not r.verified


def test_compressed_data_that_ends_before_the_stream_does(tmp_path: Path) -> None:
    payload = _payload(200_000)
    whl = _wheel(tmp_path, payload)
    edit_member_headers(whl, MEMBER, 18, 20, "<I", lambda n: n - 100)  # compressed size
    with WheelZip.open(whl) as wz, pytest.raises(MemberError) as err:
        list(MemberReader(wz, wz.zf.getinfo(MEMBER)).chunks())
    assert str(err.value) == f"{FAIL} (compressed data ends early)"


def test_a_member_that_inflates_past_its_declared_size(tmp_path: Path) -> None:
    payload = _payload(200_000)
    whl = _wheel(tmp_path, payload)
    edit_member_headers(whl, MEMBER, 22, 24, "<I", lambda n: n - 1)  # uncompressed size
    with WheelZip.open(whl) as wz:
        r = MemberReader(wz, wz.zf.getinfo(MEMBER))
        got = bytearray()
        with pytest.raises(MemberError) as err:
            for _, data in r.chunks():
                got += data
    assert str(err.value) == f"{MEMBER}: inflates past its declared 199999 bytes"
    assert payload.startswith(got)  # nothing past the declared size was handed out


@pytest.mark.parametrize("compression", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])
def test_a_member_that_stops_before_its_declared_size(tmp_path: Path, compression: int) -> None:
    payload = _payload(200_000)
    whl = _wheel(tmp_path, payload, compression)
    edit_member_headers(whl, MEMBER, 22, 24, "<I", lambda n: n + 7)
    with WheelZip.open(whl) as wz, pytest.raises(MemberError) as err:
        list(MemberReader(wz, wz.zf.getinfo(MEMBER)).chunks())
    if compression == zipfile.ZIP_DEFLATED:
        assert str(err.value) == f"{FAIL} (inflated to 200000 bytes, 200007 declared)"
    else:  # a stored member reads its declared size from the archive: the next header's bytes
        assert str(err.value) == f"{FAIL} (CRC-32 mismatch)"


def test_corrupt_deflate_data_carries_zlibs_words(tmp_path: Path) -> None:
    payload = _payload(5000)
    whl = _wheel(tmp_path, payload)
    with WheelZip.open(whl) as wz:
        start, size = MemberReader(wz, wz.zf.getinfo(MEMBER))._start, wz.zf.getinfo(MEMBER).compress_size
    data = bytearray(whl.read_bytes())
    data[start] = 0x07  # BFINAL=1, BTYPE=11: a reserved block type (RFC 1951, 3.2.3)
    whl.write_bytes(bytes(data))
    with pytest.raises(zlib.error) as truth:
        zlib.decompressobj(-15).decompress(bytes(data[start : start + size]))
    with WheelZip.open(whl) as wz, pytest.raises(MemberError) as err:
        list(MemberReader(wz, wz.zf.getinfo(MEMBER)).chunks())
    assert str(err.value) == f"{FAIL} ({truth.value})"


def test_a_wrong_crc_leaves_the_member_unverified(tmp_path: Path) -> None:
    whl = _wheel(tmp_path, _payload(5000))
    wrong_crc(whl, MEMBER)
    with WheelZip.open(whl) as wz:
        r = MemberReader(wz, wz.zf.getinfo(MEMBER))
        with pytest.raises(MemberError) as err:
            list(r.chunks())
        assert str(err.value) == f"{FAIL} (CRC-32 mismatch)" and not r.verified


@pytest.mark.parametrize("compression", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])
def test_chunks_and_checkpoints_are_the_members_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, compression: int
) -> None:
    monkeypatch.setattr(inflate, "CHUNK", 10_000)
    monkeypatch.setattr(inflate, "FEED", 3_000)
    monkeypatch.setattr(inflate, "CHECKPOINT_EVERY", 50_000)
    payload = _payload(333_333)
    whl = _wheel(tmp_path, payload, compression)
    with zipfile.ZipFile(whl) as zf:
        assert zf.read(MEMBER) == payload
    with WheelZip.open(whl) as wz:
        r = MemberReader(wz, wz.zf.getinfo(MEMBER))
        pieces = list(r.chunks())
        assert r.verified
        assert [off for off, _ in pieces] == [sum(len(d) for _, d in pieces[:i]) for i in range(len(pieces))]
        assert b"".join(d for _, d in pieces) == payload
        assert all(0 < len(d) <= 10_000 for _, d in pieces)
        outs = [p.out for p in r._points]
        if compression == zipfile.ZIP_STORED:
            assert outs == [0] and r._points[0].state is None  # stored: any offset is direct
        else:
            assert outs[0] == 0 and len(outs) >= 333_333 // 60_000
            assert all(b - a >= 50_000 for a, b in zip(outs, outs[1:], strict=False))
        for p in r._points:  # resuming at any checkpoint yields the member's bytes from there
            got = b"".join(d for _, d in r._run(p, r.size, record=False))
            assert got == payload[p.out :]
        for start, length in ((0, 1), (49_999, 3), (123_456, 70_000), (333_330, 100), (333_333, 5)):
            assert r.read(start, length) == payload[start : start + length]


@pytest.mark.parametrize("compression", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])
def test_a_read_starting_inside_a_chunk_yields_from_its_start_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, compression: int
) -> None:
    monkeypatch.setattr(inflate, "CHUNK", 1_000)
    monkeypatch.setattr(inflate, "FEED", 300)
    payload = _payload(5_000)
    with WheelZip.open(_wheel(tmp_path, payload, compression)) as wz:
        r = MemberReader(wz, wz.zf.getinfo(MEMBER))
        whole = list(r.chunks())
        for off, data in whole:  # one byte in, to the chunk's end and to the member's end
            for start, end in ((off + 1, off + len(data)), (off + 1, r.size), (off, off + len(data) - 1)):
                got = list(r.chunks(start, end))
                assert got[0][0] == start and b"".join(d for _, d in got) == payload[start:end]
            assert list(r.chunks(off, off + len(data))) == [(off, data)]  # ends at its end: once


def test_an_empty_member_is_verified_by_reading_nothing(tmp_path: Path) -> None:
    whl = _wheel(tmp_path, b"")
    with WheelZip.open(whl) as wz:
        r = MemberReader(wz, wz.zf.getinfo(MEMBER))
        assert list(r.chunks(5, 9)) == [] and not r.verified  # not from the start
        assert list(r.chunks()) == [] and r.verified


def test_the_first_pass_is_given_once_and_confirmed_by_the_callers_crc(tmp_path: Path) -> None:
    payload = _payload(70_000)
    whl = _wheel(tmp_path, payload)
    with WheelZip.open(whl) as wz:
        r = MemberReader(wz, wz.zf.getinfo(MEMBER))
        data = b"".join(d for _, d in r.first_pass())
        assert data == payload and not r.verified  # until the caller confirms it
        with pytest.raises(MemberError, match=r"\(CRC-32 mismatch\)$"):
            r.confirm(zlib.crc32(payload) ^ 1)
        assert not r.verified
        r.confirm(zlib.crc32(payload))
        assert r.verified
        with pytest.raises(ValueError, match="^first_pass: the member was already read in full$"):
            r.first_pass()


def test_a_checkpoint_is_left_at_the_first_chunk_end_at_or_past_each_interval(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(inflate, "CHUNK", 10_000)
    monkeypatch.setattr(inflate, "FEED", 1 << 20)  # input to spare: every chunk is a whole CHUNK
    monkeypatch.setattr(inflate, "CHECKPOINT_EVERY", 50_000)
    payload = _payload(333_333)
    whl = _wheel(tmp_path, payload)
    with WheelZip.open(whl) as wz:
        r = MemberReader(wz, wz.zf.getinfo(MEMBER))
        sizes = [len(d) for _, d in r.chunks()]
        assert sizes == [10_000] * 33 + [3_333]
        assert [p.out for p in r._points] == list(range(0, 333_333, 50_000))
        for p in r._points:
            got = b"".join(d for _, d in r._run(p, p.out + 10, record=False))
            assert got[:10] == payload[p.out : p.out + 10]
