"""Fuzzing: malformed ELF files, bundles and archives raise our errors, never others."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.fixtures.bundles import compress_bundle, make_bundle
from tests.fixtures.wheels import make_wheel
from toolkit.core.errors import ElfError, UsageError
from toolkit.inspect.checks import check_paths
from toolkit.inspect.readers.elf import Image, NeedRanges, parse_elf, read_elf_bytes
from toolkit.inspect.readers.offload import Bundle, gpu_targets, parse_fatbin

# example counts, deadline and randomness come from the profile (tests/conftest.py)
FUZZ = settings(suppress_health_check=[HealthCheck.too_slow])
RAW_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _small_elf() -> bytes:
    for d in ("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64"):
        for name in ("libdl.so.2", "libutil.so.1", "libz.so.1"):
            p = Path(d) / name
            if p.exists():
                return p.read_bytes()
    pytest.skip("no small system library found")


ELF = _small_elf()
ORIGINAL = read_elf_bytes(ELF)
BUNDLE = make_bundle(
    [("host-x86_64-unknown-linux-gnu", b""), ("hipv4-amdgcn-amd-amdhsa--gfx90a", b"\x7fELF" + bytes(64))],
    align=64,
)
SECTION = BUNDLE + compress_bundle(BUNDLE, "zstd", 3) + compress_bundle(BUNDLE, "zlib", 1)


def _mutate(data: bytes, edits: list[tuple[int, int]], cut: int | None) -> bytes:
    buf = bytearray(data)
    for pos, val in edits:
        buf[pos % len(buf)] = val
    return bytes(buf[:cut] if cut is not None else buf)


edits = st.lists(st.tuples(st.integers(0, 1 << 20), st.integers(0, 255)), max_size=12)


@FUZZ
@given(edits=edits, cut=st.one_of(st.none(), st.integers(0, len(ELF))), head=st.booleans())
def test_elf_reader_only_raises_elf_error(edits: list[tuple[int, int]], cut: int | None, head: bool) -> None:
    # bias half the edits into the headers, where they matter most
    pos_edits = [(p % 4096 if head else p, v) for p, v in edits]
    data = _mutate(ELF, pos_edits, cut)
    try:
        info = read_elf_bytes(data)
    except ElfError:
        return
    # what parses is well-formed: the header's class, names that are C strings
    assert info.elf_class == (64 if data[4] == 2 else 32) and info.little == (data[5] == 1)
    assert all(isinstance(n, str) and "\0" not in n for n in info.needed)
    assert all(b"\0" not in n for n in info.defined)
    if not edits and cut is None:
        assert info.needed == ORIGINAL.needed and info.defined == ORIGINAL.defined


def _one_clean_line(err: Exception) -> str:
    """An error of a reader is one line a terminal shows as is: no raw control bytes."""
    text = str(err)
    assert text and not RAW_CONTROL.search(text), text
    return text


@FUZZ
@given(data=st.binary(max_size=512))
def test_elf_reader_on_random_bytes(data: bytes) -> None:
    # without the magic \x7fELF (System V gABI, e_ident[EI_MAG0..3]) nothing is an ELF file
    if not data.startswith(b"\x7fELF"):
        with pytest.raises(ElfError) as err:
            read_elf_bytes(data)
        text = _one_clean_line(err.value)
        assert text == "not an ELF file (bad magic)" or "past the end of the file" in text
    try:
        info = read_elf_bytes(b"\x7fELF" + data)
    except ElfError as err:
        _one_clean_line(err)
        return
    # what parses has a valid class and encoding (EI_CLASS 1 or 2, EI_DATA 1 or 2) and is at
    # least as long as its header (52 bytes for ELFCLASS32, 64 for ELFCLASS64)
    assert (data[0], data[1]) in {(1, 1), (1, 2), (2, 1), (2, 2)}
    assert info.elf_class == 32 * data[0] and info.little == (data[1] == 1)
    assert len(data) + 4 >= (52 if data[0] == 1 else 64)


@FUZZ
@given(edits=edits, cut=st.one_of(st.none(), st.integers(0, len(ELF))))
def test_sparse_parsing_only_asks_for_ranges_or_fails_cleanly(
    edits: list[tuple[int, int]], cut: int | None
) -> None:
    data = _mutate(ELF, [(p % 2048, v) for p, v in edits], cut)
    img = Image(len(data), [(0, data[:256])])
    for _ in range(6):
        try:
            parse_elf(img)
            return
        except NeedRanges as need:
            for a, b in need.ranges:
                assert 0 <= a <= b <= len(data)
                img.add(a, data[a:b])
        except ElfError:
            return


def _bundles_inside(bundles: list[Bundle], size: int) -> None:
    """Bundles read from ``size`` bytes lie inside them, one after the other."""
    end = 0
    for b in bundles:
        assert end <= b.offset and b.stored > 0 and b.offset + b.stored <= size, (b, size)
        assert all(e.size >= 0 for e in b.entries)
        end = b.offset + b.stored


@FUZZ
@given(
    edits=st.lists(st.tuples(st.integers(0, len(SECTION) - 1), st.integers(0, 255)), max_size=8),
    cut=st.one_of(st.none(), st.integers(0, len(SECTION))),
)
def test_bundle_reader_only_raises_offload_errors(edits: list[tuple[int, int]], cut: int | None) -> None:
    data = _mutate(SECTION, edits, cut)
    try:
        bundles = parse_fatbin(data)
    except ElfError as err:  # OffloadError derives from it
        _one_clean_line(err)
        return
    _bundles_inside(bundles, len(data))
    if not edits and cut is None:  # the section as built: a plain, a zstd and a zlib bundle
        assert [b.compression for b in bundles] == [None, "zstd", "zlib"]
        assert [gpu_targets([b]) for b in bundles] == [("gfx90a",)] * 3


@FUZZ
@given(data=st.binary(max_size=256), magic=st.sampled_from([b"__CLANG_OFFLOAD_BUNDLE__", b"CCOB", b""]))
def test_bundle_reader_on_random_bytes(data: bytes, magic: bytes) -> None:
    blob = magic + data
    try:
        bundles = parse_fatbin(blob)
    except ElfError as err:
        _one_clean_line(err)
        return
    _bundles_inside(bundles, len(blob))
    if not blob.strip(b"\0"):  # only padding: no bundle
        assert bundles == []


@pytest.fixture(scope="module")
def wheel_bytes(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    d = tmp_path_factory.mktemp("fuzzwheel")
    return make_wheel(d, "demo", "1.0", "py3-none-linux_x86_64", {"demo/_x.so": ELF}).read_bytes()


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
# found by `nox -s fuzz` (and on main): a central-directory "version needed to extract" of 6.4
# made zipfile raise NotImplementedError; the offsets depend on the wheel's layout (the system
# library in it), so test_unsupported_zip_version_is_a_usage_error pins it for any layout
@example(edits=[(26895, 64)], cut=None)
@example(edits=[(2384, 64)], cut=None)
# found by the ci profile once the test's source changed: the local file header's name
# differs from the central directory's ("\x00emo/_x.so"), zipfile (so pip) refuses it,
# and the check had passed the wheel
@example(edits=[(30, 0)], cut=None)
# found by `nox -s fuzz`: a central-directory flag "compressed patched data" (bit 5) or "strong
# encryption" (bit 6) makes zipfile (so pip) refuse the member, and the check had passed the
# wheel; test_zip_flags_pip_cannot_extract_are_errors pins it for any layout
@example(edits=[(172686, 64)], cut=None)
@example(edits=[(172686, 32)], cut=None)
# found by `nox -s fuzz`: a central directory whose offsets, with zipfile's shift for data
# before the archive, put a local header before offset 0 (pread: EINVAL, a traceback);
# test_a_local_header_before_the_archive_is_a_finding pins it for any layout
@example(edits=[(2401, 2), (51887, 1)], cut=None)
@example(edits=[(2401, 1), (51887, 1)], cut=None)
@given(
    edits=st.lists(st.tuples(st.integers(0, 1 << 20), st.integers(0, 255)), max_size=6),
    cut=st.one_of(st.none(), st.integers(0, 1 << 20)),
)
def test_archive_damage_gives_findings_or_usage_errors(
    tmp_path_factory: pytest.TempPathFactory,
    wheel_bytes: bytes,
    edits: list[tuple[int, int]],
    cut: int | None,
) -> None:
    path = tmp_path_factory.mktemp("w") / "demo-1.0-py3-none-linux_x86_64.whl"
    path.write_bytes(_mutate(wheel_bytes, edits, cut % (len(wheel_bytes) + 1) if cut else None))
    try:
        report = check_paths([path])
    except UsageError as err:  # exit 2, one line naming the wheel
        assert path.name in _one_clean_line(err)
        return
    if report.ok:  # a damaged member never passes: pip would install exactly these bytes
        with zipfile.ZipFile(path) as zf:
            assert zf.read("demo/_x.so") == ELF
    else:
        assert any(f.severity == "error" for f in report.findings)


def test_a_local_header_naming_another_file_is_an_error(tmp_path: Path, wheel_bytes: bytes) -> None:
    """APPNOTE 4.3.7: the local header repeats the file name; zipfile refuses a member whose
    local name differs from the central directory's, so pip could not install the wheel."""
    local = wheel_bytes.index(b"PK\x03\x04demo/_x.so"[:4])  # the first member is the .so
    assert wheel_bytes[local + 30 : local + 40] == b"demo/_x.so"
    damaged = bytearray(wheel_bytes)
    damaged[local + 30] = ord("x")  # "demo/_x.so" -> "xemo/_x.so" in the local header only
    path = tmp_path / "demo-1.0-py3-none-linux_x86_64.whl"
    path.write_bytes(bytes(damaged))
    with zipfile.ZipFile(path) as zf, pytest.raises(zipfile.BadZipFile):
        zf.read("demo/_x.so")  # the independent truth: Python's zipfile refuses it
    report = check_paths([path])
    errors = [f for f in report.findings if f.severity == "error"]
    assert not report.ok and any("local file header names another file" in f.message for f in errors)


