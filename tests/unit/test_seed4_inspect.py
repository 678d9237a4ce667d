"""What a user reads when an inspected wheel or file is wrong (survivors of the seed-4
`nox -s mutants` sample, issue 19).

The truths: zipfile (an archive may hold one name twice), PEP 376/427 RECORD (hash and size
per member), a zero-byte file is no ELF (the ELF header is 52 or 64 bytes), and messages
worked out by hand.
"""

from __future__ import annotations

import warnings
import zipfile
from pathlib import Path

import pytest

from toolkit.core.errors import ElfError
from toolkit.inspect.readers.members import load_file
from toolkit.inspect.readers.resolver import Lib
from toolkit.inspect.readers.wheelzip import Budget, WheelZip
from toolkit.inspect.report import LibraryResult, WheelResult
from toolkit.inspect.rules.record import Entry, record_findings
from toolkit.inspect.rules.symbols import Unresolved, report_unresolved


def test_a_record_size_mismatch_names_its_cause() -> None:
    # PEP 376: RECORD gives each member's size; a member whose hash agrees but size does not
    (f,) = record_findings({"b.py": Entry("sha256", "sha256=B", 3)}, {"b.py": ("sha256=B", 4)},
                           set())
    assert (f.check, f.severity, f.library, f.cause, f.message) == (
        "record", "error", "b.py", "size differs from RECORD", "b.py: RECORD says 3 bytes, the member has 4")


def test_a_duplicate_archive_entry_is_a_problem_of_that_member(tmp_path: Path) -> None:
    path = tmp_path / "pkg-1.0-py3-none-any.whl"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns on the duplicate name, and writes it
        with zipfile.ZipFile(path, "w") as zf:
            zf.writestr("pkg/a.py", b"1")
            zf.writestr("pkg/a.py", b"2")
    assert [i.filename for i in zipfile.ZipFile(path).infolist()] == ["pkg/a.py", "pkg/a.py"]
    with WheelZip.open(path, Budget()) as wz:
        assert [(p.member, p.message) for p in wz.problems] == [
            ("pkg/a.py", "duplicate archive entry 'pkg/a.py'")]


def test_an_empty_file_is_named_as_such(tmp_path: Path) -> None:
    empty = tmp_path / "libempty.so"
    empty.write_bytes(b"")
    with pytest.raises(ElfError) as err:
        load_file(empty)
    assert str(err.value) == "empty file"


def test_a_symbol_version_no_loaded_library_names_falls_back_to_the_providers() -> None:
    # the symbol's version node (FOO_1) is not one any loaded library defines
    wheel = WheelResult("pkg-1.0-cp312-cp312-linux_x86_64.whl")
    p = Unresolved(wheel, Lib("pkg/libx.so", "wheel:pkg", None),
                   LibraryResult("pkg/libx.so", "shared-library"), [(b"foo", "FOO_1")],
                   providers=["/l/liba.so"], version_files={"BAR_2": "libbar.so.2"})
    report_unresolved([p], {})
    (f,) = wheel.findings
    assert "(defined by none of liba.so)" in f.message


def test_a_bundle_cut_after_its_header_names_the_missing_entry() -> None:
    import struct

    from toolkit.core.errors import OffloadError
    from toolkit.inspect.readers.offload import Stream, read_plain

    # clang-offload-bundler: 24 bytes of magic, an 8-byte entry count, then 24 bytes per entry
    data = b"__CLANG_OFFLOAD_BUNDLE__" + struct.pack("<Q", 2)
    with pytest.raises(OffloadError) as err:
        read_plain(Stream([data]), len(data))
    assert str(err.value) == "truncated offload bundle: bundle entry at offset 32"


def test_code_objects_of_a_plain_bundle_say_where_and_how_they_were_found() -> None:
    from tests.fixtures.bundles import make_bundle
    from toolkit.inspect.readers.gpuscan import _from_bundle
    from toolkit.inspect.readers.offload import Stream, read_plain

    data = make_bundle([("host-x86_64-unknown-linux-gnu-", b""),
                        ("hipv4-amdgcn-amd-amdhsa--gfx90a", b"\x7fELF" + bytes(60))])
    objs = _from_bundle(read_plain(Stream([data]), len(data)), ".hip_fatbin")
    assert [(o.target, o.where) for o in objs] == [("gfx90a", ".hip_fatbin (bundle)")]


def test_an_isa_name_is_gfx_then_letters_and_digits_only() -> None:
    from tests.fixtures.handmade_elf import code_object_v2, isa_name_note
    from toolkit.inspect.readers.amdgpu import note_target

    # AMDGPUUsage processor names are gfx followed by alphanumerics
    assert note_target(code_object_v2(isa_name_note("amdgcn-amd-amdhsa--gfx9"))) == "gfx9"
    assert note_target(code_object_v2(isa_name_note("amdgcn-amd-amdhsa--gfx_90a"))) is None


def _true_elf() -> bytearray:
    data = bytearray(Path("/bin/true").read_bytes())
    assert data[:4] == b"\x7fELF" and data[4] == 2 and data[5] == 1  # ELF64, little-endian
    return data


def test_a_read_past_the_end_names_the_data_offset_and_size() -> None:
    from toolkit.inspect.readers.elf import Image

    with pytest.raises(ElfError) as err:
        Image.whole(memoryview(b"1234")).view(2, 10)
    assert str(err.value) == ("truncated or corrupt ELF: data at offset 2 (+10) lies past the end "
                              "of the file (4 bytes)")


