"""What a user reads when an inspected file is malformed or a check fails, and the bounds the
readers put on outside data (survivors of the sampled `nox -s mutants` runs, issue 19).

The truths: auditwheel's policy file format (``lib_whitelist`` is a list of sonames), the
clang-offload-bundler CCOB header layout (8 bytes of magic, version and method, then 12, 16
or 24 bytes of sizes and hash for v1, v2, v3), LLVM AMDGPUUsage's processor names, ld.so(8)
for RPATH entries, and messages worked out by hand.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fixtures.handmade_elf import code_object_v2, isa_version_note
from toolkit.core.errors import DataError, OffloadError
from toolkit.inspect.readers.elf import ElfInfo
from toolkit.inspect.readers.offload import parse_fatbin
from toolkit.inspect.readers.policy import _allowed, parse_policies
from toolkit.inspect.readers.resolver import Lib
from toolkit.inspect.report import LibraryResult, WheelResult
from toolkit.inspect.rules.hygiene import classify_rpath, rpath_findings
from toolkit.inspect.rules.symbols import Unresolved, report_unresolved


def test_a_malformed_lib_whitelist_is_named_in_the_error() -> None:
    text = ('[{"name": "manylinux_2_28", "aliases": [], "priority": 70, "symbol_versions": {},'
            ' "lib_whitelist": "libc.so.6"}]')
    with pytest.raises(DataError) as err:
        parse_policies(text, "policy.json")
    assert str(err.value) == ("policy.json: policy #0 (manylinux_2_28): 'lib_whitelist' must be a "
                              "list of strings, got str 'libc.so.6'")


def test_the_gcc_runtime_nodes_of_a_derived_policy_are_bounded_by_the_distributions() -> None:
    # GLIBCXX_3.4.25 is GCC 8's libstdc++; a policy whose distributions ship up to 3.4.25
    # allows it and not 3.4.26 (GCC 9)
    maxima = {"GLIBCXX": (3, 4, 25), "CXXABI": (1, 3, 11)}
    assert _allowed("GLIBCXX", "3.4.25", 28, maxima)
    assert not _allowed("GLIBCXX", "3.4.26", 28, maxima)
    # a prefix no distribution bounds is not restricted
    assert _allowed("GCC", "9.0.0", 28, maxima)
    # CXXABI_TM_1 (libstdc++'s transactional memory node, in auditwheel's policies) has no number
    assert _allowed("CXXABI", "TM_1", 28, maxima)


@pytest.mark.parametrize(("version", "size"), [(1, 12), (2, 16), (3, 24)])
def test_a_truncated_compressed_bundle_header_names_its_version(version: int, size: int) -> None:
    # the CCOB magic, u16 version, u16 method (1: zstd), then one byte short of the header
    data = b"CCOB" + struct.pack("<HH", version, 1) + bytes(size - 1)
    with pytest.raises(OffloadError) as err:
        parse_fatbin(data)
    assert str(err.value) == f"truncated offload bundle: CCOB v{version} header at offset 8"


def test_an_isa_version_note_with_a_three_digit_major_names_no_processor() -> None:
    from toolkit.inspect.readers.amdgpu import note_target

    # AMDGPUUsage processors are gfx + a one- or two-digit major + one hex digit each for
    # minor and stepping (gfx906, gfx1030, gfx1201)
    assert note_target(code_object_v2(isa_version_note(10, 3, 0))) == "gfx1030"
    assert note_target(code_object_v2(isa_version_note(99, 0, 0))) == "gfx9900"
    assert note_target(code_object_v2(isa_version_note(100, 0, 0))) is None


def test_an_absolute_rpath_outside_the_wheel_is_a_warning() -> None:
    # ld.so(8): an absolute DT_RUNPATH entry is searched as is on the machine that loads the
    # library
    assert classify_rpath("/usr/local/lib", "pkg/x.so", {"pkg"}) == "outside"
    info = ElfInfo(machine=62, elf_class=64, type=3, runpath=("/usr/local/lib",))
    (f,) = rpath_findings([("pkg/x.so", info)], {"pkg"})
    assert (f.severity, f.library) == ("warning", "pkg/x.so")
    assert f.message == ("RUNPATH '/usr/local/lib' in pkg/x.so: an absolute path outside the wheel "
                         "(libraries there would load on users' machines)")


def _pending(providers: list[str]) -> tuple[WheelResult, Unresolved]:
    wheel = WheelResult("pkg-1.0-cp312-cp312-linux_x86_64.whl")
    lib = Lib("pkg/libx.so", "wheel:pkg", None)
    return wheel, Unresolved(wheel, lib, LibraryResult("pkg/libx.so", "shared-library"),
                             [(b"foo", None)], providers=providers)


def test_an_undefined_symbol_names_the_libraries_that_do_not_define_it() -> None:
    wheel, p = _pending(["/usr/lib/x86_64-linux-gnu/libc.so.6", "pkg/liba.so"])
    report_unresolved([p], {})
    (f,) = wheel.findings
    assert f.message == ("import would fail: 1 undefined symbol in pkg/libx.so "
                         "(defined by none of libc.so.6, liba.so): foo")
    wheel, p = _pending(["/l/liba.so", "/l/libb.so", "/l/libc.so", "/l/libd.so", "/l/libe.so"])
    report_unresolved([p], {})
    assert wheel.findings[0].message == ("import would fail: 1 undefined symbol in pkg/libx.so "
                                         "(defined by none of liba.so, libb.so, libc.so and 2 more): foo")


def test_an_isa_version_digit_is_one_hex_digit() -> None:
    from toolkit.inspect.readers.amdgpu import note_target

    # minor and stepping are one hex digit each in a processor name (gfx90c: 9, 0, 12)
    assert note_target(code_object_v2(isa_version_note(9, 0, 15))) == "gfx90f"
    assert note_target(code_object_v2(isa_version_note(9, 16, 0))) is None
    assert note_target(code_object_v2(isa_version_note(9, 0, 16))) is None


def test_the_isa_name_note_wins_over_the_version_note_in_either_order() -> None:
    from tests.fixtures.handmade_elf import isa_name_note
    from toolkit.inspect.readers.amdgpu import note_target

    # AMDGPUUsage: NT_AMD_HSA_ISA_NAME is the full target (features included); the version
    # note has only the processor
    name, version = isa_name_note("amdgcn-amd-amdhsa--gfx803+xnack"), isa_version_note(8, 0, 3)
    assert note_target(code_object_v2(name + version)) == "gfx803:xnack+"
    assert note_target(code_object_v2(version + name)) == "gfx803:xnack+"


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


def test_a_long_malformed_value_is_cut_to_sixty_characters_in_the_error() -> None:
    text = '[{"name": "p", "aliases": [], "priority": "' + "9" * 100 + '", "symbol_versions": {}}]'
    with pytest.raises(DataError) as err:
        parse_policies(text, "policy.json")
    # repr of the 100-digit string is 102 characters: its first 57, then "..."
    assert str(err.value) == ("policy.json: policy #0 (p): 'priority' must be an integer, got str '"
                              + "9" * 56 + "...")


@pytest.fixture
def ascii_locale() -> Iterator[None]:
    """The C locale, whose character set is ASCII (what a bare container or cron job runs)."""
    import locale

    old = locale.setlocale(locale.LC_CTYPE)
    locale.setlocale(locale.LC_CTYPE, "C")
    try:
        yield
    finally:
        locale.setlocale(locale.LC_CTYPE, old)


def test_a_policy_file_is_read_as_utf8_whatever_the_locale(tmp_path: Path, ascii_locale: None) -> None:
    from toolkit.inspect.readers.policy import read_policy_file

    # RFC 8259 section 8.1: JSON exchanged between systems is UTF-8
    path = tmp_path / "policy.json"
    path.write_bytes('[{"name": "manylinux_2_28", "aliases": ["sélection"], "priority": 70, '
                     '"symbol_versions": {}}]'.encode())
    (spec,) = read_policy_file(path)
    assert spec.aliases == ("sélection",)


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


def test_the_rocm_meta_package_may_ship_rocm_libraries_but_not_torchs() -> None:
    from toolkit.inspect.rules.hygiene import bundled_findings

    # TheRock's meta package is named "rocm" (ROCm/TheRock@89553ce37
    # build_tools/packaging/python/templates/rocm/setup.py: name="rocm")
    assert bundled_findings("rocm/lib/librocblas.so.4", "rocm", ()) == []
    (f,) = bundled_findings("rocm/lib/libtorch_cpu.so", "rocm", ())
    assert (f.check, f.severity) == ("bundled-library", "error")
    (f,) = bundled_findings("demo/lib/librocblas.so.4", "demo", ())
    assert (f.check, f.severity) == ("bundled-library", "error")


def test_an_excluded_library_is_an_info_of_the_missing_library_check() -> None:
    from toolkit.inspect.report import Finding
    from toolkit.inspect.rules.needed import Missing, missing_findings

    got = missing_findings(Missing("libfoo.so.1", "pkg/x.so", "pkg/x.so"), policy="manylinux_2_28",
                           requires=[], excludes=["libfoo*"])
    assert got == [Finding("missing-library", "info", "pkg/x.so",
                           "pkg/x.so needs libfoo.so.1: excluded by --exclude, not checked",
                           cause="needs libfoo.so.1, excluded")]


def test_an_unreadable_provider_defines_nothing_and_the_next_one_is_asked() -> None:
    from toolkit.inspect.rules.symbols import undefined_symbols

    info = ElfInfo(machine=62, elf_class=64, type=3, undefined=[(b"foo", None), (b"bar", None)])
    broken = Lib("libbroken.so", "/x", None, error="truncated")
    good = Lib("libgood.so", "/x", ElfInfo(machine=62, elf_class=64, type=3, defined=frozenset({b"foo"})))
    assert undefined_symbols(info, [broken, good], set()) == [(b"bar", None)]
    assert undefined_symbols(info, [good, broken], set()) == [(b"bar", None)]


def test_the_hsa_runtime_without_code_for_a_gpu_cannot_drive_it() -> None:
    from toolkit.core.gfx import parse_target
    from toolkit.inspect.rules.gpu import library_findings

    # ROCr loads its blit and trap-handler kernels for every agent at hsa_init; an agent it
    # has no kernels for is not usable
    (f,) = library_findings("usr/lib/libhsa-runtime64.so.1", ["gfx90a"], [parse_target("gfx942")])
    assert (f.check, f.severity, f.cause) == ("gpu-targets", "error", "no code object for gfx942")
    assert f.message == ("the HSA runtime's own embedded kernels (blit/trap handlers) in "
                         "usr/lib/libhsa-runtime64.so.1 have no code object for gfx942 (carries gfx90a); "
                         "this runtime cannot drive that GPU (hsa_init finds no usable agent)")


def test_an_unreadable_fatbin_does_not_hide_the_code_in_later_sections() -> None:
    from tests.fixtures.bundles import make_bundle
    from toolkit.inspect.readers.gpuscan import ScanRange, scan

    good = make_bundle([("host-x86_64-unknown-linux-gnu", b""),
                        ("hipv4-amdgcn-amd-amdhsa--gfx942", b"\x7fELF" + bytes(500))])
    bad = b"__CLANG_OFFLOAD_BUNDLE__" + struct.pack("<Q", 1 << 40) + bytes(32)  # 2**40 entries
    data = bad + bytes(64) + good
    ranges = [ScanRange(".hip_fatbin", 0, len(bad)), ScanRange(".rodata", len(bad), len(data) - len(bad))]
    found = scan(ranges, lambda a, b: [data[a:b]])
    assert [o.target for o in found.objects] == ["gfx942"]
    assert found.problems == [".hip_fatbin is unreadable: corrupt offload bundle: 1099511627776 entries"]


def test_the_rocm_libraries_a_wheel_links_are_named_by_soname() -> None:
    from toolkit.inspect.rules.gpu import built_against
    from toolkit.inspect.rules.hygiene import ROCM_LIBS

    lib = LibraryResult("pkg/_C.so", "shared-library",
                        needed=["librocblas.so.4", "libhipblaslt.so.0", "libamdhip64.so.6", "libc.so.6"])
    got = built_against([lib], ROCM_LIBS)
    # the HIP runtime is reported on its own (its soname major is the ROCm major: 6 for ROCm 6.x)
    assert got["rocm_libraries"] == ["libhipblaslt.so.0", "librocblas.so.4"]
    assert (got["hip_runtime"], got["rocm_major"]) == (["libamdhip64.so.6"], 6)


@pytest.mark.parametrize(("tags", "want"), [
    (["cp312-cp312-manylinux_2_28_aarch64"], ("aarch64", "manylinux_2_28_aarch64")),  # PEP 600
    (["cp312-cp312-manylinux2014_ppc64le"], ("ppc64le", "manylinux2014_ppc64le")),  # PEP 599
    (["cp312-cp312-musllinux_1_2_x86_64"], ("x86_64", "musllinux_1_2_x86_64")),  # PEP 656
    (["cp312-cp312-linux_x86_64"], ("x86_64", "linux_x86_64")),
    (["py3-none-any"], None),
])
def test_the_architecture_a_wheel_tag_names(tags: list[str], want: tuple[str, str] | None) -> None:
    from toolkit.inspect.rules.machine import tag_arch

    assert tag_arch(tags) == want
