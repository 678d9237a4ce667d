"""A variant wheel adds ``<dist-info>/variant.json``: a regular file of mode 0644 to unzip
(the zip's Unix mode in the high 16 bits of external_attr, APPNOTE 4.4.15, made on Unix:
create_system 3), and one RECORD row for it (PEP 376/427 RECORD: a CSV file, one row per file,
path, hash, size). A RECORD whose last row lacks its line end still gets the new row on a line
of its own. Read back with the standard library's zipfile, csv, hashlib and stat."""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import stat
import zipfile
from pathlib import Path

from toolkit.run.variant_wheels import make_variant

DIST = "demo-1.0.dist-info"


def _wheel(path: Path, record: bytes) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("demo/__init__.py", b"x = 1\n")
        zf.writestr(f"{DIST}/METADATA", b"Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n")
        zf.writestr(f"{DIST}/WHEEL", b"Wheel-Version: 1.0\nRoot-Is-Purelib: false\n"
                                     b"Tag: cp312-cp312-linux_x86_64\n")
        zf.writestr(f"{DIST}/RECORD", record)
    return path


def test_the_new_row_is_a_row_of_its_own_and_the_member_a_0644_file(tmp_path: Path) -> None:
    # three rows, the last without its line end (some tools write RECORD so)
    record = (b"demo/__init__.py,sha256=abc,6\r\n" + f"{DIST}/METADATA,sha256=def,40\n".encode()
              + f"{DIST}/RECORD,,".encode())
    src = _wheel(tmp_path / "demo-1.0-cp312-cp312-linux_x86_64.whl", record)
    out = make_variant(src, tmp_path / "out", "gfx942")
    with zipfile.ZipFile(out) as zf:
        info = zf.getinfo(f"{DIST}/variant.json")
        data = zf.read(info)
        rows = list(csv.reader(io.StringIO(zf.read(f"{DIST}/RECORD").decode())))
    mode = info.external_attr >> 16
    assert stat.S_ISREG(mode) and stat.filemode(mode) == "-rw-r--r--" and info.create_system == 3
    assert all(len(r) == 3 for r in rows), rows
    assert [r[0] for r in rows] == ["demo/__init__.py", f"{DIST}/METADATA", f"{DIST}/RECORD",
                                    f"{DIST}/variant.json"]
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    assert rows[-1] == [f"{DIST}/variant.json", f"sha256={digest}", str(len(data))]
