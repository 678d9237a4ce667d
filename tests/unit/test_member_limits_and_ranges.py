"""Reading one small member and ranges of a large one: the size limit is enforced on every
path (the one-shot path for small members too), its message names the limit in binary units,
and ranges of an inflated member are exactly the bytes Python's zipfile inflates."""

from __future__ import annotations

import base64
import hashlib
import os
import random
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from tests.fixtures.wheels import make_wheel
from toolkit.core import errors
from toolkit.inspect.readers import inflate, wheelzip
from toolkit.inspect.readers.inflate import MemberReader
from toolkit.inspect.readers.members import read_member
from toolkit.inspect.readers.wheelzip import Budget, WheelZip

MEMBER = "demo/blob.bin"


@pytest.mark.parametrize(("n", "shown"), [
    (1 << 30, "1 GiB"),  # the boundary is shown in GiB
    ((1 << 30) - (1 << 20), "1023 MiB"),
    (3 << 29, "1.5 GiB"),
    (4 << 30, "4 GiB"),
    (1 << 20, "1 MiB"),
    (512 << 10, "0.5 MiB"),
])
def test_sizes_are_shown_in_binary_units(n: int, shown: str) -> None:
    assert wheelzip._human(n) == shown


def _blob_wheel(tmp_path: Path, payload: bytes, compression: int = zipfile.ZIP_DEFLATED) -> Path:
    return make_wheel(tmp_path, "demo", "1.0", "py3-none-any", {MEMBER: payload},
                      compression=compression)


def _sha256(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def test_a_small_member_over_the_size_limit_is_not_inflated(tmp_path: Path) -> None:
    payload = bytes(2 << 20)  # 2 MiB of zeros: a few KiB compressed, read in one go
    whl = _blob_wheel(tmp_path, payload)
    with WheelZip.open(whl, Budget(member_bytes=1 << 20)) as wz:
        res = read_member(wz, wz.zf.getinfo(MEMBER))
    assert res.error == (f"{MEMBER} declares {2 << 20} inflated bytes, over the 1 MiB limit "
                         "(--max-member-size): not inspected")
    assert res.digest is None and res.size == 0
    with WheelZip.open(whl, Budget(member_bytes=2 << 20)) as wz:  # at the limit: read
        res = read_member(wz, wz.zf.getinfo(MEMBER))
    assert res.error is None and res.size == 2 << 20 and res.digest == _sha256(payload)


@pytest.mark.parametrize("compression", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])
@pytest.mark.parametrize("algo", ["sha256", "sha384", "sha512"])
def test_a_small_member_is_digested_as_record_asks(tmp_path: Path, compression: int, algo: str) -> None:
    payload = random.Random(3).randbytes(5000)
    whl = _blob_wheel(tmp_path, payload, compression)
    with zipfile.ZipFile(whl) as zf:
        truth = zf.read(MEMBER)
        assert zf.getinfo(MEMBER).compress_type == compression
    with WheelZip.open(whl, Budget()) as wz:
        res = read_member(wz, wz.zf.getinfo(MEMBER), algo)
    want = base64.urlsafe_b64encode(hashlib.new(algo, truth).digest()).rstrip(b"=").decode()
    assert (res.name, res.size, res.digest, res.error) == (MEMBER, 5000, f"{algo}={want}", None)
    assert res.is_elf is False and res.elf is None


@pytest.mark.skipif(shutil.which("readelf") is None, reason="needs readelf")
def test_a_small_elf_member_is_parsed_as_readelf_reads_it(tmp_path: Path) -> None:
    lib = Path("/bin/true").resolve()
    whl = make_wheel(tmp_path, "demo", "1.0", "py3-none-any", {MEMBER: lib})
    with WheelZip.open(whl, Budget()) as wz:
        res = read_member(wz, wz.zf.getinfo(MEMBER))
    dyn = subprocess.run(["readelf", "-dW", str(lib)], capture_output=True, text=True, check=True).stdout
    needed = [line.split("[")[1].rstrip("]") for line in dyn.splitlines() if "(NEEDED)" in line]
    assert res.is_elf and res.elf is not None and res.elf_error is None
    assert list(res.elf.needed) == needed and res.size == os.path.getsize(lib)


def _reader(tmp_path: Path, payload: bytes, monkeypatch: pytest.MonkeyPatch) -> tuple[WheelZip, MemberReader]:
    monkeypatch.setattr(inflate, "CHUNK", 16 << 10)
    monkeypatch.setattr(inflate, "FEED", 4 << 10)
    whl = _blob_wheel(tmp_path, payload)
    wz = WheelZip.open(whl, Budget())
    return wz, MemberReader(wz, wz.zf.getinfo(MEMBER))


