"""The GitHub Actions matrix (`matrix --format github`): the selection rules per trigger (each
checked against the matrix, so a new release needs no test edit), ci.toml validation, exit
codes."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.version import Version

from toolkit.cli.main import main
from toolkit.core.errors import DataError, UsageError
from toolkit.data.ci import github_json, github_matrix, load_ci
from toolkit.data.matrix import load_matrix, python_sort_key

ROOT = Path(__file__).resolve().parents[2]
TRIGGERS = ("pull_request", "push", "schedule", "workflow_dispatch")


def github(capsys: pytest.CaptureFixture[str], *argv: str) -> list[dict[str, str]]:
    assert main(["matrix", "--format", "github", *argv]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1, "one line: it goes to $GITHUB_OUTPUT as matrix=<json>"
    doc = json.loads(out)
    assert list(doc) == ["include"]
    entries: list[dict[str, str]] = doc["include"]
    return entries


def _library(trigger: str) -> list[dict[str, str]]:
    matrix = load_matrix()
    entries: list[dict[str, str]] = github_json(
        github_matrix(matrix, load_ci(matrix), trigger))["include"]
    return entries


@pytest.mark.parametrize("trigger", TRIGGERS)
def test_command_prints_the_librarys_entries(trigger: str,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """No golden: the rules are checked below against hand statements, so a new release
    changes the matrix without a test edit."""
    assert github(capsys, "--trigger", trigger) == _library(trigger)


def test_every_trigger_has_a_rule() -> None:
    assert sorted(load_ci(load_matrix()).triggers) == sorted(TRIGGERS)


def test_schedule_covers_every_build(capsys: pytest.CaptureFixture[str]) -> None:
    """Every build, for its release's default family at least (the families: test_ci_families)."""
    entries = github(capsys, "--trigger", "schedule")
    matrix = load_matrix()
    assert {e["id"] for e in entries} == {b.id for b in matrix.builds}
    defaults = {(e["id"], e["family"]) for e in entries
                if e["family"] == matrix.rocm[e["rocm"]].default_family}
    assert len(defaults) == len(matrix.builds)


def test_pull_request_is_a_strict_nonempty_subset(capsys: pytest.CaptureFixture[str]) -> None:
    pr = github(capsys, "--trigger", "pull_request")
    everything = github(capsys, "--trigger", "schedule")
    assert pr
    assert {e["artifact"] for e in pr} < {e["artifact"] for e in everything}
    assert all(e in everything for e in pr)


def test_pull_request_runs_the_newest_pairs(capsys: pytest.CaptureFixture[str]) -> None:
    """ci.toml: pull requests build, per package and build style (each recipe path), only the
    newest version, on every ROCm release it pairs with, with its newest plain Python."""
    pr = github(capsys, "--trigger", "pull_request")
    matrix = load_matrix()
    keys = [(e["package"], e["version"], e["rocm"]) for e in pr]
    assert len(keys) == len(set(keys)), "one Python per package version and ROCm"
    for pkg in matrix.packages.values():
        for style in {v.build_style for v in pkg.versions}:
            ofstyle = [v for v in pkg.versions if v.build_style == style]
            top = max(ofstyle, key=lambda v: Version(v.version))
            assert {(pkg.name, top.version, r) for r in top.rocm} <= set(keys)
            older = {v.version for v in ofstyle} - {top.version}
            assert not [k for k in keys if k[0] == pkg.name and k[1] in older]
    for e in pr:
        pv = next(v for v in matrix.packages[e["package"]].versions if v.version == e["version"])
        plain = [p for p in pv.python if not p.endswith("t")]
        assert e["python"] == max(plain, key=python_sort_key)


