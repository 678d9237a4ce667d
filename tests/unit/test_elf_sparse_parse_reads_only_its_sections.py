"""A wheel member is parsed from a sparse image: ``parse_elf`` asks (``NeedRanges``) for the
byte ranges it reads and the member is inflated again for those only. It asks for the header,
the section header table, the section names and the dynamic tables (``.dynsym``, ``.dynstr``,
``.dynamic``, ``.gnu.version*``), never a section a link of 0 names: index 0 is SHN_UNDEF,
"no section" (gABI "Sections"), so its header's offset and size mean nothing. The library is
gcc's; where each section lies is readelf's. A table it was handed as a piece of its own is
read in place: the parse allocates (``tracemalloc``) far less than that table, never a second
copy of it."""

from __future__ import annotations

import struct
import tracemalloc
from pathlib import Path

import pytest

from tests.fixtures import crafted_elf
from tests.fixtures.native import compile_shared, section
from tests.fixtures.sparse import rounds
from toolkit.inspect.readers.elf import Image, parse_elf


@pytest.fixture(scope="module")
def patched(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, bytes]:
    """A gcc library with ``.dynamic``'s sh_link set to 0 and section 0's header pointing at
    ``.text`` (offset and size)."""
    lib = compile_shared(tmp_path_factory.mktemp("sparse"), "libs.so",
                         "#include <string.h>\nsize_t f(const char *s) { return strlen(s); }\n", lang="c")
    data = bytearray(lib.read_bytes())
    shoff, = struct.unpack_from("<Q", data, 0x28)  # Elf64_Ehdr e_shoff
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    text_at, text_size = section(lib, ".text")
    struct.pack_into("<QQ", data, shoff + 24, text_at, text_size)  # section 0: sh_offset, sh_size
    for i in range(1, shnum):
        entry = shoff + i * shentsize
        if struct.unpack_from("<I", data, entry + 4)[0] == 6:  # SHT_DYNAMIC
            struct.pack_into("<I", data, entry + 40, 0)  # its sh_link: SHN_UNDEF
    out = lib.with_name("libpatched.so")
    out.write_bytes(bytes(data))
    return out, bytes(data)


def test_a_sparse_parse_asks_only_for_the_sections_it_reads(patched: tuple[Path, bytes]) -> None:
    lib, data = patched
    _, info, by_round = rounds(data, most=10)
    asked = [r for each in by_round for r in each]
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    allowed = [(0, 64), (shoff, shoff + shentsize * shnum)]
    for name in (".shstrtab", ".dynsym", ".dynstr", ".dynamic", ".gnu.version", ".gnu.version_r"):
        at, size = section(lib, name)
        allowed.append((at, at + size))
    text_at, text_size = section(lib, ".text")
    assert text_size > 0 and (text_at, text_at + text_size) not in asked
    assert asked and all(any(a <= x <= y <= b for a, b in allowed) for x, y in asked), (asked, allowed)
    # the same facts as the file read whole: f defined, strlen needed at its glibc version,
    # and no NEEDED read from a .dynamic whose string table is "no section"
    whole = parse_elf(Image.whole(data))
    assert info == whole
    assert b"f" in whole.defined and whole.needed == ()
    assert (b"strlen", "GLIBC_2.2.5") in whole.undefined


def test_a_table_handed_over_as_its_own_piece_is_read_without_a_copy() -> None:
    """An 8 MiB ``.dynstr`` (one DT_NEEDED name, then NULs: crafted_elf's layout) inflated as
    the range the parse asked for: parsing the image again with every range held allocates
    less than a tenth of that table (a copy would be all of it)."""
    big = 8 << 20
    data = crafted_elf.shared_object(dynstr=b"\0libdep.so.1\0" + bytes(big),
                                     dynamic=crafted_elf.dynamic([(crafted_elf.DT_NEEDED, 1)]))
    img, _, _ = rounds(data, most=10)  # every range the parse asks for, each its own piece
    tracemalloc.start()
    try:
        info = parse_elf(img)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert info.needed == ("libdep.so.1",)
    assert peak < big // 10, peak