def test_unsupported_zip_version_is_a_usage_error(tmp_path: Path, wheel_bytes: bytes) -> None:
    """A central-directory entry that needs a newer zip version than Python reads (APPNOTE
    4.3.12: "version needed to extract" at offset 6 of the entry) is unreadable input, exit 2."""
    entry = wheel_bytes.index(b"PK\x01\x02")
    damaged = bytearray(wheel_bytes)
    damaged[entry + 6] = 64  # version 6.4
    path = tmp_path / "demo-1.0-py3-none-linux_x86_64.whl"
    path.write_bytes(bytes(damaged))
    with pytest.raises(UsageError, match="not a readable zip archive.*zip file version 6.4"):
        check_paths([path])



@pytest.mark.parametrize(("bit", "why"), [(0x01, "encrypted"), (0x20, "compressed patched data"),
                                          (0x40, "strong encryption")])
def test_zip_flags_pip_cannot_extract_are_errors(tmp_path: Path, wheel_bytes: bytes, bit: int,
                                                 why: str) -> None:
    """APPNOTE 4.4.4: general purpose flag bits 0 (encrypted), 5 (compressed patched data) and
    6 (strong encryption) of the first central-directory entry (offset 8): zipfile refuses to
    read that member (so pip cannot install it), and the check names it as an error."""
    entry = wheel_bytes.index(b"PK\x01\x02")
    damaged = bytearray(wheel_bytes)
    damaged[entry + 8] |= bit
    path = tmp_path / "demo-1.0-py3-none-linux_x86_64.whl"
    path.write_bytes(bytes(damaged))
    with zipfile.ZipFile(path) as zf, pytest.raises((NotImplementedError, RuntimeError)):
        zf.read(zf.infolist()[0])  # the independent truth: Python's zipfile refuses it
    report = check_paths([path])
    errors = [f.message for f in report.findings if f.severity == "error"]
    assert not report.ok and any(why in m for m in errors), errors