def test_an_empty_range_yields_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    payload = random.Random(5).randbytes(100_000)
    wz, reader = _reader(tmp_path, payload, monkeypatch)
    with wz:
        for at in (0, 1, 20_000, 99_999, 100_000, 150_000):
            assert list(reader.chunks(at, at)) == []
        assert list(reader.chunks(500, 100)) == []  # an end before the start
        assert reader.verified is False  # nothing was read in full
        assert reader.read(99_990, 100) == payload[99_990:]  # cut at the member's end


def test_an_empty_member_is_verified_by_reading_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    wz, reader = _reader(tmp_path, b"", monkeypatch)
    with wz:
        assert reader.size == 0 and reader.verified is False
        assert list(reader.chunks(3, 3)) == [] and reader.verified is False
        assert list(reader.chunks()) == [] and reader.verified is True


def test_a_range_right_after_the_last_one_reuses_the_inflated_chunk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    payload = random.Random(6).randbytes(200_000)
    wz, reader = _reader(tmp_path, payload, monkeypatch)
    with wz:
        assert reader.read(0, 100) == payload[:100]
        # the next range lies inside the chunk the last read stopped in
        assert reader.read(100, 100) == payload[100:200]
        assert reader.read(150, 50_000) == payload[150:50_150]
        assert reader.read(50_150, 10) == payload[50_150:50_160]
        parts = list(reader.chunks(50_160, 90_000))
        assert b"".join(d for _, d in parts) == payload[50_160:90_000]
        assert parts[0][0] == 50_160  # offsets are where each piece starts
        assert all(a + len(d) == b for (a, d), (b, _) in zip(parts, parts[1:], strict=False))
        assert list(reader.chunks()) and reader.verified  # the full pass still verifies


def test_a_large_member_over_the_size_limit_is_not_inflated(tmp_path: Path) -> None:
    payload = random.Random(9).randbytes(3 << 20)  # incompressible: read the streaming way
    whl = _blob_wheel(tmp_path, payload)
    with WheelZip.open(whl, Budget(member_bytes=2 << 20)) as wz:
        info = wz.zf.getinfo(MEMBER)
        assert info.compress_size > 1 << 20
        res = read_member(wz, info)
    assert res.error == (f"{MEMBER} declares {3 << 20} inflated bytes, over the 2 MiB limit "
                         "(--max-member-size): not inspected")
    assert res.digest is None and res.is_elf is False


def test_a_range_before_the_last_one_starts_over(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    payload = random.Random(8).randbytes(200_000)
    wz, reader = _reader(tmp_path, payload, monkeypatch)
    with wz:
        assert reader.read(150_000, 100) == payload[150_000:150_100]
        assert reader.read(10, 100) == payload[10:110]  # behind the inflater: from a checkpoint
        assert reader.read(149_990, 30) == payload[149_990:150_020]


def test_pieces_start_where_asked_and_are_never_empty(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    payload = random.Random(4).randbytes(100_000)
    wz, reader = _reader(tmp_path, payload, monkeypatch)
    with wz:
        bounds = [off for off, _ in MemberReader(wz, wz.zf.getinfo(MEMBER)).chunks(0, 100_000)]
        assert len(bounds) > 3
        for start in (bounds[1], bounds[2], bounds[1] + 1000):  # at chunk boundaries and inside one
            reader = MemberReader(wz, wz.zf.getinfo(MEMBER))  # inflating again from the start
            pieces = list(reader.chunks(start, start + 20_000))
            assert pieces[0][0] == start and all(d for _, d in pieces)
            assert b"".join(d for _, d in pieces) == payload[start : start + 20_000]


def test_a_member_that_inflates_short_of_its_declared_size_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    payload = random.Random(2).randbytes(50_000)
    whl = _blob_wheel(tmp_path, payload)
    data = bytearray(whl.read_bytes())
    with zipfile.ZipFile(whl) as zf:
        info = zf.getinfo(MEMBER)
    # the central directory's uncompressed size (APPNOTE 4.3.12, offset 24) says 60,000
    cd = data.find(b"PK\x01\x02")
    while cd >= 0:
        name_len = int.from_bytes(data[cd + 28 : cd + 30], "little")
        if data[cd + 46 : cd + 46 + name_len] == MEMBER.encode():
            data[cd + 24 : cd + 28] = (60_000).to_bytes(4, "little")
            break
        cd = data.find(b"PK\x01\x02", cd + 4)
    assert cd >= 0 and info.file_size == 50_000
    whl.write_bytes(bytes(data))
    monkeypatch.setattr(inflate, "CHUNK", 16 << 10)
    with WheelZip.open(whl, Budget()) as wz:
        reader = MemberReader(wz, wz.zf.getinfo(MEMBER))
        assert reader.size == 60_000
        with pytest.raises(errors.MemberError) as err:
            reader.read(40_000, 20_000)  # not from the start: no first pass
    assert str(err.value) == (f"{MEMBER}: corrupt or truncated archive member (inflated to 50000 bytes, "
                              "60000 declared)")
