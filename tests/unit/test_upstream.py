"""`python -m toolkit upstream`: derivations, drift lines, --write, exit codes, the cache.

Run against the small repositories of ``upstream_fakes`` (hand-made, stating their facts in the
files and shapes the real upstreams use); every expected line is written by hand from them.
The same command against the real repositories: tests/upstream/test_upstream_command.py.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.unit.upstream_fakes import ROCK_MATRIX, SCRIPT, World, _matrix_script
from toolkit.cli.main import main
from toolkit.data.matrix import forget_loaded

TI = "tools/scripts/generate_binary_build_matrix.py"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[str], str]:
    code = main(["upstream", *argv])
    out = capsys.readouterr()
    return code, out.out.splitlines(), out.err


def failing(lines: list[str]) -> list[str]:
    return [line for line in lines if not line.startswith("note:")]


def test_agreeing_data_exits_0_and_notes_never_fail(world: World,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    code, lines, err = run(capsys, str(world.root))
    assert code == 0, lines
    ti = world.c["ti26"][:9]
    fb = world.repo("pytorch/FBGEMM").git("rev-parse", "v1.0.1")[:9]
    assert lines == [
        f"note: torch 2.6 (candidate): data none; upstream test channel: rocm 6.1, 6.2 "
        f"[pytorch/test-infra@{ti} {TI}]",
        f"note: fbgemm_gpu 1.0.0 on ROCm 6.0: data none; upstream CI builds it, but rocm.toml "
        f"has no torch 2.5 for ROCm 6.0 [pytorch/FBGEMM@{world.c['fb10'][:9]} "
        ".github/workflows/fbgemm_gpu_ci_rocm.yml]",
        f"note: fbgemm_gpu 1.0.1: data v1.0.0; upstream patch release v1.0.1 of 1.0 "
        f"[pytorch/FBGEMM@{fb} .github/workflows/fbgemm_gpu_ci_rocm.yml]",
        # the fake TheRock's version.json went 6.4.0, 7.0.0; the data's oldest multi-arch is 7.0
        "note: TheRock legacy releases: data -; upstream 6.4: per-family releases before the "
        "oldest multi-arch one of the data (7.0), not compared [ROCm/TheRock tags, release "
        "branches, version.json]",
    ]
    assert "no drift" in err


def test_a_deleted_release_branch_exits_1_naming_the_version(
        world: World, capsys: pytest.CaptureFixture[str]) -> None:
    world.repo("ROCm/apex").git("branch", "-D", "release/1.1.0")
    code, lines, _ = run(capsys, str(world.root))
    assert code == 1
    assert failing(lines) == [
        "drift: apex 1.1.0: data release/1.1.0; upstream no such branch "
        "[ROCm/apex refs/heads/release/*]; needs a recipe review: the data names a branch "
        "upstream lacks"]


def test_a_new_release_branch_needs_a_recipe_review_of_its_range(
        world: World, capsys: pytest.CaptureFixture[str]) -> None:
    apex = world.repo("ROCm/apex")
    new = apex.commit({"version.txt": "1.2.0\n"}, branch="release/1.2.0", base="release/1.1.0")
    code, lines, _ = run(capsys, str(world.root), "--write")
    assert code == 1, "a version's build flags are never written"
    assert failing(lines) == [
        f"review: apex 1.2.0: data none; upstream release/1.2.0 @{new[:9]} (torch unknown) "
        f"[ROCm/apex@{new[:9]} version.txt; torch: ROCm/apex README.md]; needs a recipe review: "
        f"ROCm/apex@{world.c['apex11'][:9]}..{new[:9]} setup.py op_builder (build style, ops, "
        "switches)"]
    assert "1.2.0" not in (world.data / "apex.toml").read_text()


def test_a_published_pair_is_written_keeping_comments(world: World,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    ti = world.repo("pytorch/test-infra")
    c26 = ti.commit({SCRIPT: _matrix_script("2.6.0", ["6.1"])})[:9]
    before = (world.data / "rocm.toml").read_text()
    code, lines, _ = run(capsys, str(world.root))
    assert code == 1
    assert failing(lines) == [
        "drift: ROCm 6.1 torch 2.6: data none; upstream torch==2.6.0+rocm6.1 from "
        f"https://download.pytorch.org/whl/rocm6.1/ [pytorch/test-infra@{c26} {TI} "
        "(2.6.0: rocm 6.1)]"]
    code, lines, _ = run(capsys, str(world.root), "--write")
    assert code == 0 and failing(lines)[0].startswith("written drift: ROCm 6.1 torch 2.6")
    after = (world.data / "rocm.toml").read_text()
    added = ('torch."2.6" = { kind = "pytorch", index_url = "https://download.pytorch.org/whl/'
             'rocm6.1/", spec = "torch==2.6.0+rocm6.1", evidence = "pytorch/test-infra@'
             f'{c26} {TI} (2.6.0: rocm 6.1)" }}\n')
    assert after.replace(added, "") == before
    assert run(capsys, str(world.root))[0] == 0


def test_a_pair_upstream_never_published_is_reported_never_rewritten(
        world: World, capsys: pytest.CaptureFixture[str]) -> None:
    rocm = world.data / "rocm.toml"
    rocm.write_text(rocm.read_text().replace(
        'torch."2.5" = { kind = "therock"',
        'torch."2.4" = { kind = "pytorch", index_url = "https://download.pytorch.org/whl/rocm7.0/'
        '", spec = "torch==2.4.0+rocm7.0", evidence = "x/y@1234567 f" }\n'
        'torch."2.5" = { kind = "therock"'))
    before = rocm.read_text()
    code, lines, _ = run(capsys, str(world.root), "--write")
    assert code == 1
    assert failing(lines) == [
        "review: ROCm 7.0 torch 2.4: data pytorch torch==2.4.0+rocm7.0; upstream no such pair "
        f"(torch 2.4: rocm 6.0, 6.1) [pytorch/test-infra@{world.c['ti24'][:9]} {TI} (2.4.0: "
        "rocm 6.0, 6.1)]; needs a recipe review: upstream PyTorch never published it: point it at AMD's "
        "or TheRock's build (with evidence) or drop it"]
    assert rocm.read_text() == before


def test_torch_rocm_and_python_drift_of_versions_are_written(
        world: World, capsys: pytest.CaptureFixture[str]) -> None:
    apex, fb = world.data / "apex.toml", world.data / "fbgemm_gpu.toml"
    apex.write_text(apex.read_text().replace('torch = "2.5"', 'torch = "2.4"'))
    fb.write_text(fb.read_text().replace('python = ["3.12"]', 'python = ["3.11"]'))
    code, lines, _ = run(capsys, str(world.root))
    rock = world.repo("ROCm/TheRock").git("rev-parse", "HEAD")[:9]
    assert code == 1
    assert failing(lines) == [
        "drift: apex 1.1.0 torch: data 2.4; upstream 2.5 "
        f"[ROCm/TheRock@{rock} external-builds/pytorch/README.md]",
        "drift: fbgemm_gpu 1.0.0 Python: data 3.11; upstream 3.12 "
        f"[pytorch/FBGEMM@{world.c['fb10'][:9]} .github/workflows/fbgemm_gpu_ci_rocm.yml]"]
    assert run(capsys, str(world.root), "--write")[0] == 0
    assert 'torch = "2.5"' in apex.read_text() and 'python = ["3.12"]' in fb.read_text()


def test_therock_sdk_versions_and_family_members(world: World,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    rocm, gpus = world.data / "rocm.toml", world.data / "gpus.toml"
    rocm.write_text(rocm.read_text().replace('[releases."7.0"]', '[releases."7.5"]')
                    .replace('hip = "7.0"', 'hip = "7.5"')
                    .replace('version = "7.0.0"', 'version = "7.5.0"'))
    gpus.write_text(gpus.read_text().replace('targets = ["gfx942"]',
                                             'targets = ["gfx942", "gfx90a"]'))
    code, lines, _ = run(capsys, str(world.root))
    head = world.repo("ROCm/TheRock").git("rev-parse", "HEAD")[:9]
    assert code == 1
    assert failing(lines) == [
        "drift: ROCm 7.5 pip SDK: data 7.5; upstream no such version (stream: 6.4, 7.0) "
        "[ROCm/TheRock version.json history]; needs a recipe review: the data names an SDK "
        "TheRock never published",
        "drift: family gfx94X-dcgpu: data gfx942, gfx90a; upstream gfx942 "
        f"[ROCm/TheRock@{head} cmake/therock_amdgpu_targets.cmake]"]


def test_json_output(world: World, capsys: pytest.CaptureFixture[str]) -> None:
    world.repo("ROCm/apex").git("branch", "-D", "release/1.1.0")
    code, lines, _ = run(capsys, str(world.root), "--json")
    doc = json.loads("\n".join(lines))
    assert code == 1 and doc["drift"] == 1
    assert {f["kind"] for f in doc["facts"]} == {"note", "drift"}


def test_control_bytes_from_upstream_are_never_printed(
        world: World, capsys: pytest.CaptureFixture[str]) -> None:
    world.repo("ROCm/apex").commit({"version.txt": "\x1b[2J1.1.0\n"}, branch="release/1.1.0")
    code, lines, _ = run(capsys, str(world.root))
    assert code == 1
    assert not any("\x1b" in line for line in lines)
    assert any("upstream \\x1b[2J1.1.0" in line for line in lines)


@pytest.mark.parametrize("damage", ["missing", "not-git", "no-dir"])
def test_bad_folders_exit_2_in_one_line(world: World, damage: str,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    target = world.root
    if damage == "no-dir":
        target = world.root / "nope"
        expected = "no such folder; valid: a folder holding the upstream repositories"
    elif damage == "missing":
        subprocess.run(["rm", "-rf", str(world.root / "ROCm+TheRock")], check=True)
        expected = "lacks the repository ROCm/TheRock; valid: a folder holding"
    else:
        subprocess.run(["rm", "-rf", str(world.root / "ROCm+apex" / "repo")], check=True)
        (world.root / "ROCm+apex" / "repo").mkdir()
        expected = "is not a git repository (no HEAD and objects/); valid: a clone or mirror"
    code, lines, err = run(capsys, str(target))
    assert code == 2 and lines == []
    assert err.count("\n") == 1 and expected in err and "Traceback" not in err


def test_without_git_exits_4(world: World, capsys: pytest.CaptureFixture[str],
                             monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    code, _, err = run(capsys, str(world.root))
    assert code == 4 and "git is not installed" in err


def test_without_dir_keeps_partial_clones_in_the_cache_and_fetches_again(
        world: World, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv("TOOLKIT_CACHE_DIR", str(cache))
    monkeypatch.setenv("TOOLKIT_UPSTREAM_REMOTE", f"file://{world.root}")
    trace = tmp_path / "git-trace"
    monkeypatch.setenv("GIT_TRACE", str(trace))
    assert run(capsys, )[0] == 0
    # blobs arrive in batches (the command's own fetch), never one lazy fetch per blob
    fetches = [line.split("built-in: ")[1] for line in trace.read_text().splitlines()
               if "built-in: git fetch" in line]
    assert fetches and all(f.startswith("git fetch --no-tags --no-write-fetch-head") and
                           f.endswith("--stdin origin") for f in fetches), fetches
    monkeypatch.delenv("GIT_TRACE")
    clone = cache / "upstream" / "ROCm+apex.git"
    config = subprocess.run(["git", "--git-dir", str(clone), "config", "--get",
                             "remote.origin.partialclonefilter"], capture_output=True, text=True)
    assert config.stdout.strip() == "blob:none"
    world.repo("ROCm/apex").git("branch", "-D", "release/1.1.0")
    code, lines, _ = run(capsys, )
    assert code == 1 and any(line.startswith("drift: apex 1.1.0:") for line in lines)


def test_therock_building_apex_adds_its_release(world: World,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """TheRock's 7.0 torch 2.5 (cited at a commit whose Linux PyTorch workflow checks apex out
    and whose README names apex release/1.1.0 for 2.5): apex 1.1.0 builds there too."""
    rock = world.repo("ROCm/TheRock")
    wf = ".github/workflows/multi_arch_build_portable_linux_pytorch_wheels.yml"
    cited = rock.commit({wf: "run: ./external-builds/pytorch/pytorch_apex_repo.py checkout\n"})
    rocm = world.data / "rocm.toml"
    rocm.write_text(rocm.read_text().replace(
        f'evidence = "ROCm/TheRock@{world.c["rock70"][:9]} {ROCK_MATRIX}" }}',
        f'evidence = "ROCm/TheRock@{cited[:9]} {ROCK_MATRIX}" }}'))
    code, lines, _ = run(capsys, str(world.root))
    assert code == 1
    assert failing(lines) == [
        f"drift: apex 1.1.0 ROCm releases: data 6.1; upstream 6.1, 7.0 [pytorch/test-infra@"
        f"{world.c['ti25'][:9]} {TI} (2.5.0: rocm 6.1); ROCm/TheRock@{cited[:9]} (7.0) "
        "external-builds/pytorch/README.md, .github/workflows/*linux_pytorch_wheels.yml]"]
    # without the apex checkout in the workflow, TheRock does not build it: no drift
    rock.commit({wf: "run: ./external-builds/pytorch/pytorch_torch_repo.py checkout\n"})
    rocm.write_text(rocm.read_text().replace(cited[:9], rock.git("rev-parse", "HEAD")[:9]))
    forget_loaded()  # the data changed in place
    code, lines, _ = run(capsys, str(world.root))
    assert code == 0, failing(lines)


# ----------------------------------------------------------------------------- waiting versions
FB_CI = ".github/workflows/fbgemm_gpu_ci_rocm.yml"
FB_INIT = "fbgemm_gpu/fbgemm_gpu/__init__.py"


def _fbgemm_11(world: World) -> str:
    """Tag v1.1.0 whose table pairs 1.1 with torch 2.6 (no ROCm of the fake data has 2.6) and
    whose CI builds Python 3.12 on ROCm 6.1."""
    fb = world.repo("pytorch/FBGEMM")
    new = fb.commit({FB_CI: ('jobs:\n  build_artifact:\n    strategy:\n      matrix:\n'
                             '        python-version: [ "3.12" ]\n'
                             '        rocm-version: [ "6.1" ]\n'),
                     FB_INIT: '_fbgemm_torch_compat_table = {"1.1": "2.6", "1.0": "2.5"}\n'})
    fb.git("tag", "v1.1.0", new)
    return new


def test_a_tag_whose_torch_no_ci_rocm_has_is_written_as_waiting(
        world: World, capsys: pytest.CaptureFixture[str]) -> None:
    """Drift (exit 1) that --write records as a waiting version (exit 0 after, a note); the
    version has no build and asking for one says what it awaits (exit 10)."""
    new = _fbgemm_11(world)[:9]
    code, lines, _ = run(capsys, str(world.root))
    assert code == 1
    assert failing(lines) == [
        f"drift: fbgemm_gpu 1.1.0: data none; upstream v1.1.0 @{new} (torch 2.6: awaits torch "
        f"2.6 on a ROCm of the matrix that its CI builds (6.1); python 3.12) [pytorch/FBGEMM@"
        f"{new} {FB_CI}; torch: pytorch/FBGEMM@{new} {FB_INIT}]"]
    assert run(capsys, str(world.root), "--write")[0] == 0
    text = (world.data / "fbgemm_gpu.toml").read_text()
    entry = text[text.rindex("[[versions]]"):]
    assert 'version = "1.1.0"\nref = "v1.1.0"\ntorch = "2.6"\nrocm = []\nwaiting = "awaits torch ' \
           '2.6 on a ROCm of the matrix that its CI builds (6.1)"\npython = ["3.12"]\n' in entry
    # the recipe is the newest version's, and the range since its review is due, not done
    assert 'build_style = "build-variant"' in entry
    assert f"recipe as reviewed at pytorch/FBGEMM@{world.c['fb10'][:9]} (v1.0.0)" in entry
    code, lines, _ = run(capsys, str(world.root))
    assert code == 0, lines
    assert f"note: fbgemm_gpu 1.1.0 source: data @{world.c['fb10'][:9]}; upstream @{new} (due " \
           "before it builds: it waits)" in "\n".join(lines)
    code, lines, err = main(["plan", "fbgemm_gpu-1.1.0-cp312-rocm6.1"]), *capsys.readouterr()
    assert code == 10 and lines == ""
    assert err.startswith("error: fbgemm_gpu 1.1.0 has no build yet: awaits torch 2.6 on a ROCm "
                          "of the matrix that its CI builds (6.1)") and "Traceback" not in err


def test_a_torch_pair_then_the_version_waiting_for_it_settle_in_one_write(
        world: World, capsys: pytest.CaptureFixture[str]) -> None:
    """PyTorch publishes 2.6 for ROCm 6.1: one --write adds the pair to rocm.toml, reads again,
    and fills the waiting version's ROCm releases; what is left is its recipe review."""
    new = _fbgemm_11(world)[:9]
    assert run(capsys, str(world.root), "--write")[0] == 0
    c26 = world.repo("pytorch/test-infra").commit({SCRIPT: _matrix_script("2.6.0", ["6.1"])})
    code, lines, _ = run(capsys, str(world.root), "--write")
    written = [line for line in lines if line.startswith("written ")]
    assert written == [
        "written drift: ROCm 6.1 torch 2.6: data none; upstream torch==2.6.0+rocm6.1 from "
        f"https://download.pytorch.org/whl/rocm6.1/ [pytorch/test-infra@{c26[:9]} {TI} (2.6.0: "
        "rocm 6.1)]",
        "written drift: fbgemm_gpu 1.1.0 ROCm releases: data none (awaits torch 2.6 on a ROCm of "
        f"the matrix that its CI builds (6.1)); upstream 6.1 [pytorch/FBGEMM@{new} {FB_CI}]"]
    assert code == 1 and [x for x in lines if x.startswith(("drift:", "review:"))] == [
        f"review: fbgemm_gpu 1.1.0 source: data @{world.c['fb10'][:9]}; upstream @{new} "
        f"[pytorch/FBGEMM@{new} {FB_CI}]; needs a recipe review: pytorch/FBGEMM@"
        f"{world.c['fb10'][:9]}..{new} fbgemm_gpu/"]
    text = (world.data / "fbgemm_gpu.toml").read_text()
    assert 'rocm = ["6.1"]' in text and "waiting" not in text
    # the maintainer's review: the evidence names the commit read; then nothing is left
    (world.data / "fbgemm_gpu.toml").write_text(text.replace(
        f"recipe as reviewed at pytorch/FBGEMM@{world.c['fb10'][:9]}",
        f"pytorch/FBGEMM@{new} (v1.1.0) fbgemm_gpu/setup.py reviewed"))
    forget_loaded()
    code, lines, _ = run(capsys, str(world.root))
    assert code == 0, failing(lines)
    assert main(["plan", "fbgemm_gpu-1.1.0-cp312-rocm6.1", "--json"]) == 0


