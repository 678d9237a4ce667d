"""``nox -s smoke-<py>-rocm<rocm>`` with nothing to smoke-test: one line naming the pair, the
folder it looked in (README: a build's manifest is ``artifacts/<build-id>/manifest.json`` of
the work folder: the folder holding the manifests written here) and the builds that do have
one, exit 4 (environment problem), and the session that builds the pair as the hint, with
``--workdir DIR`` when the smoke run was given one."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from toolkit.cli.commands import smoke as command
from toolkit.core.errors import EnvironmentProblem


def _manifest(workdir: Path, build_id: str, python: str, rocm: str, outcome: str) -> Path:
    path = workdir / "artifacts" / build_id / "manifest.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"build": {"id": build_id, "package": "apex", "version": "1.0",
                                          "python": python, "rocm": rocm, "torch": ""},
                                "outcome": outcome, "env_dir": str(workdir / "env")}))
    return path


def _refusal(python: str, rocm: str, workdir: str | None) -> EnvironmentProblem:
    with pytest.raises(EnvironmentProblem) as err:
        command._pair_builds(python, rocm, SimpleNamespace(workdir=workdir, package=[]))
    assert err.value.exit_code == 4
    return err.value


def test_no_manifest_of_the_pair(tmp_path: Path) -> None:
    written = _manifest(tmp_path, "apex-1.0-cp311-rocm6.4", "3.11", "6.4", "ok")
    folder = written.parent.parent
    err = _refusal("3.12", "7.0", str(tmp_path))
    assert err.message == (f"no build of Python 3.12 / ROCm 7.0 has a manifest in {folder} "
                           "(builds with a manifest: apex-1.0-cp311-rocm6.4)")
    assert err.hint == "nox -s build-3.12-rocm7.0 -- --workdir DIR"


def test_no_manifest_at_all_in_the_current_folder(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    err = _refusal("3.13", "6.4", None)
    assert err.message == (f"no build of Python 3.13 / ROCm 6.4 has a manifest in "
                           f"{tmp_path / 'artifacts'} (builds with a manifest: none)")
    assert err.hint == "nox -s build-3.13-rocm6.4"


def test_only_failed_builds_of_the_pair(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    written = _manifest(tmp_path, "apex-1.0-cp312-rocm7.0", "3.12", "7.0", "failed")
    err = _refusal("3.12", "7.0", str(tmp_path))
    assert err.message == (f"no successful build of Python 3.12 / ROCm 7.0 in "
                           f"{written.parent.parent} to smoke-test")
    assert err.hint == "nox -s build-3.12-rocm7.0"
    assert "apex-1.0-cp312-rocm7.0 passed over" in capsys.readouterr().out
