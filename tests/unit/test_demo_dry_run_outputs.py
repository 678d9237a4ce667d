"""``demo --dry-run`` prints the plan as text, ``--dry-run --json`` the same plan as JSON (the
README: ``--dry-run [--json]``), and which build it plans is the README's: real GPU code for
gfx90a and gfx908 when a HIP compiler is installed (``hipcc`` on PATH, as ``shutil.which``
finds it), the CPU variant with ``--cpu`` "as asked, even with hipcc", and ``--gfx`` replacing
the demo's targets."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from toolkit.cli.main import main


def _plan(tmp_path: Path, capsys: pytest.CaptureFixture[str], *options: str) -> dict[str, Any]:
    assert main(["demo", "--dry-run", "--json", "--workdir", str(tmp_path), *options]) == 0
    doc: dict[str, Any] = json.loads(capsys.readouterr().out)
    return doc


def test_the_text_plan_is_the_json_plan_in_words(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    doc = _plan(tmp_path, capsys, "--cpu")
    assert main(["demo", "--dry-run", "--cpu", "--workdir", str(tmp_path)]) == 0
    text = capsys.readouterr().out
    with pytest.raises(json.JSONDecodeError):
        json.loads(text)
    assert text.startswith(f"# plan for {doc['build']['id']}")
    for i, step in enumerate(doc["steps"], start=1):
        assert f"[{i}/{len(doc['steps'])}] {step['name']} " in text


def test_cpu_builds_the_cpu_variant_even_with_hipcc(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    doc = _plan(tmp_path, capsys, "--cpu")
    assert doc["build"]["rocm"] == "cpu" and doc["build"]["id"].endswith("-cpu")
    assert "install-rocm-sdk" not in [s["name"] for s in doc["steps"]]


@pytest.mark.skipif(shutil.which("hipcc") is None, reason="no hipcc on this machine")
def test_with_hipcc_the_demo_builds_gpu_code_for_its_targets(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    doc = _plan(tmp_path, capsys)
    assert doc["build"]["rocm"] != "cpu"
    assert doc["targets"] == ["gfx90a", "gfx908"]
    (build,) = [s for s in doc["steps"] if s["name"] == "build-wheel"]
    assert build["action"]["build"]["env"]["PYTORCH_ROCM_ARCH"] == "gfx90a;gfx908"
    assert _plan(tmp_path, capsys, "--gfx", "gfx942")["targets"] == ["gfx942"]


def test_the_demo_plans_without_the_work_folders_lock_files(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """The demo's own default is no lock files: a ``locks/<py>-rocm<rocm>.txt`` (README) in its
    work folder, here one without a toolkit header that a locked build would refuse, is not
    read: the plan is made, and no step installs from (or names) that lock."""
    doc = _plan(tmp_path, capsys, "--cpu")
    name = f"{doc['build']['python']}-rocm{doc['build']['rocm']}.txt"
    lock = tmp_path / "locks" / name
    lock.parent.mkdir()
    lock.write_text("torch==0.0.1\n", encoding="utf-8")
    again = _plan(tmp_path, capsys, "--cpu")
    assert again["build"]["id"] == doc["build"]["id"]
    assert name not in json.dumps(again)


def test_the_bundled_sample_is_copied_not_fetched(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """The sample ships inside the toolkit package (``toolkit/examples/hip_extension``, found
    here from the package's own location) and is no repository to clone: the demo's sources
    step copies that folder (the help: "copied, never modified") and no step fetches."""
    import toolkit

    sample = Path(toolkit.__file__).resolve().parent / "examples" / "hip_extension"
    assert (sample / "setup.py").is_file() or (sample / "pyproject.toml").is_file()
    doc = _plan(tmp_path, capsys, "--cpu")
    (sources,) = [s for s in doc["steps"] if s["name"] == "get-sources"]
    assert sources["action"]["kind"] == "copy-sources"
    assert Path(sources["action"]["source"]) == sample
    assert "fetch-sources" not in {s["action"]["kind"] for s in doc["steps"]}


def test_a_source_with_uncommitted_changes_is_refused_before_the_plan(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """README: a --source checkout with uncommitted changes is exit 12 unless --allow-dirty,
    before anything is read: even ``--dry-run`` prints no plan. A real git repository holding a
    minimal pyproject project, one file changed after its commit."""
    import os
    import subprocess

    repo = tmp_path / "proj"
    repo.mkdir()
    (repo / "pyproject.toml").write_text(
        '[project]\nname = "mini"\nversion = "1.0"\n[build-system]\n'
        'requires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n')
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e.invalid"}
    for args in (["init", "-q"], ["add", "."], ["commit", "-qm", "one"]):
        subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)
    with (repo / "pyproject.toml").open("a") as f:
        f.write("# changed\n")
    work = tmp_path / "work"
    assert main(["demo", "--dry-run", "--cpu", "--source", str(repo), "--workdir", str(work)]) == 12
    out, err = capsys.readouterr()
    assert out == ""
    assert str(repo) in err and "pyproject.toml" in err and "--allow-dirty" in err, err
    assert main(["demo", "--dry-run", "--cpu", "--allow-dirty", "--source", str(repo),
                 "--workdir", str(work)]) == 0
    assert "get-sources" in capsys.readouterr().out
