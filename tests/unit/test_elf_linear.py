"""Issue 29, class 6: every ELF table is read in linear time and bounded memory, however crafted.

Work is measured from outside the reader and deterministically: the Python source lines
it executes (``sys.settrace`` line events) and the peak of the memory it
allocates (``tracemalloc``), never wall time. Doubling any one table (benign or hostile
layout, from tests/fixtures/crafted_elf.py) may at most about double either. Before the fix a
``.gnu.version_r`` whose entries all point at one shared Vernaux chain was read in time and
memory quadratic in its size (the issue's 19 KiB wheel: 90 s, 391 MB, judged "ok").
"""

from __future__ import annotations

import os
import subprocess
import sys
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.fixtures import crafted_elf as c
from tests.fixtures.wheels import make_wheel
from toolkit.core.errors import ElfError
from toolkit.inspect.readers.elf import Image, parse_header, read_elf_bytes, segment_ranges


class TooMuchWork(BaseException):
    """Raised from the tracer (a BaseException: no ``except Exception`` in the reader stops it)."""


def work(fn: Callable[[], Any], limit: int = 10**7) -> tuple[int, int]:
    """(lines executed, peak bytes allocated) by ``fn()``; an ElfError counts as an answer.
    Past ``limit`` lines: ``TooMuchWork`` (so quadratic code fails fast)."""
    count = 0

    def tracer(frame: FrameType, event: str, arg: object) -> Any:
        nonlocal count
        if event == "line":
            count += 1
            if count > limit:
                raise TooMuchWork(f"more than {limit} lines")
        return tracer

    old = sys.gettrace()
    tracemalloc.start()
    sys.settrace(tracer)
    try:
        fn()
    except ElfError:
        pass
    finally:
        sys.settrace(old)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return count, peak


def _so_names(k: int, stem: str = "GLIBC_") -> tuple[bytes, list[int]]:
    return c.names(max(k, 2), stem)


