"""Where the GPU-code patterns were seen (``Hits``), asked for sub-ranges: only whole patterns
inside a range count, at offsets from its start (the places found by ``bytes.find`` here);
the CCOB v3 header's sizes are unsigned 64-bit (clang-offload-bundler's
``CompressedOffloadBundle``: u64 total size, u64 uncompressed size, u64 hash); and the
distribution table's glibc versions as numbers (PEP 600 compares glibc as major.minor)."""

from __future__ import annotations

import struct

import pytest

from tests.fixtures.bundles import compress_bundle, make_bundle
from toolkit.core.errors import OffloadError
from toolkit.inspect.readers import distros
from toolkit.inspect.readers.gpuscan import Hits
from toolkit.inspect.readers.offload import parse_fatbin

# where an AMDGPU code object can start: the ELF magic, ELFCLASS64, ELFDATA2LSB, EV_CURRENT,
# ELFOSABI_AMDGPU_HSA (64: LLVM's AMDGPUUsage); a bundle's magics (clang's offload bundler)
ELF, PLAIN, CCOB = b"\x7fELF\x02\x01\x01\x40", b"__CLANG_OFFLOAD_BUNDLE__", b"CCOB"


def _data() -> tuple[bytes, list[tuple[int, bytes]]]:
    host_elf = b"\x7fELF\x02\x01\x01\x00"  # OS ABI 0: a host ELF header, no place
    data = (bytes(100) + ELF + bytes(50) + host_elf + PLAIN + bytes(30) + CCOB + bytes(20) + ELF
            + bytes(10))
    places = sorted((i, p) for p in (ELF, PLAIN, CCOB) for i in range(len(data))
                    if data.startswith(p, i))
    return data, places


def _hits(data: bytes, chunk: int) -> Hits:
    h = Hits([(0, len(data))])
    for off in range(0, len(data), chunk):
        h.feed(off, data[off : off + chunk])
    return h


@pytest.mark.parametrize("chunk", [7, 64, 1000])
def test_within_keeps_only_whole_patterns_inside_the_range(chunk: int) -> None:
    data, places = _data()
    h = _hits(data, chunk)
    assert h.within(0, len(data)) == places
    for start in range(0, len(data), 5):
        for end in range(start, len(data) + 1, 9):
            want = [(at - start, p) for at, p in places if at >= start and at + len(p) <= end]
            assert h.within(start, end) == want, (start, end)
    elf_at = places[0][0]
    assert h.within(elf_at, elf_at + 8) == [(0, ELF)]  # exactly fits
    assert h.within(elf_at, elf_at + 7) == []  # cut at the end
    assert h.within(elf_at + 1, elf_at + 200) == [(p - elf_at - 1, q) for p, q in places[1:]]


def test_searched_ranges_cover_only_what_was_fed() -> None:
    h = Hits([(0, 1000)])
    h.feed(0, bytes(100))
    h.feed(100, bytes(100))  # continues the first: one range [0, 200]
    h.feed(500, bytes(50))
    assert h.covers(0, 200) and h.covers(10, 20) and h.covers(500, 550)
    assert not h.covers(0, 201) and not h.covers(150, 520) and not h.covers(499, 510)
    h.feed(2000, ELF)  # outside every range: not searched
    assert not h.covers(2000, 2008) and h.within(0, 5000) == []


def _v3(total: int) -> bytes:
    ccob = compress_bundle(make_bundle([], align=1), "zlib", 3)
    return ccob[:8] + struct.pack("<Q", total) + ccob[16:]


@pytest.mark.parametrize("total", [1 << 63, (1 << 64) - 1, 1 << 40])
def test_a_ccob_v3_size_is_unsigned(total: int) -> None:
    with pytest.raises(OffloadError) as err:
        parse_fatbin(_v3(total))
    assert str(err.value) == f"corrupt compressed offload bundle at 0: size {total}"


def test_a_ccob_v3_size_below_its_header_is_corrupt() -> None:
    with pytest.raises(OffloadError) as err:
        parse_fatbin(_v3(31))
    assert str(err.value) == "corrupt compressed offload bundle at 0: size 31"


@pytest.mark.parametrize(("glibc", "want"), [("2.17", (2, 17)), ("2.5", (2, 5)), ("2.39", (2, 39))])
def test_a_distribution_glibc_is_compared_as_numbers(glibc: str, want: tuple[int, int]) -> None:
    d = distros._distro("Demo", glibc, "8")
    assert (d.name, d.glibc, d.gcc) == ("Demo", want, "8")
    assert dict(d.maxima) == {"GLIBCXX": "3.4.25", "CXXABI": "1.3.11", "GCC": "7.0.0"}
    assert distros._distro("x", "2.5", "4.8").glibc < distros._distro("x", "2.17", "4.8").glibc


def test_the_runtime_every_newer_distribution_ships() -> None:
    # glibc 2.28 or newer: RHEL 8 and Debian 10 ship GCC 8's runtime, the oldest of the rest
    assert distros.runtime_maxima(28) == {"GLIBCXX": "3.4.25", "CXXABI": "1.3.11", "GCC": "7.0.0"}
    assert distros.runtime_maxima(39) == {"GLIBCXX": "3.4.33", "CXXABI": "1.3.15", "GCC": "14.0.0"}
    assert distros.runtime_maxima(42) is None


def test_a_gcc_runtime_row_names_the_version_node_prefixes() -> None:
    # libstdc++'s nodes are GLIBCXX_3.4.x and CXXABI_1.3.x, libgcc_s's GCC_x.y.z
    assert distros._gcc("3.4.1", "1.3.2", "4.0.0") == (("GLIBCXX", "3.4.1"), ("CXXABI", "1.3.2"),
                                                       ("GCC", "4.0.0"))
