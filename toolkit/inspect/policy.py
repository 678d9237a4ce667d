"""manylinux policies, read at run time from auditwheel's own policy data.

A policy allows, per architecture and per version prefix (GLIBC, GLIBCXX, CXXABI, GCC, ...),
a complete set of symbol versions. A library's policy is the highest-priority policy whose
sets contain every version it needs (prefixes a policy does not list are not restricted).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources

from toolkit.core.errors import UsageError

# e_machine -> auditwheel architecture name
ARCH_OF_MACHINE = {62: "x86_64", 183: "aarch64", 3: "i686", 21: "ppc64le", 22: "s390x",
                   40: "armv7l", 243: "riscv64", 258: "loongarch64"}  # fmt: skip
_NUMERIC = re.compile(r"^[0-9]+(\.[0-9]+)*$")


@dataclass(frozen=True)
class Policy:
    name: str
    aliases: tuple[str, ...]
    priority: int
    symbol_versions: Mapping[str, frozenset[str]]  # for one architecture

    def violations(self, versions: Iterable[str]) -> list[str]:
        """The versions (``GLIBCXX_3.4.29``) this policy does not allow."""
        bad = []
        for full in versions:
            prefix, _, ver = full.partition("_")
            allowed = self.symbol_versions.get(prefix)
            if allowed is not None and ver not in allowed:
                bad.append(full)
        return sorted(set(bad), key=version_key)

    def allows(self, versions: Iterable[str]) -> bool:
        return not self.violations(versions)

    def highest(self, prefix: str) -> str | None:
        nums = [v for v in self.symbol_versions.get(prefix, ()) if _NUMERIC.match(v)]
        return max(nums, key=_num) if nums else None


def _num(v: str) -> tuple[int, ...]:
    return tuple(int(p) for p in v.split("."))


def version_key(full: str) -> tuple[str, tuple[int, ...], str]:
    prefix, _, ver = full.partition("_")
    return (prefix, _num(ver) if _NUMERIC.match(ver) else (), ver)


@cache
def _raw_policies() -> list[dict[str, object]]:
    text = resources.files("auditwheel.policy").joinpath("manylinux-policy.json").read_text()
    data = json.loads(text)
    if not isinstance(data, list):
        raise UsageError("auditwheel's manylinux-policy.json is not a list of policies")
    return data


@cache
def load_policies(arch: str = "x86_64") -> tuple[Policy, ...]:
    """Policies for ``arch``, most compatible (highest priority) first."""
    out = []
    for raw in _raw_policies():
        versions = raw.get("symbol_versions", {})
        assert isinstance(versions, dict)
        per_arch = versions.get(arch, {})
        aliases = raw.get("aliases", [])
        assert isinstance(aliases, list)
        out.append(Policy(
            str(raw["name"]), tuple(str(a) for a in aliases), int(str(raw["priority"])),
            {k: frozenset(v) for k, v in per_arch.items()},
        ))  # fmt: skip
    return tuple(sorted(out, key=lambda p: -p.priority))


def get_policy(name: str, arch: str = "x86_64") -> Policy:
    """A policy by name or alias, with or without the architecture suffix."""
    key = name.strip()
    if key.endswith("_" + arch):
        key = key[: -len(arch) - 1]
    for p in load_policies(arch):
        if key == p.name or key in p.aliases:
            return p
    valid = [p.name for p in load_policies(arch) if p.name != "linux"]
    raise UsageError(f"unknown manylinux policy {name!r}; valid: {', '.join(valid)}")


def policy_for_tag(platform: str) -> Policy | None:
    """The policy a platform tag claims (``manylinux_2_28_x86_64``), None if it claims none."""
    for arch in set(ARCH_OF_MACHINE.values()):
        if platform.endswith("_" + arch) and platform.startswith("manylinux"):
            try:
                return get_policy(platform, arch)
            except UsageError:
                return None
    return None


def tag_arch(platform: str) -> str | None:
    return next((a for a in ARCH_OF_MACHINE.values() if platform.endswith("_" + a)), None)


def best_policy(versions: Iterable[str], arch: str = "x86_64") -> Policy:
    """The highest-priority policy allowing every version (``linux`` allows all)."""
    vs = list(versions)
    for p in load_policies(arch):
        if p.allows(vs):
            return p
    return load_policies(arch)[-1]


def max_versions(versions: Iterable[str]) -> dict[str, str]:
    """Highest numeric version per prefix: ``{"GLIBC": "2.28", "GLIBCXX": "3.4.22"}``."""
    best: dict[str, str] = {}
    for full in versions:
        prefix, _, ver = full.partition("_")
        if prefix and _NUMERIC.match(ver) and (prefix not in best or _num(ver) > _num(best[prefix])):
            best[prefix] = ver
    return dict(sorted(best.items()))
