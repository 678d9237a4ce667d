"""Clang offload bundles: plain and CCOB (v1/v2/v3, zlib/zstd), concatenated, streamed."""

from __future__ import annotations

import struct

import pytest

from tests.fixtures.bundles import compress_bundle, make_bundle
from toolkit.core.errors import OffloadError
from toolkit.inspect.readers.offload import gpu_targets, parse_entry_id, parse_fatbin, read_bundles

HOST = ("host-x86_64-unknown-linux-gnu", b"")


def _bundle(*targets: str) -> bytes:
    return make_bundle([HOST, *((f"hipv4-amdgcn-amd-amdhsa--{t}", b"\x7fELF" + bytes(200)) for t in targets)])


def test_entry_ids() -> None:
    e = parse_entry_id("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+")
    assert (e.kind, e.triple, e.target, e.is_device) == ("hipv4", "amdgcn-amd-amdhsa-", "gfx90a:xnack+", True)
    assert parse_entry_id("hip-amdgcn-amd-amdhsa-unknown-gfx9-4-generic").target == "gfx9-4-generic"
    assert not parse_entry_id("host-x86_64-unknown-linux-gnu").is_device
    with pytest.raises(OffloadError):
        parse_entry_id("garbage")


def test_plain_bundle_targets_ignore_host() -> None:
    bundles = parse_fatbin(_bundle("gfx908:xnack-", "gfx90a"))
    assert len(bundles) == 1 and bundles[0].compression is None
    assert gpu_targets(bundles) == ("gfx908:xnack-", "gfx90a")


@pytest.mark.parametrize("method", ["zlib", "zstd"])
@pytest.mark.parametrize("version", [1, 2, 3])
def test_compressed_bundles(method: str, version: int) -> None:
    blob = compress_bundle(_bundle("gfx942"), method, version)
    method_id = {"zlib": 0, "zstd": 1}[method]
    assert blob[:4] == b"CCOB" and struct.unpack_from("<HH", blob, 4) == (version, method_id)
    (b,) = parse_fatbin(blob)
    assert (b.compression, b.version, gpu_targets([b])) == (method, version, ("gfx942",))


def test_several_bundles_with_padding_streamed_in_tiny_chunks() -> None:
    section = b"".join(
        [
            _bundle("gfx90a"),
            b"\0" * 4093,
            compress_bundle(_bundle("gfx942"), "zstd", 3),
            b"\0" * 5,
            compress_bundle(_bundle("gfx1100"), "zlib", 1),
            _bundle("gfx908"),
        ]
    )
    whole = parse_fatbin(section)
    chunks = [section[i : i + 7] for i in range(0, len(section), 7)]
    streamed = read_bundles(iter(chunks), len(section))
    assert whole == streamed
    assert [gpu_targets([b]) for b in whole] == [("gfx90a",), ("gfx942",), ("gfx1100",), ("gfx908",)]


@pytest.mark.parametrize(
    ("data", "match"),
    [
        (b"garbage!" * 4, "unrecognised"),
        (b"__CLANG_OFFLOAD_BUNDLE__" + struct.pack("<Q", 1 << 40), "entries"),
        (_bundle("gfx90a")[:40], "truncated"),
        (b"CCOB" + struct.pack("<HH", 9, 0) + bytes(32), "version"),
        (b"CCOB" + struct.pack("<HH", 3, 7) + bytes(32), "method"),
        (b"CCOB" + struct.pack("<HHQQQ", 3, 1, 10**12, 5, 0) + bytes(8), "size"),
        (b"CCOB" + struct.pack("<HHQQQ", 3, 1, 60, 5, 0) + bytes(28), "corrupt"),
    ],
)
def test_malformed_bundles(data: bytes, match: str) -> None:
    with pytest.raises(OffloadError, match=match):
        parse_fatbin(data)


def test_bundle_running_past_the_section() -> None:
    data = bytearray(_bundle("gfx90a"))
    with pytest.raises(OffloadError, match="truncated|past"):
        parse_fatbin(bytes(data[:-50]))


def test_a_compressed_bundle_is_inflated_only_until_its_entry_table(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 11: reading the targets of a large CCOB bundle must not decompress all of it."""
    import os

    from toolkit.inspect.readers import offload

    entries = [(f"hipv4-amdgcn-amd-amdhsa--gfx{n}", os.urandom(4 << 20)) for n in (908, 942)]
    big = make_bundle([HOST, *entries])
    blob = compress_bundle(big, "zstd", 3)
    fed: list[int] = []
    real = offload._Inflater.feed

    def counting(self: offload._Inflater, data: bytes, max_out: int) -> bytes:
        fed.append(len(data))
        return real(self, data, max_out)

    monkeypatch.setattr(offload._Inflater, "feed", counting)
    (b,) = parse_fatbin(blob)
    assert gpu_targets([b]) == ("gfx908", "gfx942") and b.stored == len(blob)
    assert sum(fed) <= 1 << 17 < len(blob)  # a piece or two of the 8 MiB, never the whole
