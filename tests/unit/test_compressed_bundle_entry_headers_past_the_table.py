"""A compressed offload bundle's entries each start with their code object's ELF header,
whose e_flags name the processor the code is for (LLVM's EF_AMDGPU_MACH; the code objects
below are built by tests/fixtures/kpack.py from LLVM's values). When the entry table and the
first entries inflate to less than where a later entry starts, the reader must inflate on,
within its probe budget, to read that entry's header too: a mislabelled entry past
incompressible code is still found."""

from __future__ import annotations

import os

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
