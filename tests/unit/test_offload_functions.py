"""``read_ccob`` pinned whole against the CCOB layout of LLVM's ``OffloadBundler.cpp`` (the
bundles are built by ``tests/fixtures/bundles.py`` with Python's zlib and zstandard): where
each bundle starts and ends in a section, its fields, and every way a compressed bundle can be
wrong, each with its message."""

from __future__ import annotations

import random
import struct
import zlib

import pytest
import zstandard

from tests.fixtures.bundles import compress_bundle, make_bundle
from tests.fixtures.kpack import code_object
from toolkit.core.errors import OffloadError
from toolkit.inspect.readers.offload import (
    MAX_ENTRIES,
    MAX_HEADER_BYTES,
    MAX_ID_LEN,
    PLAIN_MAGIC,
    Bundle,
    BundleEntry,
    Stream,
    parse_fatbin,
    plain_header,
    read_bundles,
    read_ccob,
    read_plain,
)

HOST = ("host-x86_64-unknown-linux-gnu", b"")
GFX = "hipv4-amdgcn-amd-amdhsa--gfx90a"


def _noise(n: int, seed: int = 7) -> bytes:
    return random.Random(seed).randbytes(n)  # incompressible: the compressed stream is long too


def _entries(body: int) -> tuple[BundleEntry, ...]:
    return (BundleEntry("host", "x86_64-unknown-linux-gnu", "", 0),
            BundleEntry("hipv4", "amdgcn-amd-amdhsa-", "gfx90a", body))


@pytest.mark.parametrize("method", ["zlib", "zstd"])
@pytest.mark.parametrize("body", [100, 20_000, 300_000])
def test_a_version_1_bundle_ends_where_its_compressed_stream_ends(method: str, body: int) -> None:
    """v1 stores no size: the reader inflates to the stream's end, past the 4 KiB it feeds at
    a time while finding the header, and gives back what follows (the next bundle)."""
    first = compress_bundle(make_bundle([HOST, (GFX, _noise(body))], align=1), method, 1)
    second = compress_bundle(make_bundle([HOST, ("hipv4-amdgcn-amd-amdhsa--gfx942", b"x" * 50)]), "zlib", 2)
    section = first + bytes(3) + second
    for size in (1, 1000, 1 << 20):
        chunks = [section[i : i + size] for i in range(0, len(section), size)]
        a, b = read_bundles(chunks, len(section))
        assert a == Bundle(0, method, 1, _entries(body), len(first))
        assert (b.offset, b.compression, b.version, b.stored) == (len(first) + 3, "zlib", 2, len(second))
        assert [e.target for e in b.entries] == ["", "gfx942"]


@pytest.mark.parametrize("method", ["zlib", "zstd"])
def test_a_version_1_stream_cut_short_is_truncated(method: str) -> None:
    blob = compress_bundle(make_bundle([HOST, (GFX, _noise(50_000))], align=1), method, 1)
    with pytest.raises(OffloadError) as err:
        parse_fatbin(bytes(16) + blob[:-40])
    assert str(err.value) == "truncated compressed offload bundle at offset 16"


@pytest.mark.parametrize(("version", "hlen"), [(2, 24), (3, 32)])
def test_sized_versions_occupy_exactly_their_total_size(version: int, hlen: int) -> None:
    blob = compress_bundle(make_bundle([HOST, (GFX, _noise(9000))], align=1), "zstd", version)
    fmt = "<I" if version == 2 else "<Q"
    assert struct.unpack_from(fmt, blob, 8)[0] == len(blob)  # what the fixture wrote
    s = Stream([b"pre", blob, b"tail"])
    s.skip(3)
    got = read_ccob(s, 3 + len(blob))
    assert got == Bundle(3, "zstd", version, _entries(9000), len(blob))
    assert s.pos == 3 + len(blob) and s.read(10) == b"tail"
    # one byte more than the section holds: corrupt, before inflating anything
    with pytest.raises(OffloadError) as err:
        read_ccob(Stream([blob]), len(blob) - 1)
    assert str(err.value) == f"corrupt compressed offload bundle at 0: size {len(blob)}"
    # a total below the header's own length
    small = blob[:8] + struct.pack(fmt, hlen - 1) + blob[8 + struct.calcsize(fmt) :]
    with pytest.raises(OffloadError) as err:
        read_ccob(Stream([small]), len(small))
    assert str(err.value) == f"corrupt compressed offload bundle at 0: size {hlen - 1}"


