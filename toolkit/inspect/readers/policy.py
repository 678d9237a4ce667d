"""manylinux policies: auditwheel's own policy data, and every other ``manylinux_2_N`` derived.

A policy allows, per architecture and per version prefix (GLIBC, GLIBCXX, CXXABI, GCC, ...),
a complete set of symbol versions. A library's policy is the highest-priority policy whose
sets contain every version it needs (prefixes a policy does not list are not restricted).

PEP 600 tags that auditwheel's file lacks (``manylinux_2_32``) are judged all the same, with
a policy derived host-independently (:func:`derived_policy`): GLIBC nodes up to 2.N, and for
the GCC runtime the newest nodes every distribution with glibc >= 2.N ships
(:mod:`toolkit.inspect.readers.distros`), never looser than auditwheel's next policy above N.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from toolkit.core.errors import DataError, EnvironmentProblem, UsageError, suggestion

# e_machine -> auditwheel architecture name
ARCH_OF_MACHINE = {
    62: "x86_64",
    183: "aarch64",
    3: "i686",
    21: "ppc64le",
    22: "s390x",
    40: "armv7l",
    243: "riscv64",
    258: "loongarch64",
}
POLICY_PACKAGE, POLICY_FILE = "auditwheel.policy", "manylinux-policy.json"
_NUMERIC = re.compile(r"^[0-9]+(\.[0-9]+)*$")


@dataclass(frozen=True)
class Policy:
    name: str
    aliases: tuple[str, ...]
    priority: int
    symbol_versions: Mapping[str, frozenset[str]]  # for one architecture
    libraries: frozenset[str] = frozenset()  # auditwheel's lib_whitelist: may be assumed present

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


@dataclass(frozen=True)
class PolicySpec:
    """One policy of auditwheel's file, validated: its versions for every architecture."""

    name: str
    aliases: tuple[str, ...]
    priority: int
    symbol_versions: Mapping[str, Mapping[str, frozenset[str]]]  # arch -> prefix -> versions
    libraries: frozenset[str] = frozenset()  # lib_whitelist (optional in the file)


def _describe(value: object) -> str:
    """``str '80'``, ``list ['2.17', 2.28]``, ``null``: the JSON value a key has."""
    if value is None:
        return "null"
    shown = repr(value)
    return f"{type(value).__name__} {shown if len(shown) <= 60 else shown[:57] + '...'}"


def _string_list(value: object, where: str, key: str) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise DataError(f"{where}: {key!r} must be a list of strings, got {_describe(value)}")
    for i, item in enumerate(value):
        if not isinstance(item, str):
            raise DataError(f"{where}: {key!r} must be a list of strings, item {i} is {_describe(item)}")
    return tuple(value)


def _spec(raw: object, where: str) -> PolicySpec:
    if not isinstance(raw, dict):
        raise DataError(f"{where} must be an object, got {_describe(raw)}")
    name = raw.get("name")
    if isinstance(name, str) and name:
        where = f"{where} ({name})"
    for key in ("name", "aliases", "priority", "symbol_versions"):
        if key not in raw:
            raise DataError(f"{where}: missing key {key!r}")
    if not isinstance(name, str) or not name:
        raise DataError(f"{where}: 'name' must be a non-empty string, got {_describe(name)}")
    priority = raw["priority"]
    if not isinstance(priority, int) or isinstance(priority, bool):
        raise DataError(f"{where}: 'priority' must be an integer, got {_describe(priority)}")
    aliases = _string_list(raw["aliases"], where, "aliases")
    per_arch = raw["symbol_versions"]
    if not isinstance(per_arch, dict):
        raise DataError(f"{where}: 'symbol_versions' must be an object, got {_describe(per_arch)}")
    versions: dict[str, dict[str, frozenset[str]]] = {}
    for arch, prefixes in per_arch.items():
        key = f"symbol_versions.{arch}"
        if not isinstance(prefixes, dict):
            raise DataError(f"{where}: {key!r} must be an object, got {_describe(prefixes)}")
        versions[arch] = {
            prefix: frozenset(_string_list(vs, where, f"{key}.{prefix}")) for prefix, vs in prefixes.items()
        }
    libs = _string_list(raw["lib_whitelist"], where, "lib_whitelist") if "lib_whitelist" in raw else ()
    return PolicySpec(name, aliases, priority, versions, frozenset(libs))


