"""What the survivors of the fresh mutation samples of session 25 (``--seed 6`` and ``7``)
showed untested, each pinned against a hand-computed value or a spec (docs/equivalent-mutants.md,
*Runs*)."""

from __future__ import annotations

import struct

import pytest

from tests.fixtures.bundles import make_bundle
from tests.fixtures.handmade_elf import EM_X86_64, shared_object
from toolkit.core.steps import IndexProbe
from toolkit.inspect.readers.elf import ElfInfo, Header, Image, _read_symbols, parse_header, read_sections
from toolkit.inspect.readers.gpuscan import CodeObject, Hits, ScanRange, scan
from toolkit.inspect.readers.offload import CCOB_MAGIC
from toolkit.inspect.readers.resolver import Lib, Resolver
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
