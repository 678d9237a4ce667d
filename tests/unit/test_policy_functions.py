"""Where the toolkit finds auditwheel's policy file, pinned: the file auditwheel's installed
distribution lists (``importlib.metadata``, not the toolkit), found without importing
auditwheel (its import is slow), and a clear error when auditwheel is not installed."""

from __future__ import annotations

import importlib.metadata
import sys
from pathlib import Path
from typing import Any

import pytest

from toolkit.core.errors import DataError, EnvironmentProblem, UsageError
from toolkit.inspect.readers import policy
from toolkit.inspect.readers.elf import ElfInfo
from toolkit.inspect.readers.policy import _allowed, parse_policies
from toolkit.inspect.readers.resolver import Lib
from toolkit.inspect.report import LibraryResult, WheelResult
from toolkit.inspect.rules.manylinux import check_policy, library_policy


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


def _lib(path: str, **kw: object) -> Lib:
    info = ElfInfo(machine=62, elf_class=64, type=3, **kw)  # type: ignore[arg-type]
    return Lib(path, "wheel:" + path.rpartition("/")[0], info)


def test_the_wheel_policy_is_its_worst_library_and_that_library_is_named() -> None:
    old = _lib("pkg/old.so", version_needs={"libc.so.6": ("GLIBC_2.2.5", "GLIBC_2.17")})
    new = _lib("pkg/new.so", version_needs={"libc.so.6": ("GLIBC_2.2.5", "GLIBC_2.34")})
    res = WheelResult("w", tags=["cp311-cp311-linux_x86_64"])
    pairs = []
    for lib in (old, new, _lib("pkg/none.so")):
        lr = LibraryResult(lib.path, "shared-library")
        assert lib.info is not None and library_policy(lr, lib.info, set()) is None
        pairs.append((lib, lr))
    # GLIBC_2.17 is allowed from manylinux_2_17 (manylinux2014) on, GLIBC_2.34 only from 2_34
    assert [lr.policy for _, lr in pairs] == ["manylinux_2_17", "manylinux_2_34", "manylinux_2_5"]
    judged = check_policy(res, pairs, set(), is_wheel=True, required=None)
    assert res.policy == "manylinux_2_34" and res.policy_library == "pkg/new.so"
    assert judged is not None and judged.name == "manylinux_2_34"


def test_an_unknown_machine_cannot_be_judged_and_is_an_error() -> None:
    info = ElfInfo(machine=0x9999, elf_class=64, type=3)
    lr = LibraryResult("x.so", "shared-library")
    finding = library_policy(lr, info, set())
    assert finding is not None and finding.severity == "error" and lr.policy is None


def test_dt_relr_needs_glibc_2_36() -> None:
    # glibc 2.36 NEWS: "Support for DT_RELR relative relocation format has been added"; binaries
    # using it need the GLIBC_ABI_DT_RELR version node
    assert _allowed("GLIBC", "ABI_DT_RELR", 36, {}) and not _allowed("GLIBC", "ABI_DT_RELR", 35, {})
    assert _allowed("GLIBC", "2.17", 17, {}) and not _allowed("GLIBC", "2.18", 17, {})


def test_a_malformed_lib_whitelist_is_named_in_the_error() -> None:
    text = ('[{"name": "manylinux_2_28", "aliases": [], "priority": 70, "symbol_versions": {},'
            ' "lib_whitelist": "libc.so.6"}]')
    with pytest.raises(DataError) as err:
        parse_policies(text, "policy.json")
    assert str(err.value) == ("policy.json: policy #0 (manylinux_2_28): 'lib_whitelist' must be a "
                              "list of strings, got str 'libc.so.6'")


def test_the_gcc_runtime_nodes_of_a_derived_policy_are_bounded_by_the_distributions() -> None:
    # GLIBCXX_3.4.25 is GCC 8's libstdc++; a policy whose distributions ship up to 3.4.25
    # allows it and not 3.4.26 (GCC 9)
    maxima = {"GLIBCXX": (3, 4, 25), "CXXABI": (1, 3, 11)}
    assert _allowed("GLIBCXX", "3.4.25", 28, maxima)
    assert not _allowed("GLIBCXX", "3.4.26", 28, maxima)
    # a prefix no distribution bounds is not restricted
    assert _allowed("GCC", "9.0.0", 28, maxima)
    # CXXABI_TM_1 (libstdc++'s transactional memory node, in auditwheel's policies) has no number
    assert _allowed("CXXABI", "TM_1", 28, maxima)


def test_a_long_malformed_value_is_cut_to_sixty_characters_in_the_error() -> None:
    text = '[{"name": "p", "aliases": [], "priority": "' + "9" * 100 + '", "symbol_versions": {}}]'
    with pytest.raises(DataError) as err:
        parse_policies(text, "policy.json")
    # repr of the 100-digit string is 102 characters: its first 57, then "..."
    assert str(err.value) == ("policy.json: policy #0 (p): 'priority' must be an integer, got str '"
                              + "9" * 56 + "...")


def test_a_policy_file_is_read_as_utf8_whatever_the_locale(tmp_path: Path, ascii_locale: None) -> None:
    from toolkit.inspect.readers.policy import read_policy_file

    # RFC 8259 section 8.1: JSON exchanged between systems is UTF-8
    path = tmp_path / "policy.json"
    path.write_bytes('[{"name": "manylinux_2_28", "aliases": ["sélection"], "priority": 70, '
                     '"symbol_versions": {}}]'.encode())
    (spec,) = read_policy_file(path)
    assert spec.aliases == ("sélection",)


def test_an_architecture_no_manylinux_policy_covers_has_glibc_2_5_as_its_floor() -> None:
    # auditwheel's policy file names no sparc64 policy: only "linux" (no symbol versions) holds
    assert [p.name for p in policy.load_policies("sparc64")] == ["linux"]
    # with no policy to take the newest GLIBC node from, the floor is glibc 2.5: PEP 513's
    # manylinux1, the oldest glibc any manylinux policy names
    assert policy.glibc_floor(None, "sparc64") == (2, 5)
    assert policy.glibc_floor(policy.get_policy("linux", "sparc64"), "sparc64") == (2, 5)
    assert policy.glibc_floor(policy.get_policy("manylinux1")) == (2, 5)