def test_pull_request_newest_moves_with_a_new_release(data_copy: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A hand-made apex 9.0.0 (jit-prebuild) replaces the newest jit-prebuild version on pull
    requests; the ext-flags path keeps its newest version."""
    text = (data_copy / "apex.toml").read_text()
    last = text[text.rindex("[[versions]]"):]
    new = re.sub(r'version = "[0-9.]+"', 'version = "9.0.0"', last, count=1)
    (data_copy / "apex.toml").write_text(text + "\n" + new)
    monkeypatch.setenv("TOOLKIT_DATA_DIR", str(data_copy))
    matrix = load_matrix()
    pr = github_matrix(matrix, load_ci(matrix), "pull_request")
    apex = {(e.build.version, e.build.pkg_version.build_style) for e in pr
            if e.build.package.name == "apex"}
    assert {v for v, style in apex if style == "jit-prebuild"} == {"9.0.0"}
    assert {v for v, style in apex if style == "ext-flags"} == {"1.7.0"}


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
        members = matrix.family_targets[e["family"]]  # gpus.toml, limited to the release's era
        era = build.rocm.era.targets if build.rocm.era else members
        assert e["gfx"].split(",") == [t for t in members if t in era]
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
        "test_gfx": "gfx942", "known_failure": "", "sdk_family": "",  # 7.0: a system ROCm
        "variants": "",  # one target (gfx942): no variant to make
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
    # a family named twice, spaces, ";" and an empty item: the same families, each once (an
    # artifact name is unique in a workflow run: upload-artifact refuses a second one)
    again = github(capsys, "--trigger", "workflow_dispatch", "--families", " gfx90a;gfx94X-dcgpu,,gfx90a, ",
                   "--package", "fbgemm_gpu")
    assert again == entries and len({e["artifact"] for e in again}) == len(again)


def test_filters_narrow_the_ci_matrix(capsys: pytest.CaptureFixture[str]) -> None:
    entries = github(capsys, "--trigger", "push", "--package", "apex", "--rocm", "6.4",
                     "--python", "3.13")
    ids = sorted(e["id"] for e in entries)
    assert ids == sorted(b.id for b in load_matrix().select(packages=["apex"], rocm=["6.4"],
                                                           python=["3.13"]))
    assert {"apex-1.7.0-cp313-rocm6.4", "apex-1.8.0-cp313-rocm6.4"} <= set(ids)


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
    assert "apply to --format github and github-shards only" in capsys.readouterr().err


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
    matrix = load_matrix()
    assert json.loads(res.stdout) == github_json(
        github_matrix(matrix, load_ci(matrix), "pull_request"))
    bad = subprocess.run(
        [sys.executable, "-m", "invoke", "matrix", "--format", "github", "--trigger", "nightly"],
        cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "unknown trigger 'nightly'" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_library_rejects_an_empty_matrix() -> None:
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
        ('families = "all"', 'families = "every"',
         ["triggers.\"schedule\".families", "valid: default, requested, all"]),
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
    # the first release (rocm.toml's order) left without one, and the families that have one
    import tomllib

    runners = tomllib.loads((data_copy / "ci.toml").read_text())["runners"]["test"]
    with_one = sorted(f for r in runners.values() for f in r["families"])
    releases = tomllib.loads((data_copy / "rocm.toml").read_text())["releases"]
    first = next(v for v, r in releases.items() if r["default_family"] not in with_one)
    assert msg == (f"{data_copy / 'ci.toml'}: runners.test: ROCm {first}'s default family "
                   f"'gfx94X-dcgpu' has no test runner class; families with one: {', '.join(with_one)}")


def test_ci_toml_missing_and_skipped_by_matrix_loader(data_copy: Path) -> None:
    matrix = load_matrix(data_copy)
    assert set(matrix.packages) == {"apex", "fbgemm_gpu"}, "ci.toml is not a package file"
    (data_copy / "ci.toml").unlink()
    with pytest.raises(DataError, match="ci.toml: missing data file"):
        load_ci(matrix)


def test_every_trigger_rule_reads_as_a_value_ci_toml_allows() -> None:
    """A rule without ``versions`` is every version: ci.toml says "all" is the default."""
    import tomllib

    from toolkit.data.specs import CI

    matrix = load_matrix()
    config = load_ci(matrix)
    raw = tomllib.loads((matrix.source / "ci.toml").read_text())["triggers"]
    rule_spec = CI.fields["triggers"].value  # type: ignore[attr-defined]
    assert any("versions" not in r for r in raw.values())  # push, schedule, ... leave it out
    for event, rule in config.triggers.items():
        for key in ("python", "families", "versions"):
            assert getattr(rule, key) in rule_spec.fields[key].choices, (event, key)
        assert rule.versions == raw[event].get("versions", "all"), event


def test_an_empty_github_matrix_is_refused_with_its_reason_and_where_to_look() -> None:
    with pytest.raises(UsageError) as err:
        github_json([])
    assert str(err.value) == ("no build matches these filters; GitHub rejects an empty matrix"
                              " (next: invoke matrix --format json lists every build)")
