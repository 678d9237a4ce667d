"""The sdist size limit is the README's unit: "more than 100,000 members or 2 GiB is refused
in one line, exit 2". A GiB is 2**30 bytes (IEC 80000-13), so an archive declaring exactly
2 * 2**30 bytes is within the limit and one byte more is not (a GB, 10**9, would refuse
far less; a limit in GB or MiB would show here).

The archives are real tar files whose members declare their sizes; the data is a hole in a
sparse file, so nothing of that size is written or read (the reader refuses on the declared
sizes, before it extracts)."""

from __future__ import annotations

import tarfile
from pathlib import Path

import pytest

from toolkit.core.errors import UsageError
from toolkit.env import sdist

GIB = 2 ** 30
BLOCK = 512


def _tar(path: Path, members: list[tuple[str, int, bytes]]) -> Path:
    """A tar of ``members`` (name, declared size, type); the data of each is a sparse hole."""
    with path.open("wb") as f:
        for name, size, kind in members:
            info = tarfile.TarInfo(name)
            info.size, info.type = size, kind
            f.write(info.tobuf(format=tarfile.GNU_FORMAT))
            f.seek(-(-size // BLOCK) * BLOCK, 1)  # the member's data blocks: a hole
        f.write(b"\0" * BLOCK * 2)
    return path


def _refusal(archive: Path, tmp_path: Path) -> str:
    with pytest.raises(UsageError) as caught:
        sdist.unpack(archive, tmp_path / "out", "proj-1.0.tar.gz")
    assert caught.value.exit_code == 2
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_one_byte_over_2_gib_is_refused(tmp_path: Path) -> None:
    archive = _tar(tmp_path / "big.tar", [("proj/a.bin", GIB, tarfile.REGTYPE),
                                          ("proj/b.bin", GIB + 1, tarfile.REGTYPE)])
    message = _refusal(archive, tmp_path)
    assert "2 GiB" in message, message
    assert not (tmp_path / "out" / "proj" / "a.bin").exists()


def test_exactly_2_gib_is_within_the_limit(tmp_path: Path) -> None:
    # two members of 1 GiB each, then a FIFO: the size budget lets the first two through, so
    # the refusal is the FIFO's (nothing is extracted: the FIFO is refused first)
    archive = _tar(tmp_path / "edge.tar", [("proj/a.bin", GIB, tarfile.REGTYPE),
                                           ("proj/b.bin", GIB, tarfile.REGTYPE),
                                           ("proj/pipe", 0, tarfile.FIFOTYPE)])
    message = _refusal(archive, tmp_path)
    assert "GiB" not in message and "proj/pipe" in message and "FIFO" in message, message


def test_more_than_2_gb_but_less_than_2_gib_is_within_the_limit(tmp_path: Path) -> None:
    archive = _tar(tmp_path / "gb.tar", [("proj/a.bin", 2 * 10 ** 9 + 1, tarfile.REGTYPE),
                                         ("proj/pipe", 0, tarfile.FIFOTYPE)])
    message = _refusal(archive, tmp_path)
    assert "GiB" not in message and "proj/pipe" in message, message