def test_a_bundle_of_only_its_header_is_truncated() -> None:
    blob = b"CCOB" + struct.pack("<HHIIQ", 2, 0, 24, 100, 0)  # total == header length: no data
    with pytest.raises(OffloadError) as err:
        read_ccob(Stream([blob + bytes(8)]), 32)
    assert str(err.value) == "truncated compressed offload bundle at offset 0"


def test_a_sized_bundle_whose_data_stops_before_the_header_is_truncated() -> None:
    bundle = make_bundle([HOST, (GFX, b"")], align=1)
    payload = zlib.compress(bundle)[:10]  # a valid start of a zlib stream
    blob = b"CCOB" + struct.pack("<HHIIQ", 2, 0, 24 + len(payload), len(bundle), 0) + payload
    with pytest.raises(OffloadError) as err:
        read_ccob(Stream([blob]), len(blob))
    assert str(err.value) == "truncated compressed offload bundle at offset 0"


@pytest.mark.parametrize(("head", "message"), [
    (struct.pack("<HH", 4, 0), "compressed offload bundle: unknown header version 4"),
    (struct.pack("<HH", 0, 1), "compressed offload bundle: unknown header version 0"),
    (struct.pack("<HH", 2, 2), "compressed offload bundle: unknown compression method 2"),
])
def test_unknown_versions_and_methods(head: bytes, message: str) -> None:
    with pytest.raises(OffloadError) as err:
        read_ccob(Stream([b"CCOB" + head + bytes(40)]), 48)
    assert str(err.value) == message


def test_a_header_cut_short_names_the_version() -> None:
    for version, what in ((1, "CCOB v1 header"), (2, "CCOB v2 header"), (3, "CCOB v3 header")):
        with pytest.raises(OffloadError) as err:
            read_ccob(Stream([b"CCOB" + struct.pack("<HH", version, 0) + bytes(11)]), 100)
        assert str(err.value) == f"truncated offload bundle: {what} at offset 8"


@pytest.mark.parametrize("method", ["zlib", "zstd"])
def test_compressed_data_that_is_no_bundle(method: str) -> None:
    data = b"no bundle here, " * 10
    payload = zlib.compress(data) if method == "zlib" else zstandard.ZstdCompressor().compress(data)
    blob = b"CCOB" + struct.pack("<HHQQQ", 3, {"zlib": 0, "zstd": 1}[method], 32 + len(payload),
                                 len(data), 0) + payload
    with pytest.raises(OffloadError) as err:
        read_ccob(Stream([blob]), len(blob))
    assert str(err.value) == "compressed offload bundle does not hold a bundle"


def test_corrupt_compressed_data_names_the_offset() -> None:
    junk = bytes(range(256)) * 4
    zl = b"CCOB" + struct.pack("<HHQQQ", 3, 0, 32 + len(junk), 5000, 0) + junk
    with pytest.raises(OffloadError) as err:
        read_bundles([bytes(8), zl], 8 + len(zl))
    assert str(err.value).startswith("corrupt compressed offload bundle at offset 8: ")
    with pytest.raises(zlib.error) as zerr:  # zlib's own words follow
        zlib.decompressobj().decompress(junk)
    assert str(err.value) == f"corrupt compressed offload bundle at offset 8: {zerr.value}"
    zs = b"CCOB" + struct.pack("<HHQQQ", 3, 1, 32 + len(junk), 5000, 0) + junk
    with pytest.raises(OffloadError) as err:
        read_bundles([bytes(8), zs], 8 + len(zs))
    assert str(err.value).startswith("corrupt compressed offload bundle at 8: ")


def test_an_entry_table_larger_than_the_limit_is_refused() -> None:
    ident = b"hipv4-amdgcn-amd-amdhsa--gfx90a" + b"a" * 3969  # 4000 bytes, under MAX_ID_LEN
    count = 2 * MAX_HEADER_BYTES // (24 + len(ident))  # twice the limit: a feed adds < 1 MiB
    table = b"".join(struct.pack("<QQQ", 0, 0, len(ident)) + ident for _ in range(count))
    raw = b"__CLANG_OFFLOAD_BUNDLE__" + struct.pack("<Q", count) + table
    payload = zlib.compress(raw, 1)
    blob = b"CCOB" + struct.pack("<HHQQQ", 3, 0, 32 + len(payload), len(raw), 0) + payload
    with pytest.raises(OffloadError) as err:
        read_ccob(Stream([blob]), len(blob))
    assert str(err.value) == "compressed offload bundle: header too large"


def _plain(count: int, items: bytes = b"") -> bytes:
    return PLAIN_MAGIC + struct.pack("<Q", count) + items


