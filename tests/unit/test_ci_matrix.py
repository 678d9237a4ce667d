"""The GitHub Actions matrix (`matrix --format github`): goldens per trigger, selection rules,
ci.toml validation, exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from toolkit.cli.main import main
from toolkit.core.errors import DataError, UsageError
from toolkit.data.ci import github_json, github_matrix, load_ci
from toolkit.data.matrix import load_matrix, python_sort_key

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden" / "ci"
TRIGGERS = ("pull_request", "push", "schedule", "workflow_dispatch")


def github(capsys: pytest.CaptureFixture[str], *argv: str) -> list[dict[str, str]]:
    assert main(["matrix", "--format", "github", *argv]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1, "one line: it goes to $GITHUB_OUTPUT as matrix=<json>"
    doc = json.loads(out)
    assert list(doc) == ["include"]
    entries: list[dict[str, str]] = doc["include"]
    return entries


@pytest.mark.parametrize("trigger", TRIGGERS)
def test_golden_per_trigger(trigger: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Regenerate with UPDATE_GOLDENS=1 after an intended change, and review the diff."""
    text = json.dumps({"include": github(capsys, "--trigger", trigger)}, indent=1) + "\n"
    path = GOLDEN / f"{trigger}.json"
    if os.environ.get("UPDATE_GOLDENS") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    assert path.is_file(), f"{path} is missing; run with UPDATE_GOLDENS=1 to write it"
    assert text == path.read_text(), (
        f"the CI matrix for {trigger} changed; if intended: UPDATE_GOLDENS=1 pytest {__file__}")


def test_goldens_cover_exactly_the_triggers() -> None:
    assert sorted(p.stem for p in GOLDEN.glob("*.json")) == sorted(TRIGGERS)
    assert sorted(load_ci(load_matrix()).triggers) == sorted(TRIGGERS)


def test_schedule_covers_every_build(capsys: pytest.CaptureFixture[str]) -> None:
    entries = github(capsys, "--trigger", "schedule")
    matrix = load_matrix()
    assert sorted(e["id"] for e in entries) == sorted(b.id for b in matrix.builds)
    for e in entries:
        assert e["family"] == matrix.rocm[e["rocm"]].default_family


def test_pull_request_is_a_strict_nonempty_subset(capsys: pytest.CaptureFixture[str]) -> None:
    pr = github(capsys, "--trigger", "pull_request")
    everything = github(capsys, "--trigger", "schedule")
    assert pr
    assert {e["artifact"] for e in pr} < {e["artifact"] for e in everything}
    assert all(e in everything for e in pr)


def test_pull_request_one_newest_plain_python_per_version_and_rocm(
    capsys: pytest.CaptureFixture[str],
) -> None:
    pr = github(capsys, "--trigger", "pull_request")
    matrix = load_matrix()
    keys = [(e["package"], e["version"], e["rocm"]) for e in pr]
    assert len(keys) == len(set(keys)), "one Python per package version and ROCm"
    expected = {(b.package.name, b.version, b.rocm.version) for b in matrix.builds}
    assert set(keys) == expected, "every package version x ROCm still runs on pull requests"
    for e in pr:
        pv = next(v for v in matrix.packages[e["package"]].versions if v.version == e["version"])
        plain = [p for p in pv.python if not p.endswith("t")]
        assert e["python"] == max(plain, key=python_sort_key)
    assert {"package": "apex", "version": "1.8.0", "python": "3.13", "rocm": "7.0"}.items() <= \
        next(e for e in pr if e["id"] == "apex-1.8.0-cp313-rocm7.0").items()


def test_push_every_python_one_family(capsys: pytest.CaptureFixture[str]) -> None:
    push = github(capsys, "--trigger", "push")
    assert sorted(e["id"] for e in push) == sorted(b.id for b in load_matrix().builds)
    assert all("," not in e["families"] for e in push)


def test_entry_fields_drive_the_workflow(capsys: pytest.CaptureFixture[str]) -> None:
    matrix = load_matrix()
    sessions = {f"build-{p}-rocm{r}" for p, r in matrix.pairs()}
    entries = github(capsys, "--trigger", "schedule")
    for e in entries:
        build = matrix.build(e["id"])
        assert e["session"] == build.session and e["session"] in sessions
        assert e["gfx"].split(",") == list(matrix.family_targets[e["family"]])
        assert e["runner"] == "linux-x86_64-cpu"
        assert e["test_gfx"] in e["gfx"].split(",")
        assert e["test_runner"].startswith("linux-") and e["test_runner"].endswith("-gpu")
    assert len({e["artifact"] for e in entries}) == len(entries)
    mi300 = next(e for e in entries if e["id"] == "apex-1.8.0-cp312-rocm7.0")
    assert mi300 == {
        "id": "apex-1.8.0-cp312-rocm7.0", "artifact": "apex-1.8.0-cp312-rocm7.0-gfx94X-dcgpu",
        "package": "apex", "version": "1.8.0", "python": "3.12", "rocm": "7.0", "torch": "2.8",
        "session": "build-3.12-rocm7.0", "family": "gfx94X-dcgpu", "families": "gfx94X-dcgpu",
        "gfx": "gfx942", "runner": "linux-x86_64-cpu", "test_runner": "linux-mi300-gpu",
        "test_gfx": "gfx942", "known_failure": "",
    }


