"""A repro's verdict covers the wheel variants too (README: "The manifest records each variant
(`variants`: label, wheel, sha256) and `invoke repro` rebuilds and compares each"), and a
repro forced over another source tree never calls anything identical (the refusal's hint:
"pass --force (the result is then never called identical)"): not the fat wheel, not a variant.

Driven on the bundled sample's plan made on this host. The rebuild itself (every build step:
minutes of compiling) is the one boundary played: ``repro._run`` hands back the wheels a
rebuild made, real files whose sha256 this test computes with hashlib."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from tests.fixtures.manifests import for_plan, sample_plan
from toolkit.core.errors import CheckFailed
from toolkit.core.reporter import ListReporter
from toolkit.run.variant_steps import VALUE_PREFIX
from toolkit.verify import repro


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def rebuilt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, Path]:
    """The sample's manifest recording a wheel and a gfx90a variant, and a rebuild that makes
    the same bytes for both: (manifest, wheel, variant)."""
    plan, layout, build = sample_plan(tmp_path, monkeypatch)
    wheel = tmp_path / "rebuilt" / "x-1-py3-none-any.whl"
    variant = tmp_path / "rebuilt" / "x-1-py3-none-any-gfx90a.whl"
    wheel.parent.mkdir()
    wheel.write_bytes(b"the fat wheel")
    variant.write_bytes(b"the gfx90a variant")
    data = for_plan(plan, layout)
    data.update(wheel_sha256=_sha(wheel),
                variants={"gfx90a": {"wheel": str(variant), "sha256": _sha(variant)}})
    path = layout.artifacts(build) / "manifest.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(data))

    def rebuild(*args: Any, **kwargs: Any) -> tuple[SimpleNamespace, None, Path]:
        values = {"WHEEL": str(wheel), f"{VALUE_PREFIX}gfx90a": str(variant)}
        return SimpleNamespace(values=values), None, path.parent / "repro-manifest.json"

    monkeypatch.setattr(repro, "_run", rebuild)
    return path, wheel, variant


def _repro(manifest: Path, reporter: ListReporter) -> int:
    return repro.reproduce(str(manifest), reporter, force=True, workdir=str(manifest.parents[2]))


def test_a_rebuild_with_the_recorded_bytes_is_identical_wheel_and_variant(
        rebuilt: tuple[Path, Path, Path]) -> None:
    manifest, wheel, variant = rebuilt
    reporter = ListReporter()
    assert _repro(manifest, reporter) == 0
    assert f"identical: {_sha(wheel)}" in reporter.lines
    assert [ln for ln in reporter.lines if ln.startswith("variant gfx90a:")] == \
        [f"variant gfx90a: identical: {_sha(variant)}"]


def test_from_another_source_tree_even_the_same_variant_bytes_differ(
        rebuilt: tuple[Path, Path, Path]) -> None:
    manifest, wheel, variant = rebuilt
    data = json.loads(manifest.read_text())
    data["source"]["tree"] = "0" * 64  # no tree hashes to this: the checkout is another tree
    manifest.write_text(json.dumps(data))
    reporter = ListReporter()
    with pytest.raises(CheckFailed) as err:
        _repro(manifest, reporter)
    # README: a rebuild that is not identical is a check failure (exit 1), said as such
    assert (err.value.message, err.value.exit_code) == \
        ("the rebuilt wheel is not identical to the recorded one", 1)
    assert any(ln.startswith("note: the source differs from the recorded one")
               for ln in reporter.lines), reporter.lines
    (line,) = [ln for ln in reporter.lines if ln.startswith("variant gfx90a:")]
    assert "identical" not in line and "differs" in line and _sha(variant) in line
    assert not any(ln.startswith("identical") for ln in reporter.lines), reporter.lines


def test_a_fat_wheel_that_differs_fails_the_repro_though_every_variant_is_identical(
        rebuilt: tuple[Path, Path, Path]) -> None:
    manifest, wheel, variant = rebuilt
    recorded = _sha(wheel)
    wheel.write_bytes(b"other bytes of the fat wheel")  # the rebuild made another fat wheel
    reporter = ListReporter()
    # README: a repro whose wheel is not identical is a check failure (exit 1); the variants
    # being the recorded bytes does not make the fat wheel identical
    with pytest.raises(CheckFailed) as err:
        _repro(manifest, reporter)
    assert err.value.exit_code == 1
    (line,) = [ln for ln in reporter.lines if ln.startswith("differs:")]
    assert _sha(wheel) in line and recorded in line
    assert [ln for ln in reporter.lines if ln.startswith("variant gfx90a:")] == \
        [f"variant gfx90a: identical: {_sha(variant)}"]
