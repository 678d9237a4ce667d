"""Tests for mutants of toolkit/inspect that survived a sampled `nox -s mutants` run (issue 19).

Each asserts against a truth outside the checker: the ELF and clang-offload-bundler formats, the
glibc release that introduced a feature, or a value worked out by hand.
"""

from __future__ import annotations

import struct

import pytest

from toolkit.core.errors import OffloadError
from toolkit.inspect.checks import _kind
from toolkit.inspect.readers.amdgpu import code_object_at, needs_note
from toolkit.inspect.readers.elf import ElfInfo
from toolkit.inspect.readers.gpuscan import CodeObject
from toolkit.inspect.readers.offload import MAX_ENTRIES, plain_header
from toolkit.inspect.readers.policy import _allowed
from toolkit.inspect.report import WheelResult
from toolkit.inspect.rules.gpu import library_code
from toolkit.inspect.rules.variants import identical_findings

PLAIN_MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"  # 24 bytes, then the entry count as a 64-bit LE integer


@pytest.mark.parametrize(("e_type", "kind"), [(1, "object"), (2, "executable"), (3, "shared-library"),
                                              (4, "other")])
def test_the_kind_of_an_elf_file_is_its_e_type(e_type: int, kind: str) -> None:
    # System V gABI: ET_REL 1, ET_EXEC 2, ET_DYN 3, ET_CORE 4
    assert _kind(ElfInfo(machine=62, elf_class=64, type=e_type)) == kind


def test_dt_relr_needs_glibc_2_36() -> None:
    # glibc 2.36 NEWS: "Support for DT_RELR relative relocation format has been added"; binaries
    # using it need the GLIBC_ABI_DT_RELR version node
    assert _allowed("GLIBC", "ABI_DT_RELR", 36, {}) and not _allowed("GLIBC", "ABI_DT_RELR", 35, {})
    assert _allowed("GLIBC", "2.17", 17, {}) and not _allowed("GLIBC", "2.18", 17, {})


def test_a_bundle_entry_count_is_unsigned_and_bounded() -> None:
    with pytest.raises(OffloadError, match=f"{(1 << 64) - 1} entries"):  # read as unsigned
        plain_header(PLAIN_MAGIC + struct.pack("<Q", (1 << 64) - 1) + bytes(64))
    with pytest.raises(OffloadError, match=f"{MAX_ENTRIES + 1} entries"):
        plain_header(PLAIN_MAGIC + struct.pack("<Q", MAX_ENTRIES + 1))
    # exactly the maximum is not refused for its count: the header is only incomplete
    assert plain_header(PLAIN_MAGIC + struct.pack("<Q", MAX_ENTRIES)) is None
    assert plain_header(PLAIN_MAGIC + struct.pack("<Q", 0)) == ([], 32, 32)


def test_only_a_v2_object_without_a_processor_keeps_its_isa_in_a_note() -> None:
    # LLVM AMDGPUUsage: code object v2 (EI_ABIVERSION 0) has EF_AMDGPU_MACH 0
    assert needs_note("unknown-amdgpu-mach-0x00", 0)
    assert not needs_note("unknown-amdgpu-mach-0x00", 1) and not needs_note("gfx90a", 0)


def _header(phoff: int, phnum: int) -> bytes:
    ident = b"\x7fELF" + bytes([2, 1, 1, 64, 3]) + bytes(7)  # ELFCLASS64, LE, HSA ABI v5
    # e_type ET_DYN, e_machine EM_AMDGPU (224), e_flags 0x4C (gfx942), 56-byte program headers
    return ident + struct.pack("<HHIQQQIHHHHHH", 3, 224, 1, 0, phoff, 0, 0x4C, 64, 56, phnum, 64, 0, 0)


def test_a_code_objects_program_headers_must_lie_inside_its_room() -> None:
    head = _header(phoff=64, phnum=2)  # the table ends at 64 + 2 * 56 = 176
    assert code_object_at(head, 176) == ("gfx942", 176)
    assert code_object_at(head, 175) is None


def test_the_hsa_runtimes_own_kernels_are_named_as_such() -> None:
    objs = [CodeObject("gfx90a", 100, ".rodata (raw ELF)"), CodeObject("gfx90a", 50, ".rodata (raw ELF)")]
    code, where = library_code(objs, "usr/lib/x86_64-linux-gnu/libhsa-runtime64.so.1.5.0")
    assert where == ["2 code objects in .rodata (raw ELF): the HSA runtime's own embedded kernels"]
    assert (code["gfx90a"].code_objects, code["gfx90a"].bytes) == (2, 150)
    _, plain = library_code(objs[:1], "pkg/lib/libmine.so")
    assert plain == ["1 code object in .rodata (raw ELF)"]


def test_identical_wheels_name_each_other_by_file_name() -> None:
    a = WheelResult("out/x/apex-1.0+rocm7.0-cp312-cp312-linux_x86_64.whl", version="1.0+rocm7.0",
                    content_key="k")
    b = WheelResult("out/y/apex-1.0+rocm7.1-cp312-cp312-linux_x86_64.whl", version="1.0+rocm7.1",
                    content_key="k")
    identical_findings([a, b])
    (fa,) = a.findings
    assert fa.message.startswith("apex-1.0+rocm7.0-cp312-cp312-linux_x86_64.whl is identical to "
                                 "apex-1.0+rocm7.1-cp312-cp312-linux_x86_64.whl apart from")


def test_rpath_entries_are_classified_as_ld_so_reads_them() -> None:
    from toolkit.inspect.rules.hygiene import classify_rpath

    assert classify_rpath("", "pkg/x.so", {"pkg"}) == "empty"  # an empty entry: the current folder
    # ld.so(8): $ORIGIN and ${ORIGIN} are the same token
    for origin in ("$ORIGIN", "${ORIGIN}"):
        assert classify_rpath(f"{origin}/../pkg.libs", "pkg/x.so", {"pkg", "pkg.libs"}) is None
        assert classify_rpath(f"{origin}/../../..", "pkg/x.so", {"pkg"}) == "leaves"


def test_an_elf_header_is_described_by_class_encoding_and_machine() -> None:
    from toolkit.inspect.rules.machine import describe

    # EM_X86_64 is 62 (System V gABI machine numbers)
    assert describe(64, True, 62) == "64-bit little-endian x86-64"
    assert describe(32, False, 0x9999).startswith("32-bit big-endian machine ")


def test_a_library_is_attributed_to_the_requirement_named_after_it() -> None:
    from toolkit.inspect.rules.needed import _required_package

    assert _required_package("libtbb.so.12", ["numpy", "tbb"]) == "tbb"
    assert _required_package("libTBB.so.12", ["tbb-devel"]) == "tbb-devel"  # names are lower-case
    assert _required_package("libnuma.so.1", ["tbb"]) is None
