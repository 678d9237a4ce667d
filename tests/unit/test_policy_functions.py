"""Where the toolkit finds auditwheel's policy file, pinned: the file auditwheel's installed
distribution lists (``importlib.metadata``, not the toolkit), found without importing
auditwheel (its import is slow), and a clear error when auditwheel is not installed."""

from __future__ import annotations

import importlib.metadata
import sys
from pathlib import Path
from typing import Any

import pytest

from toolkit.core.errors import EnvironmentProblem, UsageError
from toolkit.inspect.readers import policy


def _listed() -> str:
    files = importlib.metadata.files("auditwheel") or []
    (f,) = [f for f in files if f.name == "manylinux-policy.json"]
    return str(Path(f.locate()).resolve())


def test_the_policy_file_is_auditwheels_own_found_without_importing_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in [m for m in sys.modules if m == "auditwheel" or m.startswith("auditwheel.")]:
        monkeypatch.delitem(sys.modules, name)
    path = policy._policy_path()
    assert str(path.resolve()) == _listed()
    assert not any(m == "auditwheel" or m.startswith("auditwheel.") for m in sys.modules)


def test_without_auditwheel_the_policies_cannot_be_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(policy, "POLICY_PACKAGE", "no_such_package_here.policy")
    with pytest.raises(ModuleNotFoundError, match="^No module named 'no_such_package_here'$"):
        policy._policy_path()
    policy._auditwheel_policies.cache_clear()
    try:
        with pytest.raises(EnvironmentProblem) as err:
            policy._auditwheel_policies()
        assert str(err.value).startswith("cannot read auditwheel's manylinux-policy.json (No module named")
    finally:
        policy._auditwheel_policies.cache_clear()


def _auditwheel_json() -> dict[str, Any]:
    import json

    (f,) = [f for f in importlib.metadata.files("auditwheel") or [] if f.name == "manylinux-policy.json"]
    return {p["name"]: p for p in json.loads(Path(f.locate()).read_text(encoding="utf-8"))}


def _num(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in v.split("."))


def test_a_derived_policy_is_the_next_one_above_cut_to_its_glibc_and_the_distributions_runtime() -> None:
    raw = _auditwheel_json()
    nxt = raw["manylinux_2_34"]  # auditwheel has 2_31 and 2_34, not 2_32
    got = policy.derived_policy(32)
    assert (got.name, got.aliases) == ("manylinux_2_32", ())
    assert got.priority == int(nxt["priority"]) + 2
    assert got.libraries == frozenset(nxt["lib_whitelist"])
    # every distribution with glibc >= 2.32 ships at least GCC 11's runtime (RHEL 9):
    # GLIBCXX_3.4.29, CXXABI_1.3.13, GCC_7.0.0 (docs/manylinux-symbol-versions.md)
    bounds = {"GLIBC": (2, 32), "GLIBCXX": (3, 4, 29), "CXXABI": (1, 3, 13), "GCC": (7, 0, 0)}
    versions: dict[str, list[str]] = nxt["symbol_versions"]["x86_64"]
    for prefix, allowed in versions.items():
        bound = bounds.get(prefix)
        want = {v for v in allowed
                if bound is None or not v[0].isdigit() or _num(v) <= bound}
        if prefix == "GLIBC":
            want -= {"ABI_DT_RELR"}  # glibc 2.36 on
        assert got.symbol_versions[prefix] == frozenset(want), prefix
    assert "2.32" in got.symbol_versions["GLIBC"] and "2.33" not in got.symbol_versions["GLIBC"]
    assert policy.derived_policy(34) == policy.get_policy("manylinux_2_34")  # auditwheel's own


def test_a_policy_past_every_known_one_cannot_be_derived() -> None:
    with pytest.raises(UsageError) as err:
        policy.derived_policy(99)
    assert str(err.value) == ("cannot judge manylinux_2_99: no distribution in the table of "
                              "docs/manylinux-symbol-versions.md ships glibc 2.99 or newer")


def test_the_libraries_a_wheel_may_assume() -> None:
    raw = _auditwheel_json()
    loaders = {"ld-linux-x86-64.so.2", "ld-linux.so.2", "ld-linux-aarch64.so.1", "ld64.so.2", "ld64.so.1",
               "ld-linux-armhf.so.3", "ld-linux-riscv64-lp64d.so.1", "ld-linux-loongarch-lp64d.so.1"}
    assert policy.LOADERS == frozenset(loaders)
    p228 = policy.get_policy("manylinux_2_28")
    want = frozenset(loaders) | set(raw["manylinux_2_28"]["lib_whitelist"])
    assert policy.assumed_libraries(p228) == want
    # no policy, or linux (no list): the newest manylinux policy's list
    newest = max((n for n in raw if n.startswith("manylinux_2_")), key=lambda n: int(n.rsplit("_", 1)[1]))
    want = frozenset(loaders) | set(raw[newest]["lib_whitelist"])
    assert policy.assumed_libraries(None) == want
    assert policy.assumed_libraries(policy.get_policy("linux")) == want
