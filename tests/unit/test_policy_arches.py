"""Which manylinux policies exist for an architecture, against auditwheel's own ``WheelPolicies``
(the independent truth: the tool whose policy file this toolkit reads)."""

from __future__ import annotations

import pytest
from auditwheel.architecture import Architecture
from auditwheel.libc import Libc
from auditwheel.policy import WheelPolicies

from toolkit.core.errors import UsageError
from toolkit.inspect.readers.policy import best_policy, get_policy, load_policies

ARCHES = ("x86_64", "i686", "aarch64", "ppc64le", "s390x", "armv7l", "riscv64")


def _auditwheel(arch: str) -> list[tuple[str, int]]:
    wp = WheelPolicies(libc=Libc.GLIBC, arch=Architecture(arch))
    return [(p.name.removesuffix("_" + arch), p.priority) for p in wp]


@pytest.mark.parametrize("arch", ARCHES)
def test_the_policies_of_an_architecture_are_auditwheels(arch: str) -> None:
    ours = [(p.name, p.priority) for p in load_policies(arch)]
    assert sorted(ours, key=lambda t: -t[1]) == ours  # most compatible first
    assert sorted(ours) == sorted(_auditwheel(arch))


def test_aarch64_has_no_manylinux_2_5_or_2_12() -> None:
    names = {p.name for p in load_policies("aarch64")}
    assert "manylinux_2_17" in names and "linux" in names
    assert not names & {"manylinux_2_5", "manylinux_2_12"}
    # manylinux2014 is the oldest policy of aarch64 (PEP 599)
    assert best_policy(["GLIBC_2.17"], "aarch64").name == "manylinux_2_17"
    assert best_policy([], "aarch64").name == "manylinux_2_17"
    assert best_policy(["GLIBC_2.5"], "x86_64").name == "manylinux_2_5"


def test_a_policy_an_architecture_lacks_is_not_found_by_its_alias() -> None:
    assert get_policy("manylinux2014", "aarch64").name == "manylinux_2_17"
    with pytest.raises(UsageError, match="unknown manylinux policy 'manylinux1'"):
        get_policy("manylinux1", "aarch64")
    assert get_policy("manylinux1", "x86_64").name == "manylinux_2_5"