def _item(offset: int, size: int, ident: bytes, id_len: int | None = None) -> bytes:
    return struct.pack("<QQQ", offset, size, len(ident) if id_len is None else id_len) + ident


def test_a_plain_bundle_read_from_a_stream_ends_at_its_furthest_entry() -> None:
    ident = GFX.encode()
    head = _plain(2, _item(200, 50, ident) + _item(100, 10, b"host-x86_64-unknown-linux-gnu"))
    body = head + bytes(250 - len(head))
    s = Stream([b"xx", body, b"next"])
    s.skip(2)
    got = read_plain(s, 2 + 250)
    assert got == Bundle(2, None, None, (BundleEntry("hipv4", "amdgcn-amd-amdhsa-", "gfx90a", 50),
                                         BundleEntry("host", "x86_64-unknown-linux-gnu", "", 10)), 250)
    assert s.pos == 252 and s.read(4) == b"next"
    with pytest.raises(OffloadError) as err:  # a byte short of the furthest entry's end
        read_plain(Stream([body]), 249)
    assert str(err.value) == "truncated offload bundle at offset 0: entries run past the end"
    # no entries at all: the bundle is its 32-byte header
    s = Stream([_plain(0) + b"rest"])
    assert read_plain(s, 100) == Bundle(0, None, None, (), 32) and s.read(4) == b"rest"


@pytest.mark.parametrize(("data", "message"), [
    (PLAIN_MAGIC + bytes(7), "truncated offload bundle: bundle header at offset 0"),
    (_plain(MAX_ENTRIES + 1), f"corrupt offload bundle: {MAX_ENTRIES + 1} entries"),
    (_plain(MAX_ENTRIES), "truncated offload bundle: bundle entry at offset 32"),  # the limit: read on
    (_plain(1, bytes(23)), "truncated offload bundle: bundle entry at offset 32"),
    (_plain(1, _item(0, 0, b"", MAX_ID_LEN + 1)),
     f"corrupt offload bundle: entry id of {MAX_ID_LEN + 1} bytes"),
    (_plain(1, _item(0, 0, b"hip", MAX_ID_LEN)), "truncated offload bundle: bundle entry id at offset 56"),
    (_plain(2, _item(0, 0, GFX.encode()) + _item(0, 0, b"x")), "bad offload bundle entry id 'x'"),
])
def test_a_malformed_plain_bundle_says_what_and_where(data: bytes, message: str) -> None:
    with pytest.raises(OffloadError) as err:
        read_plain(Stream([data]), 1 << 30)
    assert str(err.value) == message


def test_a_section_holds_at_most_16384_bundles() -> None:
    empty = _plain(0)
    assert len(read_bundles([empty * MAX_ENTRIES], 32 * MAX_ENTRIES)) == MAX_ENTRIES
    with pytest.raises(OffloadError) as err:
        read_bundles([empty * (MAX_ENTRIES + 1)], 32 * (MAX_ENTRIES + 1))
    assert str(err.value) == "more than 16384 offload bundles in one section"


@pytest.mark.parametrize("version", [1, 2, 3])
def test_a_zlib_bundle_of_long_zero_runs_is_read_whole(version: int) -> None:
    """Deflate packs a run of zeros about 1000:1, so a 1 KiB piece of input inflates past the
    1 MiB the reader takes at a time; the rest of that piece must be inflated too (Python's
    zlib reads the same stream whole: it is valid)."""
    plain = make_bundle([HOST, (GFX, bytes(8 << 20))], align=1)
    blob = compress_bundle(plain, "zlib", version)
    assert zlib.decompress(blob[{1: 20, 2: 24, 3: 32}[version]:]) == plain
    first, second = parse_fatbin(blob + bytes(16) + blob)
    assert first == Bundle(0, "zlib", version, _entries(8 << 20), len(blob))
    assert (second.offset, second.stored) == (len(blob) + 16, len(blob))


@pytest.mark.parametrize(("section", "message"), [
    (bytes(5) + b"garbage!garbage!garbage!", "unrecognised data at offset 5 of the fatbin: b'garbage!'"),
    (_plain(0) + b"CC", "unrecognised data at offset 32 of the fatbin: b'CC'"),
    (bytes(3) + PLAIN_MAGIC[:20], "unrecognised data at offset 3 of the fatbin: b'__CLANG_'"),
])
def test_a_fatbin_holds_bundles_and_zeros_only(section: bytes, message: str) -> None:
    with pytest.raises(OffloadError) as err:
        read_bundles([section], len(section))
    assert str(err.value) == message


