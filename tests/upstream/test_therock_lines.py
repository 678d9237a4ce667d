"""TheRock's release lines against the real ROCm/TheRock (``TOOLKIT_UPSTREAM_DIR``).

Every expected value was read by hand from the upstream files with ``git show`` at the tag or
branch named (never from this reader's output):

- tag ``therock-7.13``: ``.github/workflows/multi_arch_release_linux_pytorch_wheels.yml``
  matrix ``python_version: 3.10 .. 3.14`` x ``pytorch_git_ref: release/2.8 .. release/2.11,
  nightly``, excluding release/2.8 with 3.14; no gfx1250 in the cmake target list;
- tag ``therock-7.14``: ``configure_pytorch_release_matrix.py`` ``PYTORCH_REFS_LINUX``
  release/2.10, 2.11, 2.12 and ``PYTHON_VERSIONS`` 3.10 .. 3.14; gfx1250 in the target list;
- a copy of the refs with a new tag and branch for 10.2 is drift ``new ROCm release 10.2``;
- branch ``release/therock-10.0`` (no tag): ``RELEASE_STABLE_PYTORCH_REFS["linux"]``
  release/2.11, 2.12, 2.13 and ``RELEASE_PYTHON_VERSIONS`` 3.10 .. 3.14; its setup_venv.py's
  ``ROCM_INDEX_URLS_MAP`` names the whl-multi-arch channels.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.upstream.conftest import OPTIONAL, REPOS, Upstream
from tests.upstream.test_upstream_command import _copy_refs
from toolkit.cli.main import main
from toolkit.verify.upstream.repos import Repo
from toolkit.verify.upstream.therock_lines import channels, gpu_targets, release_lines, torch_builds

SLUG = "ROCm/TheRock"
PY = ("3.10", "3.11", "3.12", "3.13", "3.14")
# cmake/therock_amdgpu_targets.cmake at tag therock-7.13, in file order
TARGETS_713 = ("gfx900", "gfx90c", "gfx906", "gfx908", "gfx90a", "gfx942", "gfx950", "gfx1010",
               "gfx1011", "gfx1012", "gfx1030", "gfx1031", "gfx1032", "gfx1033", "gfx1034",
               "gfx1035", "gfx1036", "gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150",
               "gfx1151", "gfx1152", "gfx1153", "gfx1200", "gfx1201")


@pytest.fixture(scope="module")
def therock(upstream: dict[str, Upstream]) -> Repo:
    if "TheRock" not in upstream:
        pytest.skip("TOOLKIT_UPSTREAM_DIR lacks ROCm/TheRock")
    return Repo(SLUG, upstream["TheRock"].git_dir)


def test_each_release_is_read_at_its_tag_or_branch(therock: Repo,
                                                   upstream: dict[str, Upstream]) -> None:
    lines = release_lines(therock)
    rock = upstream["TheRock"]
    assert (lines["7.13"].status, lines["7.13"].ref) == ("released", "therock-7.13")
    assert lines["7.13"].commit == rock.commit("therock-7.13")
    assert (lines["7.14"].status, lines["7.14"].ref, lines["7.14"].version) == \
        ("released", "therock-7.14", "7.14.0")  # the branch says 7.14.1, untagged
    assert (lines["10.0"].status, lines["10.0"].ref) == ("branch", "release/therock-10.0")
    assert lines["10.0"].commit == rock.commit("release/therock-10.0")
    assert lines["10.1"].status == "bkc"
    assert lines["10.1"].ref.startswith("release/bkc/therock-10.1-")
    # 7.15 has no tag or branch: main's last commit before "Raise version to 10.0.0"
    assert lines["7.15"].status == "nightly-only"
    assert lines["7.15"].commit == rock.commit("947ba1736^")


def test_713_builds_torch_28_to_211_and_28_without_314(therock: Repo) -> None:
    line = release_lines(therock)["7.13"]
    builds = torch_builds(therock, line.commit)
    assert builds.value == {"2.8": PY[:-1], "2.9": PY, "2.10": PY, "2.11": PY}
    assert builds.evidence.endswith(" .github/workflows/multi_arch_release_linux_pytorch_wheels.yml")
    assert gpu_targets(therock, line.commit).value == TARGETS_713


def test_714_builds_torch_210_to_212_and_gfx1250(therock: Repo) -> None:
    line = release_lines(therock)["7.14"]
    builds = torch_builds(therock, line.commit)
    assert builds.value == {"2.10": PY, "2.11": PY, "2.12": PY}
    assert builds.evidence == (f"{SLUG}@{line.commit[:9]} "
                               "build_tools/github_actions/configure_pytorch_release_matrix.py")
    assert gpu_targets(therock, line.commit).value == (*TARGETS_713, "gfx1250")
    # setup_venv.py still joins family folders: the multi-arch channels come from the
    # release-bucket publisher, the stable one from setup_venv.py
    assert channels(therock, line.commit).value == {
        "stable": "https://repo.amd.com/rocm/whl/",
        "prerelease": "https://rocm.prereleases.amd.com/whl-multi-arch/",
        "nightly": "https://rocm.nightlies.amd.com/whl-multi-arch/",
        "dev": "https://rocm.devreleases.amd.com/whl-multi-arch/"}


def test_100_branch_builds_torch_211_to_213(therock: Repo) -> None:
    line = release_lines(therock)["10.0"]
    assert torch_builds(therock, line.commit).value == {"2.11": PY, "2.12": PY, "2.13": PY}
    assert gpu_targets(therock, line.commit).value == (*TARGETS_713, "gfx1250")
    assert channels(therock, line.commit).value == {
        "stable": "https://repo.amd.com/rocm/whl-multi-arch/",
        "prerelease": "https://rocm.prereleases.amd.com/whl-multi-arch/",
        "nightly": "https://rocm.nightlies.amd.com/whl-multi-arch/",
        "dev": "https://rocm.devreleases.amd.com/whl-multi-arch/"}


def _new_release(git_dir: Path, version: str) -> str:
    """A commit on top of HEAD whose version.json says ``version``, as the branch
    release/therock-X.Y and the tag therock-X.Y (objects and refs in ``git_dir`` only)."""
    env = {**os.environ, "GIT_INDEX_FILE": str(git_dir / "tmp-index"), "GIT_AUTHOR_NAME": "t",
           "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com"}

    def git(*args: str, stdin: str | None = None) -> str:
        return subprocess.run(["git", "--git-dir", str(git_dir), *args], input=stdin, env=env,
                              check=True, capture_output=True, text=True).stdout.strip()

    blob = git("hash-object", "-w", "--stdin", stdin=f'{{"rocm-version": "{version}"}}\n')
    git("read-tree", "HEAD")
    git("update-index", "--cacheinfo", f"100644,{blob},version.json")
    commit = git("commit-tree", git("write-tree"), "-p", "HEAD", "-m", f"Release {version}")
    xy = ".".join(version.split(".")[:2])
    git("update-ref", f"refs/heads/release/therock-{xy}", commit)
    git("tag", f"therock-{xy}", commit)
    return commit


def test_a_new_release_tag_and_branch_is_drift_naming_it(
        upstream: dict[str, Upstream], therock: Repo, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A copy of TheRock's refs with release/therock-10.2 and therock-10.2 (main's files, so
    main's torch list: RELEASE_STABLE_PYTORCH_REFS release/2.12, 2.13, 2.14)."""
    if set(OPTIONAL) - set(upstream):
        pytest.skip("TOOLKIT_UPSTREAM_DIR lacks pytorch/test-infra or ROCm/TheRock")
    root = tmp_path / "mirrors"
    for name, slug in {**REPOS, **OPTIONAL}.items():
        dest = root / slug.replace("/", "+") / "repo"
        dest.parent.mkdir(parents=True)
        if name == "TheRock":
            _copy_refs(upstream[name].git_dir, dest)
        else:
            dest.symlink_to(upstream[name].git_dir.resolve())
    commit = _new_release(root / "ROCm+TheRock" / "repo", "10.2.0")
    code = main(["upstream", str(root)])
    out = capsys.readouterr().out.splitlines()
    assert code == 1
    assert (f"drift: new ROCm release 10.2: data none; upstream released therock-10.2 "
            f"(10.2.0; torch 2.12, 2.13, 2.14) [{SLUG}@{commit[:9]} version.json]") in out