def test_families_multiply_the_builds(capsys: pytest.CaptureFixture[str]) -> None:
    entries = github(capsys, "--trigger", "workflow_dispatch", "--families", "gfx90a,gfx94X-dcgpu",
                     "--package", "fbgemm_gpu")
    n = len(load_matrix().select(packages=["fbgemm_gpu"]))
    assert len(entries) == 2 * n
    gfx90a = [e for e in entries if e["family"] == "gfx90a"]
    assert len(gfx90a) == n
    assert {(e["gfx"], e["test_runner"], e["test_gfx"]) for e in gfx90a} == {
        ("gfx90a", "linux-mi250-gpu", "gfx90a")}


def test_filters_narrow_the_ci_matrix(capsys: pytest.CaptureFixture[str]) -> None:
    entries = github(capsys, "--trigger", "pull_request", "--package", "apex", "--rocm", "6.4")
    assert sorted(e["id"] for e in entries) == ["apex-1.7.0-cp313-rocm6.4", "apex-1.8.0-cp313-rocm6.4"]


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--trigger", "pull_requests"],
         "unknown trigger 'pull_requests'; valid: pull_request, push, schedule, workflow_dispatch"),
        (["--trigger", "schedule", "--families", "gfx94X-dcgpu,gfx9000"],
         "unknown GPU family for CI 'gfx9000'; valid: "),
        (["--trigger", "pull_request", "--families", "gfx90a"],
         "--families applies to: schedule, workflow_dispatch"),
        (["--package", "fbgemm_gpu", "--rocm", "6.0"], "GitHub rejects an empty matrix"),
    ],
)
def test_bad_input_exits_2(argv: list[str], needle: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["matrix", "--format", "github", *argv]) == 2
    err = capsys.readouterr().err
    assert needle in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_trigger_needs_github_format(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["matrix", "--trigger", "push"]) == 2
    assert "apply to --format github only" in capsys.readouterr().err


def test_unknown_family_names_the_valid_ones(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["matrix", "--format", "github", "--trigger", "schedule", "--families", "nope"]) == 2
    err = capsys.readouterr().err
    for fam in ("gfx94X-dcgpu", "gfx950-dcgpu", "gfx90a", "gfx110X-all"):
        assert fam in err


def test_invoke_task_prints_the_same_json() -> None:
    res = subprocess.run(
        [sys.executable, "-m", "invoke", "matrix", "--format", "github", "--trigger",
         "pull_request", "--families", ""],
        cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout) == json.loads((GOLDEN / "pull_request.json").read_text())
    bad = subprocess.run(
        [sys.executable, "-m", "invoke", "matrix", "--format", "github", "--trigger", "nightly"],
        cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "unknown trigger 'nightly'" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_library_is_pure_and_rejects_an_empty_matrix() -> None:
    matrix = load_matrix()
    config = load_ci(matrix)
    assert github_matrix(matrix, config, "schedule") == github_matrix(matrix, config, "schedule")
    with pytest.raises(UsageError):
        github_json([])


# ----------------------------------------------------------------------------- ci.toml validation
def _ci_error(data: Path, old: str, new: str) -> str:
    ci = data / "ci.toml"
    text = ci.read_text()
    assert old in text, old
    ci.write_text(text.replace(old, new, 1))
    with pytest.raises(DataError) as info:
        load_ci(load_matrix(data))
    assert str(ci) in str(info.value)
    return str(info.value)


@pytest.mark.parametrize(
    ("old", "new", "needles"),
    [
        ('python = "newest"', 'python = "latest"',
         ["triggers.\"pull_request\".python", "'latest' is not allowed; valid: newest, all"]),
        ('families = "requested"', 'families = "all"',
         ["triggers.\"schedule\".families", "valid: default, requested"]),
        ("[triggers.push]", "[triggers.pushed]",
         ["triggers.\"pushed\"", "valid: pull_request, push, schedule, workflow_dispatch"]),
        ('python = "all"', 'pyhton = "all"',
         ["triggers.\"push\".pyhton", "unknown key; valid: python, families"]),
        ('families = ["gfx908"]', 'families = ["gfx9o8"]',
         ["runners.test.\"mi100\".families", "'gfx9o8' is not allowed; valid:"]),
        ('gfx = "gfx1201"', 'gfx = "gfx942"',
         ["runners.test.\"rx9070\".gfx", "'gfx942' is not a target of family 'gfx120X-all'"]),
        ('families = ["gfx908"]', 'families = ["gfx90a"]',
         ["runners.test.\"mi100\".families", "'gfx90a' is already tested by runner class 'mi250'"]),
        ('families = ["gfx94X-dcgpu"]', 'families = ["gfx1100"]', ["runners.test"]),
        ('build = "linux-x86_64-cpu"', 'build = ""', ["runners.build", "non-empty string"]),
    ],
)
def test_ci_toml_errors_name_file_key_and_valid(
    data_copy: Path, old: str, new: str, needles: list[str]
) -> None:
    msg = _ci_error(data_copy, old, new)
    for needle in needles:
        assert needle in msg, msg


def test_default_family_without_runner_is_a_data_error(data_copy: Path) -> None:
    msg = _ci_error(data_copy, 'gfx = "gfx942"\nfamilies = ["gfx94X-dcgpu"]',
                    'gfx = "gfx1010"\nfamilies = ["gfx101X-dgpu"]')
    assert "default family 'gfx94X-dcgpu' has no test runner class" in msg


def test_ci_toml_missing_and_skipped_by_matrix_loader(data_copy: Path) -> None:
    matrix = load_matrix(data_copy)
    assert set(matrix.packages) == {"apex", "fbgemm_gpu"}, "ci.toml is not a package file"
    (data_copy / "ci.toml").unlink()
    with pytest.raises(DataError, match="ci.toml: missing data file"):
        load_ci(matrix)
