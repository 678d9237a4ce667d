"""Three edges of the smoke runner, each against a hand-written expectation: a run past the
total limit (README: "one line, exit 9") stopped before any test ran, with the real pytest in
this test's own environment; a pytest that printed nothing has no last line to quote; and
``--env`` alone picks the build whose manifest records that environment, keeping where the
manifest is (the fresh-runner path reads it)."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from toolkit.core.errors import TimedOut
from toolkit.verify import smoke
from toolkit.verify.smoke_builds import SmokeTarget, resolve

BUILD = "hip_sample-0.1.0-cp311-rocm5.2"


def test_a_run_past_the_total_limit_before_any_test_is_one_timed_out_line(tmp_path: Path) -> None:
    manifest = {"build": {"id": BUILD, "package": "hip_sample", "version": "0.1.0",
                          "python": "3.11", "rocm": "5.2", "torch": ""},
                "recipe": "sample", "dist": "rocm-wheel-toolkit", "targets": ["gfx90a"],
                "outcome": "ok"}
    junit = tmp_path / "smoke.xml"
    with pytest.raises(TimedOut) as err:
        smoke.run(SmokeTarget(BUILD, manifest, Path(sys.prefix)), ["gfx90a"], junit=junit,
                  uv=str(tmp_path / "no-uv"), out=io.StringIO(), timeout=0.05)
    assert err.value.message == (f"the smoke run of {BUILD} timed out after 0.05 s (the total "
                                 "limit, --timeout), before any test ran")
    assert err.value.exit_code == 9
    assert not junit.exists()  # pytest wrote none and no test was running to record


def test_a_pytest_that_printed_nothing_has_no_last_line(tmp_path: Path) -> None:
    lines: list[str] = []
    assert smoke._pytest(["sh", "-c", "exit 3"], tmp_path, {}, lines.append, 30) == (3, "")
    assert lines == []


def test_env_alone_picks_the_build_that_recorded_it_with_its_manifest_path(tmp_path: Path) -> None:
    env = tmp_path / "envs" / "a"
    env.mkdir(parents=True)
    paths = {}
    for bid, python, env_dir in ((BUILD, "3.11", env),
                                 ("hip_sample-0.1.0-cp312-rocm5.2", "3.12", tmp_path / "other")):
        path = tmp_path / "artifacts" / bid / "manifest.json"
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps({"build": {"id": bid, "package": "hip_sample",
                                              "version": "0.1.0", "python": python,
                                              "rocm": "5.2"},
                                    "env_dir": str(env_dir), "outcome": "ok"}))
        paths[bid] = path
    target = resolve(tmp_path, env=str(env))
    assert (target.build_id, target.env_dir, target.manifest_path) == (BUILD, env, paths[BUILD])
