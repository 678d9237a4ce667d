"""Tests for the mutants an outside review found surviving in toolkit/inspect (issue 19):
each pins one behaviour with a hand-computed expectation (ld.so's and auditwheel's rules)."""

from __future__ import annotations

import struct

import pytest

from tests.fixtures.bundles import make_bundle
from tests.fixtures.handmade_elf import EM_X86_64, shared_object
from toolkit.core.errors import OffloadError
from toolkit.inspect.readers.amdgpu import code_object_at
from toolkit.inspect.readers.elf import ElfInfo, read_elf_bytes
from toolkit.inspect.readers.offload import Stream, read_plain
from toolkit.inspect.readers.resolver import Lib, Resolver, defines
from toolkit.inspect.report import LibraryResult, WheelResult
from toolkit.inspect.rules.manylinux import check_policy, library_policy
from toolkit.inspect.rules.symbols import undefined_symbols


def _lib(path: str, **kw: object) -> Lib:
    info = ElfInfo(machine=62, elf_class=64, type=3, **kw)  # type: ignore[arg-type]
    return Lib(path, "wheel:" + path.rpartition("/")[0], info)


def test_the_wheel_policy_is_its_worst_library_and_that_library_is_named() -> None:
    old = _lib("pkg/old.so", version_needs={"libc.so.6": ("GLIBC_2.2.5", "GLIBC_2.17")})
    new = _lib("pkg/new.so", version_needs={"libc.so.6": ("GLIBC_2.2.5", "GLIBC_2.34")})
    res = WheelResult("w", tags=["cp311-cp311-linux_x86_64"])
    pairs = []
    for lib in (old, new, _lib("pkg/none.so")):
        lr = LibraryResult(lib.path, "shared-library")
        assert lib.info is not None and library_policy(lr, lib.info, set()) is None
        pairs.append((lib, lr))
    # GLIBC_2.17 is allowed from manylinux_2_17 (manylinux2014) on, GLIBC_2.34 only from 2_34
    assert [lr.policy for _, lr in pairs] == ["manylinux_2_17", "manylinux_2_34", "manylinux_2_5"]
    judged = check_policy(res, pairs, set(), is_wheel=True, required=None)
    assert res.policy == "manylinux_2_34" and res.policy_library == "pkg/new.so"
    assert judged is not None and judged.name == "manylinux_2_34"


def test_an_unknown_machine_cannot_be_judged_and_is_an_error() -> None:
    info = ElfInfo(machine=0x9999, elf_class=64, type=3)
    lr = LibraryResult("x.so", "shared-library")
    finding = library_policy(lr, info, set())
    assert finding is not None and finding.severity == "error" and lr.policy is None


def test_runpath_overrides_rpath_and_only_rpath_is_inherited() -> None:
    a, b = _lib("pkg/a/libx.so"), _lib("pkg/b/libx.so")
    both = _lib("pkg/user.so", needed=("libx.so",), rpath=("$ORIGIN/a",), runpath=("$ORIGIN/b",))
    index = {"pkg/a/libx.so": a, "pkg/b/libx.so": b}
    r = Resolver({})
    assert r.closure(both, index)[2]["libx.so"] is b  # ld.so ignores DT_RPATH when DT_RUNPATH is set
    only_rpath = _lib("pkg/user.so", needed=("libx.so",), rpath=("$ORIGIN/a",))
    assert r.closure(only_rpath, index)[2]["libx.so"] is a
    # a dependency without its own search path finds its needs through its parent's RPATH ...
    mid = _lib("pkg/mid.so", needed=("libx.so",))
    via_rpath = _lib("pkg/top.so", needed=("mid.so",), rpath=("$ORIGIN", "$ORIGIN/a"))
    idx = {**index, "pkg/mid.so": mid}
    order, missing, by_name, _ = r.closure(via_rpath, idx)
    assert by_name["libx.so"] is a and not missing
    # ... but never through its parent's RUNPATH
    via_runpath = _lib("pkg/top.so", needed=("mid.so",), runpath=("$ORIGIN", "$ORIGIN/a"))
    _, missing, _, _ = r.closure(via_runpath, idx)
    assert missing == [("libx.so", "pkg/mid.so")]


