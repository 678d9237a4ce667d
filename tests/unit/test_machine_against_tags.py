"""A library's ELF class, data encoding and machine against the wheel's platform tag (each
psABI: x86-64 is 64-bit little-endian EM_X86_64 = 62, i386 32-bit EM_386 = 3, ppc64 big- and
ppc64le little-endian EM_PPC64 = 21, s390x big-endian EM_S390 = 22, ...), read here from
real files: the host's 64-bit libc and the 32-bit one (libc6-i386)."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolkit.inspect.readers.elf import ElfInfo
from toolkit.inspect.readers.members import load_file
from toolkit.inspect.rules.machine import mismatch, tag_arch

LIB32 = Path("/usr/lib32/libc.so.6")


@pytest.mark.parametrize(("tags", "want"), [
    (["cp312-cp312-manylinux_2_28_x86_64"], ("x86_64", "manylinux_2_28_x86_64")),
    (["cp312-cp312-manylinux_2_17_ppc64le.manylinux2014_ppc64le"], ("ppc64le", "manylinux_2_17_ppc64le")),
    (["cp312-cp312-linux_ppc64"], ("ppc64", "linux_ppc64")),
    (["cp312-cp312-musllinux_1_2_aarch64"], ("aarch64", "musllinux_1_2_aarch64")),
    (["cp312-cp312-linux_i686"], ("i686", "linux_i686")),
    (["py3-none-any"], None),
    (["cp312-cp312-macosx_11_0_x86_64"], None),  # not a Linux tag
    (["cp312-cp312-win_amd64"], None),
    ([], None),
])
def test_the_tag_names_the_architecture(tags: list[str], want: tuple[str, str] | None) -> None:
    assert tag_arch(tags) == want


def test_a_host_library_matches_its_own_tag() -> None:
    info = load_file("/usr/lib/x86_64-linux-gnu/libc.so.6")
    assert mismatch("libc.so.6", info, "x86_64", "linux_x86_64") is None


@pytest.mark.skipif(not LIB32.exists(), reason="needs the 32-bit libc (libc6-i386)")
def test_a_32_bit_library_in_a_64_bit_wheel_cannot_be_imported() -> None:
    info = load_file(LIB32)
    assert mismatch("pkg/libc.so.6", info, "i686", "linux_i686") is None
    f = mismatch("pkg/libc.so.6", info, "x86_64", "manylinux_2_28_x86_64")
    assert f is not None
    assert (f.check, f.severity, f.library, f.cause) == (
        "elf-machine", "error", "pkg/libc.so.6", "not 64-bit little-endian x86-64 ELF")
    assert f.message == ("pkg/libc.so.6 is 32-bit little-endian i386 ELF, but the wheel is tagged "
                         "manylinux_2_28_x86_64, which loads only 64-bit little-endian x86-64 ELF: "
                         "it cannot be imported")


@pytest.mark.parametrize(("have", "arch", "shown"), [
    ((64, False, 21), "ppc64le", "64-bit big-endian PowerPC64"),
    ((64, True, 21), "ppc64", "64-bit little-endian PowerPC64"),
    ((64, True, 183), "x86_64", "64-bit little-endian AArch64"),
    ((64, True, 4242), "x86_64", "64-bit little-endian machine 4242"),
])
def test_any_difference_in_class_encoding_or_machine_is_named(
    have: tuple[int, bool, int], arch: str, shown: str
) -> None:
    info = ElfInfo(machine=have[2], elf_class=have[0], type=3, little=have[1])
    f = mismatch("x.so", info, arch, f"linux_{arch}")
    assert f is not None
    assert f.message.startswith(f"x.so is {shown} ELF, but the wheel is tagged linux_{arch}")