def test_zeros_alone_or_around_bundles_are_padding() -> None:
    assert read_bundles([bytes(100)], 100) == [] and read_bundles([], 0) == []
    ccob = compress_bundle(make_bundle([HOST, (GFX, b"x")], align=1), "zlib", 2)
    section = bytes(7) + _plain(0) + bytes(9) + ccob + bytes(11)
    a, b = read_bundles([section[i : i + 3] for i in range(0, len(section), 3)], len(section))
    assert a == Bundle(7, None, None, (), 32)
    assert (b.offset, b.compression, b.version, b.stored) == (48, "zlib", 2, len(ccob))


def test_a_header_parsed_in_memory_allows_ids_up_to_the_limit() -> None:
    from toolkit.inspect.readers.offload import plain_header

    ident = GFX.encode() + b"x" * (MAX_ID_LEN - len(GFX))  # exactly MAX_ID_LEN bytes
    entries, hlen, end = plain_header(_plain(1, _item(100, 5, ident))) or ([], 0, 0)
    assert [e.target for e in entries] == ["gfx90a" + "x" * (MAX_ID_LEN - len(GFX))]
    assert (hlen, end) == (32 + 24 + MAX_ID_LEN, 32 + 24 + MAX_ID_LEN)  # past the entry's 105
    with pytest.raises(OffloadError) as err:
        plain_header(_plain(1, _item(0, 0, ident + b"x")))
    assert str(err.value) == f"corrupt offload bundle: entry id of {MAX_ID_LEN + 1} bytes"
    assert plain_header(_plain(1, _item(0, 0, ident))[:-1]) is None  # the id cut short


def test_a_bundle_whose_entries_run_past_the_section_is_an_error() -> None:
    entries = [("host-x86_64-unknown-linux-gnu", b""), ("hipv4-amdgcn-amd-amdhsa--gfx90a", b"x" * 64)]
    bundle = make_bundle(entries, align=8)
    assert read_plain(Stream([bundle]), len(bundle)).entries[1].target == "gfx90a"
    with pytest.raises(OffloadError, match="run past the end"):
        read_plain(Stream([bundle]), len(bundle) - 1)


BUNDLE_MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"  # 24 bytes, then the entry count as a 64-bit LE integer


def test_a_bundle_entry_count_is_unsigned_and_bounded() -> None:
    with pytest.raises(OffloadError, match=f"{(1 << 64) - 1} entries"):  # read as unsigned
        plain_header(BUNDLE_MAGIC + struct.pack("<Q", (1 << 64) - 1) + bytes(64))
    with pytest.raises(OffloadError, match=f"{MAX_ENTRIES + 1} entries"):
        plain_header(BUNDLE_MAGIC + struct.pack("<Q", MAX_ENTRIES + 1))
    # exactly the maximum is not refused for its count: the header is only incomplete
    assert plain_header(BUNDLE_MAGIC + struct.pack("<Q", MAX_ENTRIES)) is None
    assert plain_header(BUNDLE_MAGIC + struct.pack("<Q", 0)) == ([], 32, 32)


def test_a_bundle_cut_after_its_header_names_the_missing_entry() -> None:
    import struct

    from toolkit.core.errors import OffloadError
    from toolkit.inspect.readers.offload import Stream, read_plain

    # clang-offload-bundler: 24 bytes of magic, an 8-byte entry count, then 24 bytes per entry
    data = b"__CLANG_OFFLOAD_BUNDLE__" + struct.pack("<Q", 2)
    with pytest.raises(OffloadError) as err:
        read_plain(Stream([data]), len(data))
    assert str(err.value) == "truncated offload bundle: bundle entry at offset 32"


@pytest.mark.parametrize(("version", "size"), [(1, 12), (2, 16), (3, 24)])
def test_a_truncated_compressed_bundle_header_names_its_version(version: int, size: int) -> None:
    # the CCOB magic, u16 version, u16 method (1: zstd), then one byte short of the header
    data = b"CCOB" + struct.pack("<HH", version, 1) + bytes(size - 1)
    with pytest.raises(OffloadError) as err:
        parse_fatbin(data)
    assert str(err.value) == f"truncated offload bundle: CCOB v{version} header at offset 8"


@pytest.mark.parametrize(("version", "method", "what"), [
    (0x8001, 1, "unknown header version 32769"), (3, 0xFFFF, "unknown compression method 65535")])
def test_the_ccob_version_and_method_are_unsigned(version: int, method: int, what: str) -> None:
    # clang-offload-bundler: u16 version, u16 method after the magic
    with pytest.raises(OffloadError) as err:
        parse_fatbin(b"CCOB" + struct.pack("<HH", version, method) + bytes(32))
    assert str(err.value) == f"compressed offload bundle: {what}"


