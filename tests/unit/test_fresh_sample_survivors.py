"""What the survivors of the fresh mutation samples of session 25 (``--seed 6`` and ``7``)
showed untested, each pinned against a hand-computed value or a spec (docs/equivalent-mutants.md,
*Runs*)."""

from __future__ import annotations

import re
import struct
import subprocess
import zipfile
from pathlib import Path

import pytest

from tests.fixtures.bundles import make_bundle
from tests.fixtures.handmade_elf import EM_X86_64, shared_object
from tests.fixtures.native import compile_shared
from toolkit.core.steps import IndexProbe
from toolkit.inspect.readers.elf import (
    ElfInfo,
    Header,
    Image,
    _read_symbols,
    parse_elf,
    parse_header,
    read_sections,
)
from toolkit.inspect.readers.gpuscan import CodeObject, Hits, ScanRange, scan
from toolkit.inspect.readers.members import BATCH_BYTES, _batches
from toolkit.inspect.readers.offload import CCOB_MAGIC
from toolkit.inspect.readers.resolver import Lib, Resolver
from toolkit.inspect.rules.hygiene import classify_rpath
from toolkit.inspect.rules.needed import Missing, missing_findings
from toolkit.plan.provision import _probes
from toolkit.plan.sources import Sources


def test_a_section_name_that_is_not_utf8_reads_with_replacement_characters() -> None:
    lib = bytearray(shared_object(64, True, EM_X86_64, needed=("libc.so.6",)))
    at = lib.index(b".dynstr\0")
    lib[at : at + 7] = b".dy\xffstr"  # one byte that no UTF-8 sequence starts with
    img = Image.whole(bytes(lib))
    names = [s.name for s in read_sections(img, parse_header(img))]
    assert ".dy\N{REPLACEMENT CHARACTER}str" in names and ".dynstr" not in names


def test_a_symbol_past_the_version_table_is_unversioned_whatever_index_1_names() -> None:
    # gABI: a symbol without a .gnu.version entry has none; index 1 (VER_NDX_GLOBAL) would
    # look it up, and a corrupt table may name index 1 (a real one never does: it is the base)
    hdr = Header(64, True, 0, 0, 3, 62, 0, 0, 0, 0, 0, 0, 0, 0)
    strtab = b"\0und\0def\0"
    raw = (bytes(24) + struct.pack("<IBBHQQ", 1, 0x12, 0, 0, 0, 0)  # und: undefined, global
           + struct.pack("<IBBHQQ", 5, 0x12, 0, 7, 0, 0))  # def: defined, global
    info = ElfInfo(machine=62, elf_class=64, type=3)
    _read_symbols(info, raw, strtab, struct.pack("<H", 0), hdr, {1: ("BOGUS", "libc.so.6")},
                  {1: "BOGUS"})
    assert info.undefined == [(b"und", None)]
    assert info.defined == {b"def"} and info.defined_versions == {}


def test_a_widened_window_counts_all_its_bytes_against_the_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Hits, "HOLD_BEFORE", 10)
    monkeypatch.setattr(Hits, "HOLD_AFTER", 30)
    monkeypatch.setattr(Hits, "HOLD_MAX", 100)
    data = bytearray(1000)
    for at in (100, 120, 500, 700):
        data[at : at + 4] = CCOB_MAGIC
    hits = Hits([(0, len(data))])
    hits.feed(0, bytes(data))
    # 90-130 (40 bytes), widened by 120's window to 90-150 (60), then 490-530: 100 in all;
    # 700's window (40 more) would pass the bound
    assert [(start, want) for start, want, _ in hits._held] == [(90, 150), (490, 530)]
    assert [hits.holds(at) for at in (100, 149, 150, 500, 700)] == [True, True, False, True, False]


def test_code_objects_of_a_fatbin_section_are_labelled_with_the_section() -> None:
    host = ("host-x86_64-unknown-linux-gnu", b"")
    bundle = make_bundle([host, ("hipv4-amdgcn-amd-amdhsa--gfx90a", bytes(40))], align=1)
    found = scan([ScanRange(".hip_fatbin", 0, len(bundle))], lambda a, b: [bundle[a:b]])
    assert found.objects == [CodeObject("gfx90a", 40, ".hip_fatbin (bundle)")] and not found.problems


def test_a_wheel_folder_starting_with_x_is_looked_up_as_named() -> None:
    def lib(path: str) -> Lib:
        return Lib(path, "wheel:" + path.rpartition("/")[0],
                   ElfInfo(machine=EM_X86_64, elf_class=64, type=3))

    obj, dep = lib("pkg/root.so"), lib("Xlibs/libx.so")
    index = {dep.path: dep}
    assert Resolver({}).find("libx.so", obj, ["wheel:Xlibs"], index) is dep
    assert Resolver({}).find("libx.so", obj, ["wheel:/Xlibs/"], index) is dep


