"""repro never publishes: README "repro ... rebuilds ... (never publishing)"; it runs "every step
but ``publish``: the published wheel is never touched". Driven without a build: a manifest of
the bundled sample's plan on this host, then ``repro --dry-run`` (what it would run) and
``repro --step publish`` (asking for it). The integration tests (tests/integration/test_repro.py)
run real repros."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.fixtures.manifests import for_plan, sample_plan
from toolkit.cli.main import main


@pytest.fixture
def manifest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    plan, layout, build = sample_plan(tmp_path, monkeypatch)
    publish = [s for s in plan.steps if s.name == "publish"]
    assert publish, [s.name for s in plan.steps]  # the build itself publishes: there is one to leave out
    path = layout.artifacts(build) / "manifest.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(for_plan(plan, layout)))
    return path


def test_the_repro_plan_has_no_publish_step(manifest: Path, capsys: pytest.CaptureFixture[str]) -> None:
    work = manifest.parents[2]
    assert main(["repro", str(manifest), "--dry-run", "--force", "--workdir", str(work)]) == 0
    out = capsys.readouterr().out
    steps = re.findall(r"^\[\d+/\d+\] (\S+)", out, re.M)
    assert steps and "publish" not in steps, steps
    assert "build-wheel" in steps  # it does rebuild
    assert f"{work}/dist" not in out  # nothing it runs names the published folder


def test_asking_repro_to_publish_is_refused(manifest: Path, capsys: pytest.CaptureFixture[str]) -> None:
    work = manifest.parents[2]
    code = main(["repro", str(manifest), "--step", "publish", "--force", "--workdir", str(work)])
    err = capsys.readouterr().err
    assert code == 2  # README "Exit codes": 2 ... a repro refused
    (line,) = [ln for ln in err.splitlines() if ln.startswith("error: ")]
    assert "'publish'" in line and "build-wheel" in line, line
    listed = line.split("steps:", 1)[1]
    assert "publish" not in listed, line
    assert not (work / "dist").exists() and not (work / "build").exists()
