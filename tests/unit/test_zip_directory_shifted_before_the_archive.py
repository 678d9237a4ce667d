"""A central directory whose recorded offset lies past where it really is: zipfile takes the
difference as bytes prepended to the archive and moves every member's local header back by
it (CPython's ``zipfile._RealGetContents``: ``concat``), here to before the archive's first
byte. Reading such a member is refused in one line naming it and the offset, never a read at
a negative offset. The EOCD record's layout (offset of the central directory at +16) is the
ZIP APPNOTE's (4.3.16)."""

from __future__ import annotations

import struct
import zipfile
from pathlib import Path

import pytest

from toolkit.core.errors import MemberError
from toolkit.inspect.readers.wheelzip import WheelZip


def test_a_local_header_before_the_archive_starts(tmp_path: Path) -> None:
    plain = tmp_path / "w.whl"
    with zipfile.ZipFile(plain, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr("pkg/a.py", b"x = 1\n")
    raw = bytearray(plain.read_bytes())
    eocd = raw.rfind(b"PK\x05\x06")
    (cd_at,) = struct.unpack_from("<I", raw, eocd + 16)
    struct.pack_into("<I", raw, eocd + 16, cd_at + 100)
    shifted = tmp_path / "shifted.whl"
    shifted.write_bytes(bytes(raw))
    with WheelZip.open(shifted) as wz:
        (m,) = wz.members
        assert m.header_offset == -100
        with pytest.raises(MemberError) as err:
            wz.data_offset(m)
    assert str(err.value) == (
        "pkg/a.py: its local file header would be at offset -100, before the archive starts")
