"""manylinux policies come from auditwheel's data, not from tables of our own."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from toolkit.cli.main import main
from toolkit.core.errors import DataError, EnvironmentProblem, UsageError
from toolkit.inspect.readers import policy
from toolkit.inspect.readers.policy import (
    best_policy,
    get_policy,
    load_policies,
    max_versions,
    policy_for_tag,
    read_policy_file,
)


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
    got = max_versions(
        [
            "GLIBC_2.2.5",
            "GLIBC_2.17",
            "GLIBC_2.9",
            "GLIBC_PRIVATE",
            "CXXABI_TM_1",
            "GLIBCXX_3.4.9",
            "GLIBCXX_3.4.29",
        ]
    )
    assert got == {"GLIBC": "2.17", "GLIBCXX": "3.4.29"}


@pytest.mark.parametrize(
    ("tag", "name"),
    [
        ("manylinux_2_28_x86_64", "manylinux_2_28"),
        ("manylinux2014_x86_64", "manylinux_2_17"),
        ("linux_x86_64", None),
        ("any", None),
        ("musllinux_1_2_x86_64", None),
    ],
)
def test_policy_for_tag(tag: str, name: str | None) -> None:
    pol = policy_for_tag(tag)
    assert (pol.name if pol else None) == name


# --- auditwheel's policy file is validated on load --------------------------------------------
GOOD_POLICY = {
    "name": "manylinux_2_17",
    "aliases": ["manylinux2014"],
    "priority": 80,
    "symbol_versions": {"x86_64": {"GLIBC": ["2.2.5", "2.17"], "GLIBCXX": ["3.4", "3.4.19"]}},
}


def _write(tmp_path: Path, doc: object) -> Path:
    path = tmp_path / "manylinux-policy.json"
    path.write_text(json.dumps(doc))
    return path


def test_a_well_formed_policy_file_loads(tmp_path: Path) -> None:
    (spec,) = read_policy_file(_write(tmp_path, [GOOD_POLICY]))
    assert (spec.name, spec.aliases, spec.priority) == ("manylinux_2_17", ("manylinux2014",), 80)
    assert spec.symbol_versions["x86_64"]["GLIBC"] == frozenset({"2.2.5", "2.17"})


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({"name": "x"}, "expected a non-empty list of policies, got dict {'name': 'x'}"),
        ([], "expected a non-empty list of policies, got list []"),
        (["manylinux_2_17"], "policy #0 must be an object, got str 'manylinux_2_17'"),
        (
            [{k: v for k, v in GOOD_POLICY.items() if k != "symbol_versions"}],
            "policy #0 (manylinux_2_17): missing key 'symbol_versions'",
        ),
        (
            [GOOD_POLICY, {k: v for k, v in GOOD_POLICY.items() if k != "name"}],
            "policy #1: missing key 'name'",
        ),
        (
            [{**GOOD_POLICY, "priority": "80"}],
            "policy #0 (manylinux_2_17): 'priority' must be an integer, got str '80'",
        ),
        ([{**GOOD_POLICY, "priority": True}], "'priority' must be an integer, got bool True"),
        ([{**GOOD_POLICY, "name": 17}], "policy #0: 'name' must be a non-empty string, got int 17"),
        (
            [{**GOOD_POLICY, "aliases": "manylinux2014"}],
            "'aliases' must be a list of strings, got str 'manylinux2014'",
        ),
        ([{**GOOD_POLICY, "symbol_versions": []}], "'symbol_versions' must be an object, got list []"),
        (
            [{**GOOD_POLICY, "symbol_versions": {"x86_64": ["GLIBC_2.17"]}}],
            "'symbol_versions.x86_64' must be an object, got list ['GLIBC_2.17']",
        ),
        (
            [{**GOOD_POLICY, "symbol_versions": {"x86_64": {"GLIBC": "2.17"}}}],
            "'symbol_versions.x86_64.GLIBC' must be a list of strings, got str '2.17'",
        ),
        (
            [{**GOOD_POLICY, "symbol_versions": {"x86_64": {"GLIBC": ["2.17", 2.28]}}}],
            "'symbol_versions.x86_64.GLIBC' must be a list of strings, item 1 is float 2.28",
        ),
    ],
)
def test_a_malformed_policy_file_is_a_data_error_naming_what_is_wrong(
    tmp_path: Path, doc: object, message: str
) -> None:
    path = _write(tmp_path, doc)
    with pytest.raises(DataError) as err:
        read_policy_file(path)
    assert str(err.value).startswith(f"{path}: ")
    assert message in str(err.value)


def test_policy_file_that_is_not_json(tmp_path: Path) -> None:
    path = tmp_path / "manylinux-policy.json"
    path.write_text('[{"name": ')
    with pytest.raises(DataError, match=r"manylinux-policy\.json: not valid JSON"):
        read_policy_file(path)


@pytest.fixture()
def fake_auditwheel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A stand-in for the ``auditwheel.policy`` package, so the real loading path reads it."""
    pkg = tmp_path / "fake_auditwheel_policy"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "fake_auditwheel_policy", raising=False)
    monkeypatch.setattr(policy, "POLICY_PACKAGE", "fake_auditwheel_policy")
    policy._auditwheel_policies.cache_clear()
    policy.load_policies.cache_clear()
    yield pkg / "manylinux-policy.json"
    policy._auditwheel_policies.cache_clear()
    policy.load_policies.cache_clear()


