from __future__ import annotations

import pytest

from toolkit.core.errors import UsageError
from toolkit.core.gfx import parse_target, rocm_arch_value, runs_on
from toolkit.data.matrix import load_matrix


@pytest.mark.parametrize(
    ("code", "device", "ok"),
    [
        ("gfx90a", "gfx90a", True),
        ("gfx90a", "gfx90a:xnack+", True),
        ("gfx90a", "gfx90a:xnack-", True),
        ("gfx90a:xnack+", "gfx90a:xnack-", False),
        ("gfx90a:xnack+", "gfx90a", False),
        ("gfx90a:xnack+", "gfx90a:xnack+", True),
        ("gfx908:sramecc-:xnack-", "gfx908:xnack-:sramecc-", True),
        ("gfx908", "gfx90a", False),
    ],
)
def test_target_feature_rules(code: str, device: str, ok: bool) -> None:
    assert runs_on(parse_target(code), parse_target(device)) is ok


def test_parse_normalises_feature_order() -> None:
    assert str(parse_target("gfx908:xnack-:sramecc+")) == "gfx908:sramecc+:xnack-"


@pytest.mark.parametrize("bad", ["sm_90", "gfx", "gfx90a:xnack", "gfx90a:foo+", "gfx90a:xnack+:xnack-"])
def test_bad_target_ids(bad: str) -> None:
    with pytest.raises(UsageError):
        parse_target(bad)


def test_expand_families_ids_and_separators() -> None:
    m = load_matrix()
    assert m.expand_gfx(["gfx94X-dcgpu"]) == ("gfx942",)
    assert m.expand_gfx(["gfx90a,gfx908;gfx90a"]) == ("gfx90a", "gfx908")
    # ROCm/TheRock@89553ce37 cmake/therock_amdgpu_targets.cmake: gfx1103 is in gfx110X-all and
    # gfx110X-igpu, not in gfx110X-dgpu
    assert m.expand_gfx(["gfx110X-dgpu"]) == ("gfx1100", "gfx1101", "gfx1102")
    assert m.expand_gfx(["gfx110X-all"]) == ("gfx1100", "gfx1101", "gfx1102", "gfx1103")
    assert m.expand_gfx(["gfx90a:xnack+"]) == ("gfx90a:xnack+",)


def test_unknown_gfx_lists_valid_targets_and_families() -> None:
    with pytest.raises(UsageError) as exc:
        load_matrix().expand_gfx(["gfx9999"])
    msg = str(exc.value)
    assert "gfx9999" in msg and "gfx942" in msg and "gfx94X-dcgpu" in msg


def test_empty_arch_is_an_error() -> None:
    with pytest.raises(UsageError):
        load_matrix().expand_gfx([" , "])
    with pytest.raises(UsageError):
        rocm_arch_value([])
    assert rocm_arch_value(["gfx90a", "gfx942"]) == "gfx90a;gfx942"


@pytest.mark.parametrize(("target", "feature"), [
    ("gfx90a:xnack", "xnack"),            # a feature without its + or -
    ("gfx90a:foo+", "foo+"),              # no AMDGPU target feature of that name
    ("gfx90a:xnack+:xnack-", "xnack-"),   # the same feature twice: the second is named
])
def test_a_bad_feature_is_named_with_its_target_and_the_valid_features(target: str, feature: str) -> None:
    # LLVM's AMDGPU target ids (AMDGPUUsage, "Target ID"): processor, then sramecc or xnack,
    # each followed by + or -
    with pytest.raises(UsageError) as exc:
        parse_target(target)
    message = exc.value.message
    assert message.startswith(f"bad feature '{feature}' in gfx target id '{target}': ")
    assert message.endswith(": expected sramecc+/- or xnack+/-")