def parse_policies(text: str, source: str) -> tuple[PolicySpec, ...]:
    """Validate the text of a ``manylinux-policy.json``; ``DataError`` names what is wrong."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise DataError(f"{source}: not valid JSON: {err}") from None
    if not isinstance(data, list) or not data:
        raise DataError(f"{source}: expected a non-empty list of policies, got {_describe(data)}")
    return tuple(_spec(raw, f"{source}: policy #{i}") for i, raw in enumerate(data))


def read_policy_file(path: str | os.PathLike[str]) -> tuple[PolicySpec, ...]:
    """Read and validate a policy file (auditwheel's format)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise DataError(f"{path}: cannot read the manylinux policy file ({err})") from None
    return parse_policies(text, str(path))


def _policy_path() -> Path:
    """auditwheel's policy file, found without importing auditwheel (its import is slow)."""
    top, *rest = POLICY_PACKAGE.split(".")
    spec = importlib.util.find_spec(top)
    if spec is None or not spec.origin:
        raise ModuleNotFoundError(f"No module named {top!r}")
    return Path(spec.origin).parent.joinpath(*rest, POLICY_FILE)


@cache
def _auditwheel_policies() -> tuple[PolicySpec, ...]:
    try:
        source = _policy_path()
        text = source.read_text(encoding="utf-8")
    except (ModuleNotFoundError, OSError) as err:
        raise EnvironmentProblem(
            f"cannot read auditwheel's {POLICY_FILE} ({err})", hint="pip install auditwheel"
        ) from None
    return parse_policies(text, f"auditwheel's {POLICY_FILE} ({source})")


@cache
def load_policies(arch: str = "x86_64") -> tuple[Policy, ...]:
    """Policies for ``arch``, most compatible (highest priority) first: those whose symbol
    versions name ``arch``, and ``linux`` (auditwheel's rule: no ``manylinux_2_5_aarch64``)."""
    out = [
        Policy(spec.name, spec.aliases, spec.priority, spec.symbol_versions.get(arch, {}), spec.libraries)
        for spec in _auditwheel_policies()
        if arch in spec.symbol_versions or spec.name == "linux"
    ]
    return tuple(sorted(out, key=lambda p: -p.priority))


_PEP600 = re.compile(r"^manylinux_2_([0-9]+)$")


def get_policy(name: str, arch: str = "x86_64") -> Policy:
    """A policy by name or alias, with or without the architecture suffix; any PEP 600
    ``manylinux_2_N`` auditwheel lacks is derived (``UsageError`` when it cannot be)."""
    key = name.strip()
    if key.endswith("_" + arch):
        key = key[: -len(arch) - 1]
    for p in load_policies(arch):
        if key == p.name or key in p.aliases:
            return p
    m = _PEP600.match(key)
    if m:
        return derived_policy(int(m.group(1)), arch)
    valid = [p.name for p in load_policies(arch) if p.name != "linux"]
    raise UsageError(
        f"unknown manylinux policy {name!r}; valid: {', '.join(valid)} or any manylinux_2_N",
        nearest=suggestion(name, valid),
    )


@cache
def derived_policy(minor: int, arch: str = "x86_64") -> Policy:
    """``manylinux_2_<minor>``: GLIBC up to 2.<minor>; GCC runtime nodes up to what every
    distribution of :mod:`toolkit.inspect.readers.distros` with glibc >= 2.<minor> ships, and never
    more than auditwheel's next policy above it allows."""
    name = f"manylinux_2_{minor}"
    known: dict[int, Policy] = {}
    for p in load_policies(arch):
        m = _PEP600.match(p.name)
        if m:
            known[int(m.group(1))] = p
    above = sorted(k for k in known if k >= minor)
    if minor in known:
        return known[minor]
    maxima = _runtime_maxima(minor)
    if not above or maxima is None:
        raise UsageError(
            f"cannot judge {name}: no distribution in the table of "
            f"docs/manylinux-symbol-versions.md ships glibc 2.{minor} or newer"
        )
    nxt = known[above[0]]
    versions = {
        prefix: frozenset(v for v in allowed if _allowed(prefix, v, minor, maxima))
        for prefix, allowed in nxt.symbol_versions.items()
    }
    return Policy(name, (), nxt.priority + (above[0] - minor), versions, nxt.libraries)


def _allowed(prefix: str, ver: str, minor: int, maxima: Mapping[str, tuple[int, ...]]) -> bool:
    """Is node ``prefix_ver`` (allowed by the next policy above) allowed by manylinux_2_<minor>?"""
    if prefix == "GLIBC":
        if _NUMERIC.match(ver):
            return _num(ver) <= (2, minor)
        return not ver.startswith("ABI_DT_RELR") or minor >= 36  # DT_RELR support: glibc 2.36
    bound = maxima.get(prefix)
    return bound is None or not _NUMERIC.match(ver) or _num(ver) <= bound


def _runtime_maxima(minor: int) -> dict[str, tuple[int, ...]] | None:
    from toolkit.inspect.readers.distros import runtime_maxima

    found = runtime_maxima(minor)
    return None if found is None else {k: _num(v) for k, v in found.items()}


def policy_for_tag(platform: str) -> Policy | None:
    """The policy a platform tag claims (``manylinux_2_28_x86_64``), None if it claims none;
    ``UsageError`` for a manylinux tag that cannot be judged."""
    for arch in set(ARCH_OF_MACHINE.values()):
        if platform.endswith("_" + arch) and platform.startswith("manylinux"):
            return get_policy(platform, arch)
    return None


# glibc's dynamic loaders (DT_NEEDED of some libraries): part of every glibc system
LOADERS = frozenset({"ld-linux-x86-64.so.2", "ld-linux.so.2", "ld-linux-aarch64.so.1", "ld64.so.2",
                     "ld64.so.1", "ld-linux-armhf.so.3", "ld-linux-riscv64-lp64d.so.1",
                     "ld-linux-loongarch-lp64d.so.1"})


def assumed_libraries(policy: Policy | None, arch: str = "x86_64") -> frozenset[str]:
    """The libraries a wheel judged against ``policy`` may need without shipping them: its
    lib_whitelist and the loaders. ``None`` or ``linux`` (no policy holds): the newest
    manylinux policy's list."""
    if policy is None or not policy.libraries:
        newest = [p for p in load_policies(arch) if p.libraries]
        return LOADERS | (newest[-1].libraries if newest else frozenset())
    return LOADERS | policy.libraries


def glibc_floor(policy: Policy | None, arch: str = "x86_64") -> tuple[int, ...]:
    """The oldest glibc ``policy`` admits (its newest GLIBC node: 2.28 for manylinux_2_28);
    ``None`` or ``linux`` (no policy holds): the newest glibc of any policy."""
    top = policy.highest("GLIBC") if policy is not None else None
    if top is None:
        tops = [h for p in load_policies(arch) if (h := p.highest("GLIBC"))]
        top = max(tops, key=_num) if tops else "2.5"
    return _num(top)


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
