"""ELF class, data encoding and machine against the wheel's platform tag.

A ``cp311-linux_x86_64`` wheel must hold 64-bit little-endian x86-64 code: a 32-bit i386 or
a big-endian PowerPC shared object in it cannot be loaded by the interpreter the tag names.
The expectations per architecture are those of the psABI of each (ELF class, data encoding,
``e_machine``), keyed by the architecture names of PEP 599/600 platform tags.
"""

from __future__ import annotations

from collections.abc import Iterable

from toolkit.inspect.readers.elf import ElfInfo
from toolkit.inspect.report import Finding

# platform-tag architecture -> (ELF class, little-endian, e_machine)
EXPECTED: dict[str, tuple[int, bool, int]] = {
    "x86_64": (64, True, 62),
    "i686": (32, True, 3),
    "aarch64": (64, True, 183),
    "armv7l": (32, True, 40),
    "ppc64le": (64, True, 21),
    "ppc64": (64, False, 21),
    "s390x": (64, False, 22),
    "riscv64": (64, True, 243),
    "loongarch64": (64, True, 258),
}
MACHINE_NAMES = {3: "i386", 8: "MIPS", 20: "PowerPC", 21: "PowerPC64", 22: "S/390", 40: "ARM",
                 62: "x86-64", 183: "AArch64", 243: "RISC-V", 258: "LoongArch"}


def tag_arch(tags: Iterable[str]) -> tuple[str, str] | None:
    """(architecture, platform tag) the wheel's tags name; None for ``any`` or none known."""
    for tag in sorted(tags):
        for plat in tag.split("-")[-1].split("."):
            for arch in sorted(EXPECTED, key=len, reverse=True):  # ppc64le before ppc64
                if plat.endswith("_" + arch) and plat.startswith(("linux", "manylinux", "musllinux")):
                    return arch, plat
    return None


def describe(elf_class: int, little: bool, machine: int) -> str:
    name = MACHINE_NAMES.get(machine, f"machine {machine}")
    return f"{elf_class}-bit {'little' if little else 'big'}-endian {name}"


def mismatch(path: str, info: ElfInfo, arch: str, plat: str) -> Finding | None:
    """An error when the library is not ELF of the tag's architecture."""
    want = EXPECTED[arch]
    have = (info.elf_class, info.little, info.machine)
    if have == want:
        return None
    msg = (f"{path} is {describe(*have)} ELF, but the wheel is tagged {plat}, which loads only "
           f"{describe(*want)} ELF: it cannot be imported")
    return Finding("elf-machine", "error", path, msg, cause=f"not {describe(*want)} ELF")