def test_the_auditwheel_file_is_validated_when_policies_load(
    fake_auditwheel: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_auditwheel.write_text(json.dumps([{**GOOD_POLICY, "priority": None}]))
    with pytest.raises(DataError, match="'priority' must be an integer, got null") as err:
        get_policy("manylinux_2_17")
    assert "auditwheel's manylinux-policy.json" in str(err.value)
    # the CLI reports it as a malformed data file (exit 3), in one line
    assert main(["check", "/nonexistent.whl", "--policy", "manylinux_2_17"]) == 3
    assert "'priority' must be an integer" in capsys.readouterr().err


def test_the_auditwheel_file_missing_is_an_environment_problem(fake_auditwheel: Path) -> None:
    with pytest.raises(EnvironmentProblem, match="manylinux-policy.json"):
        load_policies("x86_64")


def test_versions_no_policy_allows_get_the_architectures_last_policy(fake_auditwheel: Path) -> None:
    """A policy file without auditwheel's catch-all ``linux``: versions beyond every policy of
    aarch64 get aarch64's lowest-priority policy (the last resort), with aarch64's versions;
    the x86_64-only policy plays no part."""
    fake_auditwheel.write_text(json.dumps([
        {"name": "manylinux_2_17", "aliases": ["manylinux2014"], "priority": 80,
         "symbol_versions": {"aarch64": {"GLIBC": ["2.17"]}, "x86_64": {"GLIBC": ["2.17"]}}},
        {"name": "manylinux_2_28", "aliases": [], "priority": 70,
         "symbol_versions": {"aarch64": {"GLIBC": ["2.17", "2.28"]}}},
        {"name": "manylinux_2_5", "aliases": [], "priority": 90,
         "symbol_versions": {"x86_64": {"GLIBC": ["2.5"]}}},
    ]))
    assert best_policy(["GLIBC_2.17"], "aarch64").name == "manylinux_2_17"
    last = best_policy(["GLIBC_2.99"], "aarch64")
    assert last.name == "manylinux_2_28" and last.priority == 70
    assert last.symbol_versions == {"GLIBC": frozenset({"2.17", "2.28"})}


# --- PEP 600 tags auditwheel lacks: derived, host-independent (issue 11) ------------------------
def _known() -> dict[int, policy.Policy]:
    pols = load_policies("x86_64")
    return {int(p.name.rsplit("_", 1)[1]): p for p in pols if p.name.startswith("manylinux_2_")}


@pytest.mark.parametrize("minor", [18, 25, 29, 30, 32, 33])
def test_derived_policies_are_never_looser_than_auditwheels_next(minor: int) -> None:
    known = _known()
    assert minor not in known
    derived = get_policy(f"manylinux_2_{minor}")
    nxt = known[min(k for k in known if k > minor)]
    assert derived.name == f"manylinux_2_{minor}"
    for prefix, allowed in derived.symbol_versions.items():
        assert allowed <= nxt.symbol_versions[prefix], prefix
    assert derived.highest("GLIBC") == f"2.{minor}"
    assert nxt.priority < derived.priority < max(p.priority for k, p in known.items() if k < minor)


def test_manylinux_2_32_allows_what_rhel9_ships() -> None:
    p = get_policy("manylinux_2_32_x86_64")
    assert (p.highest("GLIBCXX"), p.highest("CXXABI"), p.highest("GCC")) == ("3.4.29", "1.3.13", "7.0.0")
    assert p.violations(["CXXABI_1.3.15", "GLIBC_2.38", "GLIBC_2.32", "CXXABI_TM_1"]) == [
        "CXXABI_1.3.15",
        "GLIBC_2.38",
    ]
    assert policy_for_tag("manylinux_2_32_x86_64") == p
    assert get_policy("manylinux_2_28") in load_policies("x86_64")  # auditwheel's own, when it has it


def test_the_distribution_table_is_never_stricter_than_auditwheel() -> None:
    from toolkit.inspect.readers.distros import runtime_maxima

    for minor, pol in _known().items():
        maxima = runtime_maxima(minor)
        if maxima is None or minor < 17:
            continue
        for prefix, ver in maxima.items():
            assert policy._num(ver) >= policy._num(pol.highest(prefix) or "0"), (minor, prefix)


def test_a_tag_beyond_the_table_cannot_be_judged() -> None:
    with pytest.raises(UsageError, match="cannot judge manylinux_2_99"):
        get_policy("manylinux_2_99")
    from toolkit.inspect.rules.manylinux import claimed_policy

    pol, problems = claimed_policy(["cp312-cp312-manylinux_2_99_x86_64"])
    assert pol is None and problems[0].check == "platform-tag" and problems[0].severity == "error"
