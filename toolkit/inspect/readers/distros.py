"""The distributions PEP 600 relies on, with the glibc and the GCC runtime each ships.

A ``manylinux_2_N`` wheel must run on every mainstream distribution whose glibc is 2.N or
newer, with the libstdc++ and libgcc_s that distribution ships. For tags auditwheel's policy
file lacks (``manylinux_2_32``, ...), :mod:`toolkit.inspect.readers.policy` derives the policy from
this table. Sources and the reasoning: ``docs/manylinux-symbol-versions.md``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Distro:
    name: str
    glibc: tuple[int, int]
    gcc: str  # the GCC release whose libstdc++.so.6 / libgcc_s.so.1 the distribution ships
    maxima: tuple[tuple[str, str], ...]  # version prefix -> newest node of that runtime


def _gcc(glibcxx: str, cxxabi: str, libgcc: str) -> tuple[tuple[str, str], ...]:
    return (("GLIBCXX", glibcxx), ("CXXABI", cxxabi), ("GCC", libgcc))


# newest symbol-version nodes per GCC runtime release (libstdc++ manual, abi.xml; libgcc's
# version maps): see the document named above for each row's source
GCC_RUNTIME = {
    "4.8": _gcc("3.4.19", "1.3.7", "4.8.0"),
    "6": _gcc("3.4.22", "1.3.10", "4.8.0"),
    "8": _gcc("3.4.25", "1.3.11", "7.0.0"),
    "10": _gcc("3.4.28", "1.3.12", "7.0.0"),
    "11": _gcc("3.4.29", "1.3.13", "7.0.0"),
    "12": _gcc("3.4.30", "1.3.13", "12.0.0"),
    "14": _gcc("3.4.33", "1.3.15", "14.0.0"),
}


def _distro(name: str, glibc: str, gcc: str) -> Distro:
    major, minor = (int(p) for p in glibc.split("."))
    return Distro(name, (major, minor), gcc, GCC_RUNTIME[gcc])


DISTROS = (
    _distro("CentOS 7", "2.17", "4.8"),
    _distro("Debian 9", "2.24", "6"),
    _distro("Ubuntu 18.04", "2.27", "8"),  # libstdc++6 is built from gcc-8 there
    _distro("RHEL 8 / AlmaLinux 8", "2.28", "8"),
    _distro("Debian 10", "2.28", "8"),
    _distro("Ubuntu 20.04", "2.31", "10"),
    _distro("Debian 11", "2.31", "10"),
    _distro("RHEL 9 / AlmaLinux 9", "2.34", "11"),
    _distro("Ubuntu 22.04", "2.35", "12"),
    _distro("Debian 12", "2.36", "12"),
    _distro("Ubuntu 24.04", "2.39", "14"),
    _distro("RHEL 10 / AlmaLinux 10", "2.39", "14"),
    _distro("Debian 13", "2.41", "14"),
)


def runtime_maxima(glibc_minor: int) -> dict[str, str] | None:
    """Per prefix (GLIBCXX, CXXABI, GCC) the newest node *every* distribution with glibc
    2.``glibc_minor`` or newer ships; None when the table has no such distribution."""
    distros = [d for d in DISTROS if d.glibc >= (2, glibc_minor)]
    if not distros:
        return None
    out: dict[str, str] = {}
    for d in distros:
        for prefix, ver in d.maxima:
            if prefix not in out or _num(ver) < _num(out[prefix]):
                out[prefix] = ver
    return out


def _num(v: str) -> tuple[int, ...]:
    return tuple(int(p) for p in v.split("."))
