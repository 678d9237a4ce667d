"""manylinux policies come from auditwheel's data, not from tables of our own."""

from __future__ import annotations

import pytest

from toolkit.core.errors import UsageError
from toolkit.inspect.policy import best_policy, get_policy, load_policies, max_versions, policy_for_tag


def test_policies_are_auditwheels_data_in_priority_order() -> None:
    pols = load_policies("x86_64")
    assert [p.priority for p in pols] == sorted((p.priority for p in pols), reverse=True)
    p228 = get_policy("manylinux_2_28")
    assert "3.4.24" in p228.symbol_versions["GLIBCXX"]
    assert "3.4.25" not in p228.symbol_versions["GLIBCXX"]
    assert p228.highest("GLIBCXX") == "3.4.24" and p228.highest("GLIBC") == "2.28"
    assert p228.highest("CXXABI") == "1.3.11"


def test_aliases_and_arch_suffix() -> None:
    assert get_policy("manylinux2014").name == "manylinux_2_17"
    assert get_policy("manylinux_2_28_x86_64").name == "manylinux_2_28"
    assert get_policy("manylinux_2_28_aarch64", "aarch64").name == "manylinux_2_28"
    with pytest.raises(UsageError, match="manylinux_2_28"):
        get_policy("manylinux_9_99")


def test_best_policy_is_the_most_compatible_allowing_everything() -> None:
    assert best_policy(["GLIBC_2.2.5", "GLIBCXX_3.4.21"]).name == "manylinux_2_24"
    assert best_policy(["GLIBC_2.28", "GLIBCXX_3.4.24", "CXXABI_1.3.11"]).name == "manylinux_2_28"
    new = best_policy(["GLIBC_2.14", "GLIBCXX_3.4.29"])
    assert new.name == "manylinux_2_34" and get_policy("manylinux_2_28").violations(
        ["GLIBCXX_3.4.29", "GLIBC_2.14"]
    ) == ["GLIBCXX_3.4.29"]
    # a prefix no policy restricts (OpenMP's) does not change the policy
    assert best_policy(["GLIBC_2.2.5", "OMP_1.0", "GOMP_4.0"]).name == "manylinux_2_5"
    assert best_policy(["GLIBC_2.99"]).name == "linux"


def test_max_versions_are_numeric() -> None:
    got = max_versions(["GLIBC_2.2.5", "GLIBC_2.17", "GLIBC_2.9", "GLIBC_PRIVATE", "CXXABI_TM_1",
                        "GLIBCXX_3.4.9", "GLIBCXX_3.4.29"])  # fmt: skip
    assert got == {"GLIBC": "2.17", "GLIBCXX": "3.4.29"}


@pytest.mark.parametrize(
    ("tag", "name"),
    [("manylinux_2_28_x86_64", "manylinux_2_28"), ("manylinux2014_x86_64", "manylinux_2_17"),
     ("linux_x86_64", None), ("any", None), ("musllinux_1_2_x86_64", None)],
)  # fmt: skip
def test_policy_for_tag(tag: str, name: str | None) -> None:
    pol = policy_for_tag(tag)
    assert (pol.name if pol else None) == name
