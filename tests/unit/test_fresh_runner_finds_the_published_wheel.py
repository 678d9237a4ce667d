"""A fresh runner's first question (``toolkit.verify.fresh``): is the wheel the manifest
records in this work folder's ``dist/<id>/``, with the recorded sha256 (computed here with
hashlib)? And which manifests can an environment be made for. Each refusal is one line
naming the build and the file, hand-written here."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from tests.fixtures.manifests import for_plan, sample_plan
from toolkit.core.errors import UsageError
from toolkit.plan.layout import Layout
from toolkit.verify.fresh import published_wheel, usable_manifest

BUILD = "b-1"
WHEEL = "b-1.0-py3-none-any.whl"


def _wheel(layout: Layout, content: bytes = b"wheel bytes") -> tuple[Path, str]:
    path = layout.root / "dist" / BUILD / WHEEL
    path.parent.mkdir(parents=True)
    path.write_bytes(content)
    return path, hashlib.sha256(content).hexdigest()


@pytest.mark.parametrize("wheel", [None, "", 3])
def test_a_manifest_without_a_wheel_is_nothing_to_smoke_test(tmp_path: Path, wheel: object) -> None:
    with pytest.raises(UsageError) as err:
        published_wheel({"wheel": wheel, "outcome": "failed"}, Layout(tmp_path, tmp_path), BUILD)
    assert err.value.message == ("the manifest of b-1 records no wheel (outcome failed): "
                                 "nothing to smoke-test")


def test_the_recorded_wheel_is_looked_for_by_name_in_dist_of_the_build(tmp_path: Path) -> None:
    layout = Layout(tmp_path / "work", tmp_path / "cache")
    data = {"wheel": f"/home/ci/work/dist/{BUILD}/{WHEEL}", "wheel_sha256": "0" * 64}
    with pytest.raises(UsageError) as err:
        published_wheel(data, layout, BUILD)
    expected = tmp_path / "work" / "dist" / BUILD / WHEEL
    assert err.value.message == f"{expected} is not here; the manifest of b-1 names it"
    assert err.value.hint == "download the build's dist/ artifact next to artifacts/"
    path, digest = _wheel(layout)
    with pytest.raises(UsageError) as err:
        published_wheel(data, layout, BUILD)
    assert err.value.message == f"{expected} is not the wheel the manifest records (sha256 differs)"
    assert published_wheel({**data, "wheel_sha256": digest}, layout, BUILD) == path == expected


def test_a_manifest_is_usable_when_it_is_valid_and_its_wheel_is_here(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plan, layout, build = sample_plan(tmp_path, monkeypatch)
    data = for_plan(plan, layout, wheel=WHEEL)
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps(data))
    assert usable_manifest(path, layout, build.id) is None  # its wheel is not in dist/<id>/
    wheel = layout.root / "dist" / build.id / WHEEL
    wheel.parent.mkdir(parents=True)
    wheel.write_bytes(b"w")
    assert usable_manifest(path, layout, build.id) == data
    assert usable_manifest(path, layout, "another-id") is None  # dist/another-id/ has none
    path.write_text("{not json")
    assert usable_manifest(path, layout, build.id) is None
    path.write_text(json.dumps({**data, "wheel": None}))
    assert usable_manifest(path, layout, build.id) is None


def test_smoke_on_a_fresh_runner_checks_the_wheel_in_dist_of_the_build_it_names(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """``smoke --build ID`` on a fresh runner (a manifest in artifacts/<id>/, a wheel in
    dist/<id>/, no environment): before anything is provisioned, the wheel of dist/<id>/ is
    checked against the recorded sha256; a different one is exit 2 (README: bad input) in one
    line naming that wheel."""
    from toolkit.cli.main import main

    plan, layout, build = sample_plan(tmp_path, monkeypatch)
    data = {**for_plan(plan, layout, wheel=WHEEL), "wheel_sha256": "0" * 64}
    manifest = layout.artifacts(build) / "manifest.json"
    manifest.parent.mkdir(parents=True)
    manifest.write_text(json.dumps(data))
    wheel = layout.root / "dist" / build.id / WHEEL
    wheel.parent.mkdir(parents=True)
    wheel.write_bytes(b"not the recorded wheel")
    code = main(["smoke", "--workdir", str(layout.root), "--build", build.id])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2, err
    assert str(wheel) in err[0] and "sha256" in err[0], err
    assert not layout.env_dir(build).exists()