def crafted(kind: str, k: int) -> bytes:
    """A file whose table ``kind`` has size proportional to ``k``."""
    strtab, offs = _so_names(4)
    if kind == "verneed entries":
        strtab, offs = _so_names(k)
        return c.shared_object(dynstr=strtab, verneed=c.verneed_proper(k, 2, offs), verneed_count=k)
    if kind == "verneed versions":
        strtab, offs = _so_names(k)
        return c.shared_object(dynstr=strtab, verneed=c.verneed_proper(2, k, offs), verneed_count=2)
    if kind == "verneed shared chain":
        return c.shared_object(dynstr=strtab, verneed=c.verneed_shared(k, k, offs[0]), verneed_count=k)
    if kind == "verneed shared chain, count 0":
        return c.shared_object(dynstr=strtab, verneed=c.verneed_shared(k, k, offs[0]))
    if kind == "verdef":
        strtab, offs = _so_names(k)
        return c.shared_object(dynstr=strtab, verdef=c.verdef(k, offs), verdef_count=k)
    if kind == "dynamic":
        strtab, offs = _so_names(k, "lib")
        return c.shared_object(dynstr=strtab, dynamic=c.dynamic([(c.DT_NEEDED, o) for o in offs]))
    if kind == "symbols":
        strtab, offs = _so_names(k, "f")
        return c.shared_object(dynstr=strtab, dynsym=c.symbols(offs[: k // 2])
                               + c.symbols(offs[k // 2 :], undefined=True))
    long_name = b"\0" + b"x" * (64 * k) + b"\0"  # one long name, read by every entry
    if kind == "symbols naming one long name":
        return c.shared_object(dynstr=long_name, dynsym=c.symbols([1] * k, undefined=True))
    if kind == "needed naming one long name":
        return c.shared_object(dynstr=long_name, dynamic=c.dynamic([(c.DT_NEEDED, 1)] * k))
    if kind == "rpath of colons":
        colons = b"\0" + b":" * (64 * k) + b"\0"
        return c.shared_object(dynstr=colons, dynamic=c.dynamic([(c.DT_RPATH, 1)] * k))
    if kind == "notes":
        return c.code_object_v2([c.note(b"AMD\0", 99, bytes(8)) * k])
    if kind == "note sections sharing their notes":
        return c.code_object_v2([c.note(b"AMD\0", 99, bytes(8)) * k], aliases=k)
    if kind == "program headers":
        return c.shared_object(dynstr=strtab, phdrs=c.phdrs([(c.PT_DYNAMIC, 0, 64, 16)] * k))
    raise AssertionError(kind)


KINDS = ["verneed entries", "verneed versions", "verneed shared chain",
         "verneed shared chain, count 0", "verdef", "dynamic", "symbols",
         "symbols naming one long name", "needed naming one long name", "rpath of colons", "notes",
         "note sections sharing their notes", "program headers"]


def read_all(data: bytes) -> None:
    """What check reads of a file: everything ``read_elf_bytes`` does, and the program headers
    (the member reader asks for PT_DYNAMIC and PT_LOAD ranges)."""
    img = Image.whole(data)
    hdr = parse_header(img)
    segment_ranges(img, hdr, c.PT_DYNAMIC)
    read_elf_bytes(data)


@given(kind=st.sampled_from(KINDS), k=st.integers(min_value=32, max_value=96))
def test_doubling_any_table_at_most_doubles_the_work(kind: str, k: int) -> None:
    small, big = crafted(kind, k), crafted(kind, 2 * k)
    assert len(big) <= 2.1 * len(small)  # the file itself doubles (not more)
    ops1, mem1 = work(lambda: read_all(small))
    ops2, mem2 = work(lambda: read_all(big), limit=4 * ops1 + 10**5)
    # a constant part (header, section table) keeps the ratio under 2; quadratic would be ~4
    assert ops2 <= 2.2 * ops1 + 100, (kind, ops1, ops2)
    # memory: hash tables grow by powers of two, so a linear reader's peak may step up to ~3x
    # at one doubling; it stays within a fixed multiple of the file (quadratic: 4x and more)
    assert mem2 <= 3 * mem1 + (16 << 10), (kind, mem1, mem2)
    assert mem2 <= 128 * len(big) + (64 << 10), (kind, len(big), mem2)


@pytest.mark.parametrize("count", [3, 0])  # sh_info counts the entries; 0: follow the chain
def test_a_shared_vernaux_chain_is_corrupt_not_ok(count: int) -> None:
    strtab, offs = _so_names(2)
    so = c.shared_object(dynstr=strtab, verneed=c.verneed_shared(3, 3, offs[0]), verneed_count=count)
    with pytest.raises(ElfError) as err:
        read_elf_bytes(so)
    # entries at 0, 16, 32; the shared chain at 48, 64, 80: the second entry reaches 48 again
    assert str(err.value) == ("corrupt ELF: .gnu.version_r aux entry at offset 48 is reached twice "
                              "(a looping or shared chain)")


@pytest.mark.parametrize(("table", "field"), [
    ("verneed", "vn_next"), ("vernaux", "vna_next"), ("verdef", "vd_next")])
def test_a_link_shorter_than_an_entry_is_corrupt_as_readelf_says(
    table: str, field: str, tmp_path: Path
) -> None:
    strtab, offs = _so_names(3)
    good_def = c.verdef(2, offs)
    if table == "verneed":
        so = c.shared_object(dynstr=strtab, verneed=c.need(1, offs[0], 16, 4) + c.aux(2, offs[1], 0)
                             + c.need(1, offs[2], 16, 0) + c.aux(3, offs[2], 0), verneed_count=2)
        want = "corrupt ELF: .gnu.version_r entry at offset 0 links to the next 4 bytes on"
    elif table == "vernaux":
        so = c.shared_object(dynstr=strtab, verneed=c.need(2, offs[0], 16, 0) + c.aux(2, offs[1], 4)
                             + c.aux(3, offs[2], 0), verneed_count=1)
        want = "corrupt ELF: .gnu.version_r aux entry at offset 16 links to the next 4 bytes on"
    else:
        bad_def = good_def[:16] + (4).to_bytes(4, "little") + good_def[20:]
        so = c.shared_object(dynstr=strtab, verdef=bad_def, verdef_count=2)
        want = "corrupt ELF: .gnu.version_d entry at offset 0 links to the next 4 bytes on"
    path = tmp_path / "x.so"
    path.write_bytes(so)
    readelf = subprocess.run(["readelf", "-V", "-W", str(path)], capture_output=True, text=True, check=False)
    assert f"Invalid {field} field of 4" in readelf.stderr  # the independent truth
    with pytest.raises(ElfError) as err:
        read_elf_bytes(so)
    assert str(err.value).startswith(want)


def test_benign_crafted_tables_read_as_readelf_reads_them(tmp_path: Path) -> None:
    strtab, offs = _so_names(6)
    so = c.shared_object(dynstr=strtab, verneed=c.verneed_proper(2, 2, offs), verneed_count=2,
                         verdef=c.verdef(3, offs), verdef_count=3,
                         dynamic=c.dynamic([(c.DT_NEEDED, offs[0]), (c.DT_NEEDED, offs[1])]))
    path = tmp_path / "ok.so"
    path.write_bytes(so)
    out = subprocess.run(["readelf", "-V", "-W", str(path)], capture_output=True, text=True, check=True)
    assert out.stderr == ""
    info = read_elf_bytes(so)
    # readelf: "File: GLIBC_0 Cnt: 2 / Name: GLIBC_1 ... Version: 3" etc.
    for file, versions in info.version_needs.items():
        assert f"File: {file}  Cnt: {len(versions)}" in out.stdout
        for v in versions:
            assert f"Name: {v}  " in out.stdout
    assert sorted(info.version_needs) == ["GLIBC_0", "GLIBC_1"]
    defs = {ln.rpartition("Name: ")[2] for ln in out.stdout.splitlines() if "Flags: none  Index:" in ln}
    assert info.version_defs == defs == {"GLIBC_1", "GLIBC_2"}  # the BASE entry names the file
    assert info.needed == ("GLIBC_0", "GLIBC_1")  # (readelf -d reads PT_DYNAMIC, which it has not)


def test_a_shared_long_name_is_corrupt_before_it_is_copied_many_times() -> None:
    # 4096 undefined symbols all naming one 64 KiB name: 256 MiB of copies before the fix
    name = b"\0" + b"x" * (64 << 10) + b"\0"
    so = c.shared_object(dynstr=name, dynsym=c.symbols([1] * 4096, undefined=True))
    ops, peak = work(lambda: read_elf_bytes(so), limit=10**6)
    assert peak < 8 << 20
    with pytest.raises(ElfError, match=r"^corrupt ELF: its entries name more than 8 times the bytes of their "
                       r"\.dynstr \(65538 bytes\)"):
        read_elf_bytes(so)


def test_note_sections_sharing_their_notes_name_no_target() -> None:
    from toolkit.inspect.readers.amdgpu import note_target

    isa = c.note(b"AMD\0", 11, b"amdgcn-amd-amdhsa--gfx900\0")
    assert note_target(c.code_object_v2([isa])) == "gfx900"
    assert note_target(c.code_object_v2([isa], aliases=1)) is None  # the same notes twice: malformed


@pytest.fixture(scope="module")
def crafted_wheel(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, bytes]:
    # the case: a ~20 KiB wheel whose library has a .gnu.version_r of 15,000 Verneed
    # entries all pointing at one chain of 15,000 Vernaux entries (2.25e8 pairs to visit)
    strtab, offs = _so_names(2, "libc.so.")
    so = c.shared_object(dynstr=strtab, verneed=c.verneed_shared(15000, 15000, offs[0]),
                         verneed_count=15000)
    tmp = tmp_path_factory.mktemp("crafted")
    whl = make_wheel(tmp, "crafted", "1.0", "cp311-cp311-manylinux_2_28_x86_64", {"crafted/libx.so": so})
    return whl, so


def test_a_crafted_20_kib_wheel_is_read_with_bounded_work_and_named_corrupt(
    crafted_wheel: tuple[Path, bytes]
) -> None:
    whl, so = crafted_wheel
    assert whl.stat().st_size < 24 << 10 and len(so) > 400_000
    ops, peak = work(lambda: read_elf_bytes(so), limit=2 * 10**6)  # before the fix: ~10^10
    assert peak < 4 * len(so)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    out = subprocess.run([sys.executable, "-m", "toolkit", "check", str(whl)], capture_output=True,
                         text=True, env=env, timeout=120, check=False)
    assert out.returncode == 1, out.stdout + out.stderr  # a check failed, not "ok"
    assert "Traceback" not in out.stdout + out.stderr
    errors = [ln.strip() for ln in out.stdout.splitlines() if ln.strip().startswith("error ")]
    # (its 15,000 reads of one file name trip the name budget before the chain is reached twice)
    assert errors == ["error [elf] crafted/libx.so: corrupt or unreadable ELF (corrupt ELF: its entries "
                      "name more than 8 times the bytes of their .dynstr (21 bytes): the same names are "
                      "read over and over): it cannot be judged"], out.stdout