def test_symbol_versions_count_when_resolving() -> None:
    prov = _lib("pkg/libp.so", defined=frozenset({b"foo", b"bar"}),
                defined_versions={b"foo": ("V1",), b"bar": ("V2",)}, version_defs=frozenset({"V1", "V2"}))
    assert defines(prov, b"foo", "V1") and defines(prov, b"foo", None)
    assert not defines(prov, b"foo", "V2") and not defines(prov, b"baz", None)
    refs: list[tuple[bytes, str | None]] = [(b"foo", "V2"), (b"bar", "V2"), (b"foo", "V1")]
    user = ElfInfo(machine=62, elf_class=64, type=3, undefined=refs)
    assert undefined_symbols(user, [prov], set()) == [(b"foo", "V2")]
    assert undefined_symbols(user, [prov], {"V2"}) == []  # versions judged elsewhere are skipped


def test_a_foreign_library_is_not_compatible() -> None:
    user = _lib("pkg/u.so", needed=("libx.so",), runpath=("$ORIGIN",))
    be = Lib("pkg/libx.so", "wheel:pkg", read_elf_bytes(shared_object(64, False, EM_X86_64)))
    _, missing, _, _ = Resolver({}).closure(user, {"pkg/libx.so": be})
    assert missing == [("libx.so", "pkg/u.so")]


def _code_object_header(shoff: int, shnum: int) -> bytes:
    ident = b"\x7fELF" + bytes([2, 1, 1, 64, 3]) + bytes(7)
    return ident + struct.pack("<HHIQQQIHHHHHH", 3, 224, 1, 0, 0, shoff, 0x4C, 64, 0, 0, 64, shnum, 0)


def test_a_code_objects_section_table_must_lie_inside_its_room() -> None:
    head = _code_object_header(shoff=64, shnum=2)  # the table ends at 64 + 2 * 64 = 192
    assert code_object_at(head, 192) == ("gfx942", 192)
    assert code_object_at(head, 191) is None
    assert code_object_at(_code_object_header(shoff=32, shnum=1), 1 << 20) is None  # table inside the header


def test_a_bundle_whose_entries_run_past_the_section_is_an_error() -> None:
    entries = [("host-x86_64-unknown-linux-gnu", b""), ("hipv4-amdgcn-amd-amdhsa--gfx90a", b"x" * 64)]
    bundle = make_bundle(entries, align=8)
    assert read_plain(Stream([bundle]), len(bundle)).entries[1].target == "gfx90a"
    with pytest.raises(OffloadError, match="run past the end"):
        read_plain(Stream([bundle]), len(bundle) - 1)


def test_torch_and_rocm_sonames_are_attributed_to_their_package() -> None:
    from toolkit.inspect.rules.needed import Missing, missing_findings, provider_of

    assert [provider_of(n) for n in ("libc10.so", "libtorch_cpu.so", "libamdhip64.so.7", "libnuma.so.1")] == [
        "torch", "torch", "rocm-sdk", None]
    (f,) = missing_findings(Missing("libc10.so", "pkg/x.so", "pkg/x.so"), policy="manylinux_2_28",
                            requires=["torch"], excludes=())
    assert f.severity == "warning"
    assert "provided by torch (Requires-Dist: torch; verify with --with" in f.message
    (g,) = missing_findings(Missing("libhipblas.so.2", "pkg/y.so", "pkg/x.so"), policy="manylinux_2_28",
                            requires=[], excludes=())
    assert "needs libhipblas.so.2 (needed by pkg/y.so): provided by rocm-sdk (a known soname" in g.message
    (h,) = missing_findings(Missing("libnuma.so.1", "pkg/x.so", "pkg/x.so", "/usr/lib/libnuma.so.1"),
                            policy="manylinux_2_28", requires=[], excludes=["libnuma*"])
    assert h.severity == "info" and "excluded by --exclude" in h.message
