"""What a run learns about itself (its manifest, its wheel, its commit) is never carried to
another build by the environment they share: the stamp of a reused environment gives back
only what provisioning learned. Issue 27: the second build of a session (apex 1.6 then 1.8,
one environment) smoked the first build's manifest, ``--manifest {MANIFEST}``."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

from toolkit.core.steps import CheckEnv, MarkEnvReady, Step
from toolkit.env.host import HostFacts
from toolkit.env.venvs import stamp_path
from toolkit.plan.layout import Layout
from toolkit.plan.model import Options
from toolkit.plan.planner import plan
from toolkit.plan.recipes import load_matrix
from toolkit.plan.recipes.sample import demo_build
from toolkit.run.executor import execute
from toolkit.run.provisioning import _NOT_STORED


def test_a_reused_environment_never_brings_back_another_runs_own_values(tmp_path: Path) -> None:
    env_dir = tmp_path / "cache" / "envs" / "e"
    (env_dir / "bin").mkdir(parents=True)
    (env_dir / "bin" / "python").symlink_to(sys.executable)
    layout = Layout(tmp_path / "work", tmp_path / "cache")
    steps = (Step("check-env", "", CheckEnv(str(env_dir), "3.11", sys.executable, "d" * 64)),
             Step("mark-env-ready", "", MarkEnvReady(str(env_dir))))
    p = dataclasses.replace(plan(load_matrix(), demo_build("3.11", None),
                                 Options(gfx=("gfx90a",), rocm_from="system"), HostFacts(),
                                 layout), steps=steps)

    def first(run: Any) -> None:
        run.values.update(MANIFEST="/w/artifacts/first/manifest.json", WHEEL="/w/first.whl",
                          SHA="a" * 40, ROCM_ROOT=str(tmp_path))

    execute(p, layout, on_start=first)  # type: ignore[arg-type]
    stored = json.loads(stamp_path(env_dir).read_text())["values"]
    assert stored["ROCM_ROOT"] == str(tmp_path)  # provisioning's: kept for the next build
    assert not {"MANIFEST", "WHEEL", "SHA"} & set(stored)

    # a stamp written by an older toolkit that kept them: still never restored
    stamp = stamp_path(env_dir)
    doc = json.loads(stamp.read_text())
    doc["values"]["MANIFEST"] = "/w/artifacts/first/manifest.json"
    stamp.write_text(json.dumps(doc))

    def second(run: Any) -> None:
        run.values["MANIFEST"] = "/w/artifacts/second/manifest.json"

    run = execute(p, layout, on_start=second)  # type: ignore[arg-type]
    assert run.env_reused  # the environment was shared
    assert run.values["MANIFEST"] == "/w/artifacts/second/manifest.json"
    assert run.values["ROCM_ROOT"] == str(tmp_path)
    assert "MANIFEST" in _NOT_STORED