def test_a_known_rocm_soname_is_rocms_even_when_a_requirement_shares_its_name() -> None:
    # the known sonames come first (toolkit/inspect/rules/needed.py): a Requires-Dist named
    # after the library does not make it that package's
    [f] = missing_findings(Missing("libamdhip64.so.6", "a.so", "a.so"), policy="manylinux_2_28",
                           requires=["amdhip64"], excludes=[])
    assert (f.severity, f.cause) == ("warning", "needs libamdhip64.so.6, provided by rocm-sdk")
    assert "provided by rocm-sdk (a known soname;" in f.message and "amdhip64 (" not in f.message


@pytest.mark.parametrize(("provider", "index", "want"), [
    ("pip", "https://sdk.example/", [IndexProbe("https://sdk.example/", "rocm", "ROCm SDK index")]),
    ("pip", None, []),
    ("system", "https://sdk.example/", []),  # a system SDK is never installed from an index
])
def test_the_sdk_index_is_probed_for_a_pip_sdk_with_an_index_only(
    provider: str, index: str | None, want: list[IndexProbe]
) -> None:
    src = Sources(provider, None, None, index, None, (), "torch", ())
    assert list(_probes(src, None)) == want


def test_version_needs_are_read_as_many_as_the_section_says(tmp_path: Path) -> None:
    """sh_info of .gnu.version_r is its number of entries (the GNU versioning spec, LSB); a
    chain that goes on past it is not read. readelf, the judge, reads the same count."""
    source = ("#include <math.h>\n#include <stdlib.h>\n"
              "double f(double x) { return exp(x) + (double)(long)malloc(1); }\n")
    lib = compile_shared(tmp_path, "libvn.so", source, lang="c", libs=["libm.so.6"])
    data = bytearray(lib.read_bytes())
    shoff, = struct.unpack_from("<Q", data, 0x28)  # Elf64_Ehdr: e_shoff, e_shentsize
    shentsize, = struct.unpack_from("<H", data, 0x3A)
    sections = subprocess.run(["readelf", "-S", "-W", str(lib)], capture_output=True, text=True,
                              check=True).stdout
    idx = int(re.search(r"\[\s*(\d+)\] \.gnu\.version_r ", sections).group(1))  # type: ignore[union-attr]
    at = shoff + idx * shentsize + 44  # Elf64_Shdr.sh_info
    assert struct.unpack_from("<I", data, at) == (2,)  # libm's and libc's needs
    struct.pack_into("<I", data, at, 1)
    cut = tmp_path / "libvn-one.so"
    cut.write_bytes(bytes(data))
    shown = subprocess.run(["readelf", "-V", "-W", str(cut)], capture_output=True, text=True,
                           check=True).stdout
    files = re.findall(r"File: (\S+)", shown)
    assert "contains 1 entry" in shown and len(files) == 1
    info = parse_elf(Image.whole(bytes(data)))
    assert list(info.version_needs) == files
    whole = parse_elf(Image.whole(lib.read_bytes()))
    assert sorted(whole.version_needs) == ["libc.so.6", "libm.so.6"]


def test_a_data_section_whose_bytes_end_early_is_scanned_as_far_as_they_go() -> None:
    # the chunks stop 100 bytes short of the section's size: the scan stops there too
    host = ("host-x86_64-unknown-linux-gnu", b"")
    bundle = make_bundle([host, ("hipv4-amdgcn-amd-amdhsa--gfx90a", bytes(40))], align=1)
    data = b"junk" + bundle
    found = scan([ScanRange(".data", 0, len(data) + 100)], lambda a, b: [data[a:b]])
    assert found.objects == [CodeObject("gfx90a", 40, ".data (bundle)")]


def test_members_of_batch_bytes_or_more_are_alone_and_small_ones_fill_a_batch() -> None:
    def member(name: str, size: int) -> zipfile.ZipInfo:
        info = zipfile.ZipInfo(name)
        info.compress_size = size
        return info

    big, edge, a, b, c = (member("big", BATCH_BYTES + 1), member("edge", BATCH_BYTES),
                          member("a", BATCH_BYTES - 10), member("b", 10), member("c", 1))
    assert _batches([c, a, edge, b, big]) == [[big], [edge], [a, b], [c]]
    assert _batches([c, b]) == [[b, c]]  # largest first
    assert _batches([]) == []


@pytest.mark.parametrize(("entry", "lib", "want"), [
    ("$ORIGIN/Xpkg", "libfoo.so", None),  # a folder whose name starts with X, in the wheel
    ("${ORIGIN}/Xpkg", "libfoo.so", None),
    ("$ORIGIN/Xother", "libfoo.so", "leaves"),  # not shipped
])
def test_an_origin_entry_names_the_folder_as_written(entry: str, lib: str, want: str | None) -> None:
    assert classify_rpath(entry, lib, {"Xpkg", "other"}) == want