def test_settling_stops_after_its_rounds(world: World, tmp_path: Path) -> None:
    """A rule that finds drift after every write: --write stops after ROUNDS writes."""
    from toolkit.verify.upstream import write
    from toolkit.verify.upstream.model import Edit, Fact

    calls: list[int] = []

    def find() -> list[Fact]:
        calls.append(1)
        return [Fact("drift", "x", "a", "b", "e",
                     (Edit("apex.toml", ("versions", 0, "python"), [f"3.1{len(calls) % 2}"]),))]

    done = write.settle(world.data, find)
    assert len(calls) == write.ROUNDS + 1 and len(done.settled) == write.ROUNDS
    assert done.facts and done.facts[0].kind == "drift"


def test_the_therock_commits_an_apex_version_cites_follow_its_releases(
        world: World, capsys: pytest.CaptureFixture[str]) -> None:
    """apex 1.1.0 built by TheRock's 7.0 (its torch 2.5 cited at a commit whose workflow checks
    apex out): --write pairs it and its evidence names that commit. When 7.0 is read at a later
    commit (the same workflow), the releases still agree but the evidence is drift, rewritten
    to the commit the release is read at; the same commits in other words are kept."""
    rock = world.repo("ROCm/TheRock")
    wf = ".github/workflows/multi_arch_build_portable_linux_pytorch_wheels.yml"
    first = rock.commit({wf: "run: ./external-builds/pytorch/pytorch_apex_repo.py checkout\n"})
    rocm = world.data / "rocm.toml"
    at_rock70 = f'evidence = "ROCm/TheRock@{world.c["rock70"][:9]} {ROCK_MATRIX}" }}'
    rocm.write_text(rocm.read_text().replace(
        at_rock70, f'evidence = "ROCm/TheRock@{first[:9]} {ROCK_MATRIX}" }}'))
    assert run(capsys, str(world.root), "--write")[0] == 0
    apex = world.data / "apex.toml"
    assert f"; TheRock: ROCm/TheRock@{first[:9]} (7.0)" in apex.read_text()

    later = rock.commit({"README.md": "later\n"})
    rocm.write_text(rocm.read_text().replace(first[:9], later[:9]))
    forget_loaded()
    code, lines, _ = run(capsys, str(world.root))
    assert code == 1
    (line,) = failing(lines)
    assert line.startswith(f"drift: apex 1.1.0 TheRock evidence: data ROCm/TheRock@{first[:9]}")
    assert f"upstream ROCm/TheRock@{later[:9]} (7.0)" in line
    forget_loaded()
    assert run(capsys, str(world.root), "--write")[0] == 0
    text = apex.read_text()
    assert f"; TheRock: ROCm/TheRock@{later[:9]} (7.0)" in text and first[:9] not in text
    # the version's own part of the evidence is kept as it was
    assert f"ROCm/apex@{world.c['apex11'][:9]} (release/1.1.0) version.txt; TheRock: " in text
    forget_loaded()
    assert run(capsys, str(world.root))[0] == 0


def test_the_seed_table_is_a_field_of_the_data_not_words_of_the_evidence(
        world: World, capsys: pytest.CaptureFixture[str]) -> None:
    """apex 1.0.0 is in the fake's seed table (``seed_table = true``): its pairs are kept. The
    words "seed table" in its evidence decide nothing: without the field its pairs are
    derived from upstream (the fake test-infra publishes torch 2.4 for ROCm 6.0 and 6.1)."""
    apex = world.data / "apex.toml"
    text = apex.read_text()
    apex.write_text(text.replace("torch pair: the seed table", "torch pair: hand-made"))
    forget_loaded()
    code, lines, _ = run(capsys, str(world.root))
    assert code == 0, lines  # the field alone keeps them
    apex.write_text(text.replace("seed_table = true\n", ""))
    forget_loaded()
    code, lines, _ = run(capsys, str(world.root))
    assert code == 1
    assert [line.split(" [")[0] for line in failing(lines)] == [
        "drift: apex 1.0.0 ROCm releases: data 6.0; upstream 6.0, 6.1",
        "drift: apex 1.0.0 Python: data 3.10; upstream 3.11, 3.12"]
