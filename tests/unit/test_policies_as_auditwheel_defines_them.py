"""The manylinux policies as auditwheel's own ``manylinux-policy.json`` defines them (read
here with ``json``, not through the toolkit): every policy's name, aliases, priority,
symbol versions per architecture and library list; a library's best policy is the
highest-priority one whose lists hold every version it needs (auditwheel's rule), and the
highest version of a prefix is the numerically highest (``2.17`` above ``2.9``)."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path
from typing import Any

import pytest

from toolkit.core.errors import UsageError
from toolkit.inspect.readers.policy import (
    best_policy,
    get_policy,
    load_policies,
    max_versions,
    policy_for_tag,
    version_key,
)


def _auditwheel() -> list[dict[str, Any]]:
    spec = importlib.util.find_spec("auditwheel")
    assert spec is not None and spec.origin
    return list(json.loads((Path(spec.origin).parent / "policy" / "manylinux-policy.json").read_text()))


def _num(v: str) -> tuple[int, ...]:
    return tuple(int(p) for p in v.split("."))


NUMERIC = re.compile(r"^[0-9]+(\.[0-9]+)*$")


@pytest.mark.parametrize("arch", ["x86_64", "aarch64", "i686", "ppc64le"])
def test_every_policy_is_read_as_auditwheel_writes_it(arch: str) -> None:
    # auditwheel's WheelPolicies keeps the policies naming the architecture, and linux
    raw = [r for r in _auditwheel() if arch in r["symbol_versions"] or r["name"] == "linux"]
    pols = load_policies(arch)
    assert [p.priority for p in pols] == sorted((r["priority"] for r in raw), reverse=True)
    for r in raw:
        p = get_policy(r["name"], arch)
        assert (p.name, p.aliases, p.priority) == (r["name"], tuple(r["aliases"]), r["priority"])
        want = {k: frozenset(v) for k, v in r["symbol_versions"].get(arch, {}).items()}
        assert dict(p.symbol_versions) == want
        assert p.libraries == frozenset(r.get("lib_whitelist", ()))
        for alias in r["aliases"]:
            assert get_policy(alias, arch) is p and get_policy(f"{alias}_{arch}", arch) is p
        assert get_policy(f" {r['name']}_{arch} ", arch) is p
        for prefix, versions in want.items():
            nums = [v for v in versions if NUMERIC.match(v)]
            assert p.highest(prefix) == (max(nums, key=_num) if nums else None)
            assert p.violations(f"{prefix}_{v}" for v in versions) == []
            assert p.violations([f"{prefix}_999.0", f"{prefix}_999.0"]) == [f"{prefix}_999.0"]
        assert p.highest("NOSUCHPREFIX") is None
        assert p.violations(["NOSUCHPREFIX_1.0"]) == []  # a prefix a policy does not list is free


def test_the_best_policy_is_the_highest_priority_one_that_holds_every_version() -> None:
    raw = sorted(_auditwheel(), key=lambda r: -r["priority"])
    glibcs = sorted({v for r in raw for v in r["symbol_versions"].get("x86_64", {}).get("GLIBC", [])
                     if NUMERIC.match(v)}, key=_num)
    assert len(glibcs) > 10
    for v in glibcs:
        want = next(r["name"] for r in raw
                    if v in r["symbol_versions"].get("x86_64", {}).get("GLIBC", []))
        assert best_policy([f"GLIBC_{v}", "GLIBC_2.2.5"]).name == want, v
    assert best_policy([]).name == raw[0]["name"]
    assert best_policy(["GLIBC_99.0"]).name == "linux"  # nothing holds it: the last resort


def test_the_highest_version_per_prefix_is_numeric() -> None:
    assert max_versions(["GLIBC_2.9", "GLIBC_2.17", "GLIBC_2.2.5", "GLIBCXX_3.4.9", "GLIBCXX_3.4.19",
                         "GLIBC_PRIVATE", "CXXABI_1.3", "_1.0", "NOPREFIX"]) == {
        "CXXABI": "1.3", "GLIBC": "2.17", "GLIBCXX": "3.4.19"}
    assert list(max_versions(["ZLIB_1.2.9", "GLIBC_2.17"])) == ["GLIBC", "ZLIB"]  # sorted by prefix
    assert max_versions([]) == {}
    assert sorted(["GLIBC_2.17", "GLIBC_2.9", "GLIBC_PRIVATE", "GLIBC_2.2.5"], key=version_key) == [
        "GLIBC_PRIVATE", "GLIBC_2.2.5", "GLIBC_2.9", "GLIBC_2.17"]


def test_unknown_policy_names_list_the_valid_ones() -> None:
    with pytest.raises(UsageError) as err:
        get_policy("manylinux_x")
    names = [r["name"] for r in sorted(_auditwheel(), key=lambda r: -r["priority"]) if r["name"] != "linux"]
    assert str(err.value) == (f"unknown manylinux policy 'manylinux_x'; valid: {', '.join(names)} "
                              "or any manylinux_2_N")


@pytest.mark.parametrize(("tag", "name"), [
    ("manylinux2014_x86_64", "manylinux_2_17"), ("manylinux_2_28_aarch64", "manylinux_2_28"),
    ("manylinux1_i686", "manylinux_2_5"), ("linux_x86_64", None), ("musllinux_1_2_x86_64", None),
    ("any", None), ("macosx_11_0_arm64", None),
])
def test_a_platform_tag_claims_its_policy(tag: str, name: str | None) -> None:
    pol = policy_for_tag(tag)
    assert (pol.name if pol else None) == name
