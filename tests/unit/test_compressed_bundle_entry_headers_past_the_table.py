"""A compressed offload bundle's entries each start with their code object's ELF header,
whose e_flags name the processor the code is for (LLVM's EF_AMDGPU_MACH; the code objects
below are built by tests/fixtures/kpack.py from LLVM's values). When the entry table and the
first entries inflate to less than where a later entry starts, the reader must inflate on,
within its probe budget, to read that entry's header too: a mislabelled entry past
incompressible code is still found."""

from __future__ import annotations

import os
import struct

import pytest

from tests.fixtures.bundles import compress_bundle, make_bundle
from tests.fixtures.kpack import code_object
from toolkit.inspect.readers.offload import parse_fatbin

HOST = ("host-x86_64-unknown-linux-gnu", b"")


@pytest.mark.parametrize(("method", "version"), [("zstd", 3), ("zlib", 2)])
def test_an_entry_header_past_incompressible_code_is_read(method: str, version: int) -> None:
    first = code_object("gfx908", 24 << 10, fill=os.urandom(24 << 10))  # 24 KiB, incompressible
    second = code_object("gfx90a", 8 << 10)  # its id below says gfx942: mislabelled
    plain = make_bundle([HOST, ("hipv4-amdgcn-amd-amdhsa--gfx908", first),
                         ("hipv4-amdgcn-amd-amdhsa--gfx942", second)])
    (b,) = parse_fatbin(compress_bundle(plain, method, version))
    got = {e.target: (e.code_target, e.mislabelled) for e in b.entries if e.is_device}
    assert got == {"gfx908": ("gfx908", False), "gfx942": ("gfx90a", True)}


@pytest.mark.parametrize("compressed", [False, True])
def test_an_entry_overlapping_the_table_does_not_hide_the_entries_after_it(compressed: bool) -> None:
    """A device entry whose offset (rewritten here to 0) lies inside the bundle's own header
    is passed before it is reached and is left unread; the entry after it, in offset order,
    must still have its ELF header read (its id says gfx942, its code is gfx90a)."""
    first = code_object("gfx908", 4 << 10)
    second = code_object("gfx90a", 4 << 10)
    ids = [HOST[0], "hipv4-amdgcn-amd-amdhsa--gfx908", "hipv4-amdgcn-amd-amdhsa--gfx942"]
    plain = bytearray(make_bundle([HOST, (ids[1], first), (ids[2], second)]))
    # the table: magic (24), count (u64), then per entry u64 offset, size, id length, the id
    at = 32 + 24 + len(ids[0])
    struct.pack_into("<Q", plain, at, 0)  # the gfx908 entry now starts at the bundle's start
    (b,) = parse_fatbin(compress_bundle(bytes(plain)) if compressed else bytes(plain))
    got = {e.target: (e.offset, e.code_target, e.mislabelled) for e in b.entries if e.is_device}
    assert got["gfx942"][1:] == ("gfx90a", True)
    assert got["gfx908"][:2] == (0, None)