def test_a_section_name_index_one_past_the_last_section_reads_no_names() -> None:
    import struct

    from toolkit.inspect.readers.elf import read_elf_bytes

    # ELF64 header: e_shnum at 60, e_shstrndx at 62; index shnum names no section
    data = _true_elf()
    (shnum,) = struct.unpack_from("<H", data, 60)
    struct.pack_into("<H", data, 62, shnum)
    info = read_elf_bytes(bytes(data))
    assert info.needed == ("libc.so.6",)  # readelf -d /bin/true: NEEDED libc.so.6


def test_a_file_without_section_headers_says_it_has_none() -> None:
    import struct

    from toolkit.inspect.readers.elf import read_elf_bytes

    data = _true_elf()
    struct.pack_into("<Q", data, 40, 0)  # ELF64 e_shoff
    struct.pack_into("<HH", data, 60, 0, 0)  # e_shnum, e_shstrndx
    info = read_elf_bytes(bytes(data))
    assert info.has_sections is False
    assert info.problems and info.problems[0].startswith("no section headers")


def test_read_elf_bytes_packs_the_defined_names_when_asked() -> None:
    from toolkit.inspect.readers.elf import read_elf_bytes

    data = bytes(_true_elf())
    plain, packed = read_elf_bytes(data), read_elf_bytes(data, pack=True)
    assert plain.packed is None and plain.defined
    assert packed.packed is not None and packed.defined == frozenset()


def test_a_rocm_library_names_the_per_family_sdk_package_the_wheel_requires() -> None:
    from toolkit.inspect.rules.needed import Missing, missing_findings

    # TheRock's per-family SDK packages are rocm-sdk-libraries-<family> (canonical, lowercase)
    (f,) = missing_findings(Missing("libamdhip64.so.7", "pkg/x.so", "pkg/x.so"), policy="manylinux_2_28",
                            requires=["rocm-sdk-libraries-gfx94x-dcgpu", "numpy"], excludes=[])
    assert f.severity == "warning"
    assert "provided by rocm-sdk (Requires-Dist: rocm-sdk-libraries-gfx94x-dcgpu; verify with " in f.message


def test_a_section_header_offset_is_unsigned() -> None:
    import struct

    from tests.fixtures.handmade_elf import code_object_v2, isa_version_note
    from toolkit.inspect.readers.amdgpu import note_target

    # ELF64 e_shoff (offset 40) is an Elf64_Off, unsigned: 2**64 - n lies past any file, it
    # never counts back from the end
    obj = bytearray(code_object_v2(isa_version_note(9, 0, 10)))
    assert note_target(bytes(obj)) == "gfx90a"
    (shoff,) = struct.unpack_from("<Q", obj, 40)
    struct.pack_into("<Q", obj, 40, 2**64 - (len(obj) - shoff))
    assert note_target(bytes(obj)) is None


def test_only_an_abi_version_0_code_object_reads_its_isa_from_the_note() -> None:
    from tests.fixtures.handmade_elf import code_object_v2, isa_version_note
    from toolkit.inspect.readers.gpuscan import ELF_MAGIC, _candidate
    from toolkit.inspect.readers.offload import Stream

    # AMDGPUUsage: EI_ABIVERSION (e_ident[8]) 0 is code object v2, whose ISA is in a note;
    # from v3 (1) on e_flags names the processor, and mach 0 stays unknown
    obj = bytearray(code_object_v2(isa_version_note(9, 0, 10)))
    found = []
    for abi in (0, 1):
        obj[8] = abi
        (o,) = _candidate(Stream([bytes(obj)]), ELF_MAGIC, len(obj), ".rodata")
        found.append((o.target, o.size, o.where))
    assert found == [("gfx90a", len(obj), ".rodata (raw ELF)"),
                     ("unknown-amdgpu-mach-0x00", len(obj), ".rodata (raw ELF)")]


def test_an_absolute_runpath_finds_an_input_library_in_that_folder() -> None:
    from toolkit.inspect.readers.elf import ElfInfo
    from toolkit.inspect.readers.resolver import Resolver

    # ld.so(8): an absolute RUNPATH folder is searched for the needed name itself
    x86 = ElfInfo(machine=62, elf_class=64, type=3)
    dep = Lib("/opt/x/libdep.so", "with:/opt/x", x86)
    ext = Lib("pkg/ext.so", "wheel:pkg", x86)
    index = {"/opt/x/libdep.so": dep, "/opt/x": Lib("/opt/x", "with:/opt/x", x86)}
    assert Resolver({}).find("libdep.so", ext, ["/opt/x"], index) is dep


def test_a_section_ending_at_the_last_byte_is_scanned_and_one_past_it_is_refused() -> None:
    from toolkit.inspect.readers.elf import Section, scan_ranges

    # ELF spec: a section occupies sh_size bytes from sh_offset, so [96, 100) fits a
    # 100-byte file and [96, 101) does not (type 1 SHT_PROGBITS, flags 2 SHF_ALLOC)
    fits = Section(".hip_fatbin", 1, 96, 4, 0, 0, 0, 2)
    assert [(r.name, r.offset, r.size) for r in scan_ranges([fits], 100)] == [(".hip_fatbin", 96, 4)]
    with pytest.raises(ElfError) as err:
        scan_ranges([Section(".hip_fatbin", 1, 96, 5, 0, 0, 0, 2)], 100)
    assert str(err.value) == "truncated or corrupt ELF: section .hip_fatbin lies past the end"
