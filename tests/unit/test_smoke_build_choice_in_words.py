"""Which build ``smoke`` runs for, when it cannot tell, in the full line and hint a user
reads (README "Exit codes": 2 bad input, 4 nothing built yet), written by hand; manifests
written by hand as builds write them (``artifacts/<id>/manifest.json``)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from toolkit.core.errors import EnvironmentProblem, UsageError
from toolkit.verify.smoke_builds import DEMO_HINT, load_target, manifests, resolve

A = "hip_sample-0.1.0-cp311-rocm5.2"
B = "hip_sample-0.1.0-cp312-rocm5.2"


def _write(workdir: Path, bid: str, mtime: float, **fields: object) -> Path:
    path = workdir / "artifacts" / bid / "manifest.json"
    path.parent.mkdir(parents=True)
    python = "3.11" if "cp311" in bid else "3.12"
    path.write_text(json.dumps({"build": {"id": bid, "package": "hip_sample", "version": "0.1.0",
                                          "python": python, "rocm": "5.2"}, **fields}))
    os.utime(path, (mtime, mtime))
    return path


def test_the_demo_hint_names_the_session_and_the_targets() -> None:
    assert DEMO_HINT == ("nox -s demo (builds the sample for gfx90a and gfx908), then invoke "
                         "smoke --gfx gfx90a")


def test_manifests_are_newest_last_and_only_one_level_down(tmp_path: Path) -> None:
    b = _write(tmp_path, B, 1_000)
    a = _write(tmp_path, A, 2_000)
    (tmp_path / "artifacts" / "deep" / "x").mkdir(parents=True)
    (tmp_path / "artifacts" / "deep" / "x" / "manifest.json").write_text("{}")
    assert list(manifests(tmp_path).items()) == [(B, b), (A, a)]
    assert manifests(tmp_path / "nothing") == {}


def test_no_builds_yet_says_how_to_make_one(tmp_path: Path) -> None:
    with pytest.raises(EnvironmentProblem) as err:
        resolve(tmp_path)
    assert err.value.message == f"no builds in {tmp_path} yet (no artifacts/*/manifest.json)"
    assert err.value.hint == DEMO_HINT


def test_an_unknown_build_lists_the_builds_with_a_manifest(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as err:
        resolve(tmp_path, "nope-1")
    assert err.value.message == (f"no build 'nope-1' in {tmp_path / 'artifacts'}; builds with a "
                                 "manifest: none")
    assert err.value.hint == DEMO_HINT
    _write(tmp_path, B, 1_000, outcome="ok", env_dir=str(tmp_path / "env"))
    _write(tmp_path, A, 2_000, outcome="ok", env_dir=str(tmp_path / "env"))
    with pytest.raises(UsageError) as err:
        resolve(tmp_path, "nope-1")
    assert err.value.message.endswith(f"builds with a manifest: {A}, {B}")
    assert err.value.hint is None
    # --build with --env: the named build's own manifest, in the given environment
    target = resolve(tmp_path, B, str(tmp_path / "other"))
    assert (target.build_id, target.env_dir) == (B, (tmp_path / "other").resolve())


def test_an_environment_no_build_used_is_named(tmp_path: Path) -> None:
    _write(tmp_path, A, 1_000, outcome="ok", env_dir=str(tmp_path / "env"))
    with pytest.raises(UsageError) as err:
        resolve(tmp_path, env=str(tmp_path / "other"))
    assert err.value.message == (f"no build in {tmp_path / 'artifacts'} used the environment "
                                 f"{(tmp_path / 'other').resolve()}; give --build ID (builds "
                                 f"with a manifest: {A})")


def test_no_successful_build_names_each_in_age_order_with_what_to_do(tmp_path: Path) -> None:
    _write(tmp_path, A, 1_000, outcome="failed", failed_step="check")
    _write(tmp_path, B, 2_000, outcome="running")
    with pytest.raises(EnvironmentProblem) as err:
        resolve(tmp_path)
    assert err.value.message == (f"no successful build in {tmp_path / 'artifacts'} to smoke-test "
                                 f"(builds: {A} (failed at check), {B} (running))")
    assert err.value.hint == "give --build ID to smoke one of them anyway, or build again"


def test_a_manifest_without_an_environment_asks_for_one(tmp_path: Path) -> None:
    path = _write(tmp_path, A, 1_000, outcome="ok")
    with pytest.raises(UsageError) as err:
        load_target(A, path)
    assert err.value.message == f"{path}: the manifest records no environment (env_dir); give --env PATH"
    assert load_target(A, path, tmp_path / "e").env_dir == tmp_path / "e"
