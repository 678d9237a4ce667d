"""Small upstream repositories made with git, and a matrix data folder that agrees with them.

They stand in for ROCm/apex, pytorch/FBGEMM, pytorch/test-infra and ROCm/TheRock where those
cannot be had (CI has no GitHub); each states its facts the way the real file does (the same
file names and shapes the rules read). Every expectation in the tests is written by hand from
what these repositories state.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from tests.fixtures.data import package_toml, pkg_version

SCRIPT = "tools/scripts/generate_binary_build_matrix.py"
CMAKE = "cmake/therock_amdgpu_targets.cmake"
ROCK_MATRIX = "build_tools/github_actions/configure_pytorch_release_matrix.py"
_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1"}


class FakeRepo:
    def __init__(self, root: Path, slug: str) -> None:
        self.dir = root / slug.replace("/", "+") / "repo"
        self.dir.mkdir(parents=True)
        self.git("init", "--quiet", "--initial-branch=main")
        self.git("config", "uploadpack.allowFilter", "true")
        self.git("config", "uploadpack.allowAnySHA1InWant", "true")

    def git(self, *args: str, check: bool = True) -> str:
        res = subprocess.run(["git", *args], cwd=self.dir, check=check, capture_output=True,
                             text=True, env={**os.environ, **_ENV})
        return res.stdout.strip()

    def has(self, ref: str) -> bool:
        return self.git("rev-parse", "--verify", "--quiet", ref, check=False) != ""

    def commit(self, files: dict[str, str], branch: str = "main", base: str = "main") -> str:
        """Commit ``files`` on ``branch`` (made from ``base`` when new); returns the commit.
        The work tree is left on main (the first commit of a repository is main's)."""
        on = self.git("symbolic-ref", "--quiet", "--short", "HEAD", check=False)
        if on != branch and self.has("HEAD"):
            if self.has(f"refs/heads/{branch}"):
                self.git("checkout", "--quiet", branch)
            else:
                self.git("checkout", "--quiet", "-b", branch, base)
        for path, text in files.items():
            dest = self.dir / path
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_text(text)
        self.git("add", "--", *files)
        self.git("commit", "--quiet", "-m", f"update {', '.join(files)}")
        sha = self.git("rev-parse", "HEAD")
        if (on, branch) != ("main", "main"):
            self.git("checkout", "--quiet", "main")
        return sha


def _matrix_script(stable: str, rocm: list[str], candidate: str = "", test: list[str] | None = None
                   ) -> str:
    return (f'PYTHON_ARCHES_DICT = {{"release": ["3.11", "3.12"]}}\n'
            f'ROCM_ARCHES_DICT = {{"nightly": ["9.9"], "test": {test or rocm!r}, '
            f'"release": {rocm!r}}}\n'
            f'CURRENT_CANDIDATE_VERSION = "{candidate or stable}"\n'
            f'CURRENT_STABLE_VERSION = "{stable}"\n')


def make_upstream(root: Path) -> dict[str, str]:
    """The four repositories under ``root``; returns the commits the data cites."""
    c: dict[str, str] = {}
    ti = FakeRepo(root, "pytorch/test-infra")
    c["ti24"] = ti.commit({SCRIPT: _matrix_script("2.4.0", ["6.0", "6.1"])})
    ti.commit({SCRIPT: _matrix_script("2.4.1", ["6.0", "6.1", "6.9"])})  # not the stable commit
    c["ti25"] = ti.commit({SCRIPT: _matrix_script("2.5.0", ["6.1"])})
    c["ti26"] = ti.commit({SCRIPT: _matrix_script("2.5.0", ["6.1"], "2.6.0", ["6.1", "6.2"])})

    apex = FakeRepo(root, "ROCm/apex")
    c["apex_main"] = apex.commit({"README.md": (
        "| ``APEX Version`` | ``APEX branch`` | ``Torch Version`` |\n"
        "| ``1.1.0``        | release/1.1.0   | ``2.5``           |\n"
        "| ``1.0.0``        | release/1.0.0   | ``2.4``           |\n"), "version.txt": "1.2.0a0\n"})
    apex.commit({"version.txt": "0.9.0\n"}, branch="release/0.9.0")
    c["apex10"] = apex.commit({"version.txt": "1.0.0\n", "setup.py": "# 1.0\n"},
                              branch="release/1.0.0")
    c["apex11"] = apex.commit({"version.txt": "1.1.0\n", "setup.py": "# 1.1\n"},
                              branch="release/1.1.0")

    fb = FakeRepo(root, "pytorch/FBGEMM")
    ci = ".github/workflows/fbgemm_gpu_ci_rocm.yml"
    init = "fbgemm_gpu/fbgemm_gpu/__init__.py"
    c["fb10"] = fb.commit({ci: ('jobs:\n  build_artifact:\n    strategy:\n      matrix:\n'
                                '        python-version: [ "3.12" ]\n'
                                '        rocm-version: [ "6.1", "6.0" ]\n'
                                '  test:\n        python-version: [ "3.11" ]\n'),
                           init: '_fbgemm_torch_compat_table = {"1.0": "2.5"}\n'})
    fb.git("tag", "v1.0.0")
    fb.commit({"fbgemm_gpu/setup.py": "# patch\n"})
    fb.git("tag", "v1.0.1")
    fb.git("tag", "v1.1.0-rc1")

    rock = FakeRepo(root, "ROCm/TheRock")
    rock.commit({"version.json": '{"rocm-version": "6.4.0"}\n'})
    c["rock70"] = rock.commit({
        "version.json": '{"rocm-version": "7.0.0"}\n',
        CMAKE: ('therock_add_amdgpu_target(gfx90a "MI210" FAMILY dcgpu-all gfx90a-dcgpu)\n'
                'therock_add_amdgpu_target(gfx942 "MI300X" FAMILY dcgpu-all gfx94X-dcgpu\n'
                '  EXCLUDE_TARGET_PROJECTS hipSPARSELt)\n'),
        "RELEASES.md": "pip install --index-url https://rocm.example.amd.com/whl-multi-arch/\n",
        ROCK_MATRIX: ('RELEASE_PYTHON_VERSIONS = ["3.11", "3.12"]\n'
                      'RELEASE_STABLE_PYTORCH_REFS = {"linux": ["release/2.5"]}\n'),
        "build_tools/setup_venv.py": (
            'ROCM_INDEX_URLS_MAP = {\n'
            '    "stable": "https://rocm.example.amd.com/whl-multi-arch/",\n'
            '    "nightly": "https://nightly.example.amd.com/whl-multi-arch/",\n}\n'),
        "external-builds/pytorch/README.md": "| 2.5 | ROCm/apex `release/1.1.0` |\n"})
    return c


def make_data(folder: Path, c: dict[str, str]) -> Path:
    """A matrix data folder that agrees with ``make_upstream``'s repositories."""
    folder.mkdir(parents=True)
    ev = {k: v[:9] for k, v in c.items()}
    (folder / "gpus.toml").write_text(f"""\
[families.gfx94X-dcgpu]
targets = ["gfx942"]

[families.gfx90a]
targets = ["gfx90a"]

[eras.fake]
evidence = "ROCm/TheRock@{ev['rock70']} {CMAKE}"
targets = ["gfx90a", "gfx942"]
""")
    ti = "tools/scripts/generate_binary_build_matrix.py"
    torch = ('torch."{t}" = {{ kind = "pytorch", index_url = '
             '"https://download.pytorch.org/whl/rocm{r}/", spec = "torch=={t}.0+rocm{r}", '
             'evidence = "pytorch/test-infra@{c} {ti}" }}\n')
    (folder / "rocm.toml").write_text(f"""\
# a comment --write keeps

[releases."6.0"]
gpus = "fake"
hip = "6.0"
default_family = "gfx94X-dcgpu"
sdk = {{ provider = "system", version = "6.0.2", evidence = "ROCm/TheRock@{ev['rock70']} version.json" }}
""" + torch.format(t="2.4", r="6.0", c=ev["ti24"], ti=ti) + f"""
[releases."6.1"]
gpus = "fake"
hip = "6.1"
default_family = "gfx94X-dcgpu"
sdk = {{ provider = "system", version = "6.1.3", evidence = "ROCm/TheRock@{ev['rock70']} version.json" }}
""" + torch.format(t="2.4", r="6.1", c=ev["ti24"], ti=ti)
        + torch.format(t="2.5", r="6.1", c=ev["ti25"], ti=ti) + f"""
[releases."7.0"]
gpus = "fake"
hip = "7.0"
default_family = "gfx94X-dcgpu"
line = {{ status = "nightly-only", ref = "{ev['rock70']}", version = "7.0.0", \
evidence = "ROCm/TheRock@{ev['rock70']} version.json" }}
sdk = {{ provider = "pip", layout = "multi-arch", \
evidence = "ROCm/TheRock@{ev['rock70']} version.json" }}
channels = {{ stable = "https://rocm.example.amd.com/whl-multi-arch/", \
nightly = "https://nightly.example.amd.com/whl-multi-arch/", \
evidence = "ROCm/TheRock@{ev['rock70']} build_tools/setup_venv.py" }}
torch."2.5" = {{ kind = "therock", spec = "torch>=2.5,<2.6", \
python = ["3.11", "3.12"], evidence = "ROCm/TheRock@{ev['rock70']} {ROCK_MATRIX}" }}
""")
    (folder / "apex.toml").write_text(package_toml(
        "apex", repo="https://example.invalid/apex.git", recipe="apex", versions=[
            pkg_version("1.0.0", ref="release/1.0.0", torch="2.4", rocm=["6.0"], python=["3.10"],
                    build_style="ext-flags", evidence=f"ROCm/apex@{ev['apex10']} (release/1.0.0) "
                    "version.txt; torch pair: the seed table", seed_table=True),
            pkg_version("1.1.0", ref="release/1.1.0", torch="2.5", rocm=["6.1"],
                    python=["3.11", "3.12"], build_style="ext-flags",
                    evidence=f"ROCm/apex@{ev['apex11']} (release/1.1.0) version.txt")]))
    (folder / "fbgemm_gpu.toml").write_text(package_toml(
        "fbgemm_gpu", dist="fbgemm_gpu-rocm", repo="https://example.invalid/FBGEMM.git",
        subdir="fbgemm_gpu", recipe="fbgemm_gpu", versions=[
            pkg_version("1.0.0", ref="v1.0.0", torch="2.5", rocm=["6.1"], python=["3.12"],
                    build_style="build-variant", evidence=f"pytorch/FBGEMM@{ev['fb10']} (v1.0.0) "
                    ".github/workflows/fbgemm_gpu_ci_rocm.yml")]))
    return folder


class World:
    """A hand-made upstream (``make_upstream``: the four repositories as OWNER+NAME/repo under
    ``root``) and the data folder that agrees with it (``make_data``)."""

    def __init__(self, tmp: Path) -> None:
        self.root = tmp / "mirrors"
        self.c = make_upstream(self.root)
        self.data = make_data(tmp / "data", self.c)

    @classmethod
    def copy_of(cls, template: World, tmp: Path) -> World:
        """A world of the same repositories and data as ``template`` (the same commits), under
        ``tmp``: each test changes its own copy; copying the folders costs a fraction of the
        forty-odd git commands that make them."""
        w = cls.__new__(cls)
        w.root = tmp / "mirrors"
        shutil.copytree(template.root, w.root, symlinks=True)
        w.c = dict(template.c)
        w.data = tmp / "data"
        shutil.copytree(template.data, w.data, symlinks=True)
        return w

    def repo(self, slug: str) -> FakeRepo:
        r = FakeRepo.__new__(FakeRepo)
        r.dir = self.root / slug.replace("/", "+") / "repo"
        return r