@pytest.mark.parametrize("version", [1, 2, 3])
def test_a_compressed_bundle_of_just_a_header_has_no_entries(version: int) -> None:
    from tests.fixtures.bundles import compress_bundle, make_bundle

    empty = make_bundle([], align=1)
    assert len(empty) == 32  # the magic and a zero entry count: the smallest plain bundle
    (b,) = parse_fatbin(compress_bundle(empty, "zlib", version))
    assert (b.entries, b.version, b.compression) == ((), version, "zlib")


def test_a_compressed_bundles_bytes_are_shared_by_its_entries_pro_rata() -> None:
    from tests.fixtures.bundles import compress_bundle, make_bundle

    plain = make_bundle([("host-x86_64-unknown-linux-gnu", b""),
                         ("hipv4-amdgcn-amd-amdhsa--gfx90a", bytes(3000)),
                         ("hipv4-amdgcn-amd-amdhsa--gfx942", bytes(1000))])
    blob = compress_bundle(plain, "zlib", 3)
    (b,) = parse_fatbin(blob)
    assert b.stored == len(blob)
    host, a, c = b.entries
    assert (host.size, a.size, c.size) == (0, 3000, 1000)  # the sizes of the entry table
    assert (b.stored_bytes(a), b.stored_bytes(c)) == (round(len(blob) * 3 / 4), round(len(blob) / 4))
    (p,) = parse_fatbin(plain)
    assert p.stored_bytes(p.entries[1]) == 3000  # a plain bundle: the entry's own bytes


def test_a_host_entry_without_an_environment_keeps_its_triple() -> None:
    from toolkit.inspect.readers.offload import parse_entry_id

    # clang-offload-bundler entry ids are <kind>-<triple>[-<target id>]; older hosts name a
    # three-part triple
    e = parse_entry_id("host-x86_64-unknown-linux", 7)
    assert (e.kind, e.triple, e.target, e.is_device, e.size) == ("host", "x86_64-unknown-linux", "", False, 7)


def test_a_compressed_bundle_is_not_inflated_far_past_its_probe_window() -> None:
    """README: in a compressed bundle the entries within 64 KiB past its entry table have their
    code objects' headers read, and it is not inflated further. An entry within that window
    followed by a 2 MiB run of zeros (deflate packs it about 1000:1, into one 4 KiB piece of
    input with the next entry's header, wherever the pieces start: the noise before it shifts
    them) has its target read; the entry 2 MiB on has none."""
    for n in range(16_000, 20_096, 512):
        plain = make_bundle([
            ("hipv4-amdgcn-amd-amdhsa--gfx90a", code_object("gfx90a", 64) + _noise(n)),
            ("hipv4-amdgcn-amd-amdhsa--gfx908", code_object("gfx908", 64) + bytes(2 << 20)),
            ("hipv4-amdgcn-amd-amdhsa--gfx942", code_object("gfx942", 4096)),
        ], align=1)
        blob = compress_bundle(plain, "zlib", 3)
        (bundle,) = parse_fatbin(blob)
        assert bundle.stored == len(blob)
        assert [e.code_target for e in bundle.entries] == ["gfx90a", "gfx908", None], n


def test_a_section_ending_inside_the_ccob_magic_and_version_names_the_compressed_header_and_where() -> None:
    # after 16 bytes of zero padding, the CCOB magic and a u16 version, but no u16 method: the
    # 8-byte start every CCOB header has (OffloadBundler.cpp) is cut short where the bundle starts
    with pytest.raises(OffloadError) as err:
        parse_fatbin(bytes(16) + b"CCOB" + struct.pack("<H", 2))
    said = str(err.value)
    assert said.startswith("truncated offload bundle: ")
    assert said.endswith("compressed bundle header at offset 16")


def test_a_plain_bundle_entry_id_length_is_unsigned_and_bounded() -> None:
    """clang's OffloadBundler reads an entry's id length as a uint64_t: all 64 bits set is
    2**64 - 1 bytes, far past the id limit, refused at that entry; not -1, a length that
    would swallow the buffered bytes so the next entry's read found the stream cut short."""
    huge = (1 << 64) - 1
    data = _plain(2, _item(0, 0, b"", huge) + _item(0, 0, GFX.encode())) + bytes(64)
    with pytest.raises(OffloadError) as err:
        read_plain(Stream([data]), 1 << 30)
    assert "corrupt" in str(err.value) and f"{huge} bytes" in str(err.value)
