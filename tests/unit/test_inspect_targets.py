"""GPU targets: the CLI expands family names with the matrix, the inspect layer takes ids."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolkit.cli.commands.check import expand_targets
from toolkit.core.errors import UsageError
from toolkit.core.gfx import TargetId, parse_target
from toolkit.inspect.rules.gpu import code_runs_on


def test_family_names_and_separators_expand_with_the_matrix() -> None:
    # gpus.toml: [families.gfx90X-dcgpu] targets = ["gfx906", "gfx908", "gfx90a"]
    got = expand_targets(["gfx90X-dcgpu", "gfx942;gfx1100 gfx90a:xnack+"])
    assert [str(t) for t in got] == ["gfx906", "gfx908", "gfx90a", "gfx942", "gfx1100", "gfx90a:xnack+"]
    assert expand_targets([]) == []


def test_bad_ids_are_usage_errors() -> None:
    with pytest.raises(UsageError, match="bad gfx target id 'gfxbogus'"):
        expand_targets(["gfxbogus"])
    with pytest.raises(UsageError, match="xnack"):
        expand_targets(["gfx90a:xnack"])


def test_without_matrix_data_only_plain_ids_are_accepted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLKIT_DATA_DIR", str(tmp_path / "no-such-folder"))
    assert expand_targets(["gfx90a,gfx942:sramecc+"]) == [
        TargetId("gfx90a"),
        TargetId("gfx942", (("sramecc", True),)),
    ]
    with pytest.raises(UsageError):  # fails closed: a family name is then a bad gfx id
        expand_targets(["gfx90X-dcgpu"])


@pytest.mark.parametrize(
    ("code", "device", "runs"),
    [
        ("gfx90a", "gfx90a:xnack+", True),
        ("gfx90a:xnack+", "gfx90a:xnack-", False),
        ("gfx90a:xnack+", "gfx90a", False),
        ("gfx908", "gfx90a", False),
        # LLVM AMDGPUUsage: gfx9-4-generic covers gfx940, gfx941, gfx942, gfx950
        ("gfx9-4-generic", "gfx942", True),
        ("gfx9-4-generic:xnack-", "gfx942:xnack+", False),
        ("gfx9-4-generic", "gfx90a", False),
        ("gfx11-generic", "gfx1151", True),
        ("gfx11-generic", "gfx1200", False),
        ("not-a-target", "gfx90a", False),
    ],
)
def test_code_runs_on(code: str, device: str, runs: bool) -> None:
    assert code_runs_on(code, parse_target(device)) is runs
