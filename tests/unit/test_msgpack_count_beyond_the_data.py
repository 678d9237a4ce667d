"""A MessagePack container whose declared item count cannot fit in the bytes left is refused
up front, with the count and the bytes left named (the MessagePack spec: fixarray 0x9N holds
N items, fixmap 0x8N holds N key/value pairs; each item takes at least one byte)."""

from __future__ import annotations

import pytest

from toolkit.core.errors import KpackError
from toolkit.inspect.readers.msgpack import unpack


def test_an_array_declaring_more_items_than_bytes_left() -> None:
    with pytest.raises(KpackError) as err:
        unpack(bytes([0x92, 0x01]), "toc")  # fixarray of 2, one byte left
    assert "declares 2 items with 1 bytes left" in str(err.value)


def test_a_map_declaring_more_pairs_than_bytes_left() -> None:
    # fixmap of 2 pairs (at least 4 bytes), then 3 bytes: fixstr "a" and 0x01
    with pytest.raises(KpackError) as err:
        unpack(bytes([0x82, 0xA1, 0x61, 0x01]), "toc")
    assert "declares 2 items with 3 bytes left" in str(err.value)


def test_a_count_that_fits_is_read() -> None:
    assert unpack(bytes([0x92, 0x01, 0x02]), "toc") == ([1, 2], 3)
