"""A member whose inflated bytes do not match the archive's CRC-32 is corrupt, whichever way the
member is read: in one go (small), streamed with the hash beside it, or streamed with the hash
and the CRC-32 in a second thread. Python's zipfile is the independent judge of the archive."""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import pytest

from tests.fixtures.wheels import make_wheel, wrong_crc
from toolkit.core.errors import MemberError
from toolkit.inspect.checks import check_paths
from toolkit.inspect.readers import members
from toolkit.inspect.readers.inflate import MemberReader
from toolkit.inspect.readers.wheelzip import Budget, WheelZip

TAG = "cp311-cp311-manylinux_2_28_x86_64"
MEMBER = "demo/blob.bin"



def _wheel(tmp_path: Path, payload: bytes, corrupt: bool) -> Path:
    whl = make_wheel(tmp_path / ("bad" if corrupt else "good"), "demo", "1.0", TAG,
                     {MEMBER: payload, "demo/x.py": "x = 1\n"})
    if corrupt:
        wrong_crc(whl, MEMBER)
    return whl


def _errors(whl: Path) -> list[str]:
    return [f.message for f in check_paths([whl]).findings if f.severity == "error"]


@pytest.mark.parametrize("how", ["small", "streamed", "streamed, CRC in a second thread"])
def test_a_wrong_crc_is_an_error_however_the_member_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    if how == "small":
        payload = os.urandom(64 << 10)
    else:  # incompressible, so its compressed size is over the one-go limit
        payload = os.urandom(members.SMALL_BYTES + (256 << 10))
    if how.endswith("second thread"):
        monkeypatch.setattr(members, "THREAD_HASH_BYTES", members.SMALL_BYTES)
    good, bad = _wheel(tmp_path, payload, False), _wheel(tmp_path, payload, True)
    with zipfile.ZipFile(good) as zf:
        assert zf.testzip() is None
    with zipfile.ZipFile(bad) as zf:
        assert zf.testzip() == MEMBER  # zipfile finds the same member bad
    assert not [m for m in _errors(good) if MEMBER in m]
    bad_errors = [m for m in _errors(bad) if MEMBER in m]
    assert bad_errors == [f"{MEMBER}: corrupt or truncated archive member (CRC-32 mismatch)"]


def test_a_member_read_in_full_is_verified_only_by_its_own_crc(tmp_path: Path) -> None:
    payload = os.urandom(members.SMALL_BYTES + 4096)
    whl = _wheel(tmp_path, payload, False)
    true_crc = zipfile.ZipFile(whl).getinfo(MEMBER).CRC
    with WheelZip.open(whl, Budget()) as wz:
        reader = MemberReader(wz, wz.zf.getinfo(MEMBER))
        assert b"".join(d for _, d in reader.first_pass()) == payload
        assert not reader.verified  # the caller has not handed over its CRC yet
        with pytest.raises(MemberError, match="CRC-32 mismatch"):
            reader.confirm(true_crc ^ 1)
        assert not reader.verified
        reader.confirm(true_crc)
        assert reader.verified
        with pytest.raises(ValueError, match="already read in full"):
            reader.first_pass()
        assert reader.read(len(payload) - 10, 100) == payload[-10:]