def test_a_local_header_before_the_archive_is_a_finding(tmp_path: Path, wheel_bytes: bytes) -> None:
    """The end-of-central-directory record names where the directory starts (offset 16);
    zipfile shifts every member's offset by the difference to where the directory really is
    (data prepended to an archive). A record naming a later start makes that shift negative,
    so the first member's local header would lie before the archive: an error, not a
    traceback (found by `nox -s fuzz`, with RECORD's size damaged too)."""
    eocd = wheel_bytes.rindex(b"PK\x05\x06")
    damaged = bytearray(wheel_bytes)
    start = int.from_bytes(damaged[eocd + 16 : eocd + 20], "little")
    damaged[eocd + 16 : eocd + 20] = (start + 65536).to_bytes(4, "little")
    last = wheel_bytes.rindex(b"PK\x01\x02")  # RECORD's entry: a compressed size past the
    damaged[last + 23] = 2  # end (offset 20, + 2^25), so the members are read all the same
    path = tmp_path / "demo-1.0-py3-none-linux_x86_64.whl"
    path.write_bytes(bytes(damaged))
    with zipfile.ZipFile(path) as zf:  # the independent truth: zipfile's own arithmetic
        assert zf.infolist()[0].header_offset < 0
    try:
        report = check_paths([path])
    except UsageError as err:
        assert path.name in _one_clean_line(err)
        return
    assert not report.ok
