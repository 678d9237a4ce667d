"""A new upstream version, in a copy of the real repositories, through the real command
(``python -m toolkit upstream DIR`` and ``invoke upstream``) on a copy of the data.

Each test makes the new version with git in a mirror copy (``git clone --mirror --shared``:
the real mirror is never written): its number, its torch and its base are computed from what
the mirrors and the data hold today (the next minor after the newest), so a new upstream release
changes nothing here.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.version import Version

from tests.upstream.conftest import OPTIONAL, REPOS, Upstream
from toolkit.data.matrix import forget_loaded, load_matrix

SLUGS = {**REPOS, **OPTIONAL}
_GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_CONFIG_NOSYSTEM": "1"}


@pytest.fixture
def mirrors(upstream: dict[str, Upstream], tmp_path: Path) -> Path:
    missing = [slug for name, slug in OPTIONAL.items() if name not in upstream]
    if missing:
        pytest.skip(f"TOOLKIT_UPSTREAM_DIR lacks {', '.join(missing)}")
    root = tmp_path / "mirrors"
    for name, slug in SLUGS.items():
        link = root / slug.replace("/", "+") / "repo"
        link.parent.mkdir(parents=True)
        link.symlink_to(upstream[name].git_dir.resolve())
    return root


def _own_copy(mirrors: Path, slug: str) -> Path:
    """Replace the symlink of ``slug`` by a mirror clone sharing its objects."""
    link = mirrors / slug.replace("/", "+") / "repo"
    real = link.resolve()
    link.unlink()
    subprocess.run(["git", "clone", "--quiet", "--mirror", "--shared", str(real), str(link)],
                   check=True)
    return link


def _git(git_dir: Path, *args: str, env: dict[str, str] | None = None) -> str:
    return subprocess.run(["git", "--git-dir", str(git_dir), *args], check=True, text=True,
                          capture_output=True, env={**os.environ, **_GIT_ENV, **(env or {})}
                          ).stdout.strip()


def _commit(git_dir: Path, base: str, files: dict[str, str], index: Path) -> str:
    """A commit on ``base`` changing ``files`` (plumbing: a bare repository has no work tree)."""
    env = {"GIT_INDEX_FILE": str(index)}
    _git(git_dir, "read-tree", f"{base}^{{commit}}", env=env)
    for path, text in files.items():
        blob = subprocess.run(["git", "--git-dir", str(git_dir), "hash-object", "-w", "--stdin"],
                              input=text, text=True, capture_output=True, check=True).stdout.strip()
        _git(git_dir, "update-index", "--add", "--cacheinfo", f"100644,{blob},{path}", env=env)
    tree = _git(git_dir, "write-tree", env=env)
    return _git(git_dir, "commit-tree", tree, "-p", f"{base}^{{commit}}", "-m", "new version")


def _toolkit(data: Path, *argv: str) -> tuple[int, list[str], str]:
    res = subprocess.run([sys.executable, "-m", "toolkit", *argv], capture_output=True, text=True,
                         env={**os.environ, "TOOLKIT_DATA_DIR": str(data)}, check=False)
    return res.returncode, res.stdout.splitlines(), res.stderr


def _next_minor(version: str) -> str:
    v = Version(version)
    return f"{v.major}.{v.minor + 1}"


def test_a_new_fbgemm_tag_whose_torch_no_rocm_has_waits(
        mirrors: Path, data_copy: Path, tmp_path: Path) -> None:
    """Catches: a new tag left as a review (exit 1 after --write), rocm = [] refused by the
    loader, a waiting version reported as a failure, a plan of it that is not exit 10."""
    fb = _own_copy(mirrors, "pytorch/FBGEMM")
    tags = [t for t in _git(fb, "tag", "--list", "v*").split() if re.fullmatch(r"v\d+\.\d+\.0", t)]
    base = max(tags, key=lambda t: Version(t[1:]))
    new = f"{_next_minor(base[1:])}.0"
    torches = {t for r in load_matrix(data_copy).rocm.values() for t in r.torch}
    torch = _next_minor(max(torches, key=Version) + ".0")  # no ROCm release has it
    init = "fbgemm_gpu/fbgemm_gpu/__init__.py"
    opening = "_fbgemm_torch_compat_table = {"
    table = _git(fb, "show", f"{base}:{init}").replace(
        opening, f'{opening}\n    "{_next_minor(base[1:])}": "{torch}",', 1)
    commit = _commit(fb, base, {init: table + "\n"}, tmp_path / "index")
    _git(fb, "tag", f"v{new}", commit)

    code, lines, _ = _toolkit(data_copy, "upstream", str(mirrors))
    assert code == 1
    drift = [x for x in lines if x.startswith(("drift:", "review:"))]
    assert len(drift) == 1 and drift[0].startswith(
        f"drift: fbgemm_gpu {new}: data none; upstream v{new} @{commit[:9]} (torch {torch}: "
        f"awaits torch {torch} on a ROCm of the matrix"), lines

    code, lines, err = _toolkit(data_copy, "upstream", str(mirrors), "--write")
    assert code == 0, lines + [err]
    invoke = Path(sys.executable).parent / "invoke"
    res = subprocess.run([str(invoke), "upstream", "--dir", str(mirrors)], capture_output=True,
                         text=True, env={**os.environ, "TOOLKIT_DATA_DIR": str(data_copy)},
                         check=False, cwd=Path(__file__).parents[2])
    assert res.returncode == 0, res.stdout + res.stderr
    assert f"note: fbgemm_gpu {new}: data waiting (awaits torch {torch} on a ROCm" in res.stdout

    forget_loaded()  # written by the command
    matrix = load_matrix(data_copy)
    written = next(v for v in matrix.packages["fbgemm_gpu"].versions if v.version == new)
    assert written.rocm == () and written.torch == torch
    any_rocm = next(iter(matrix.rocm))
    build = f"fbgemm_gpu-{new}-cp{written.python[0].replace('.', '')}-rocm{any_rocm}"
    code, out, err = _toolkit(data_copy, "plan", build)
    assert code == 10 and out == [], err
    assert err.count("\n") == 1 and f"has no build yet: awaits torch {torch}" in err


def test_a_new_apex_release_branch_settles_after_its_review(
        mirrors: Path, data_copy: Path, tmp_path: Path) -> None:
    """A ``release/X.Y.0`` branch past master's version: a review naming its range (exit 1),
    which --write does not guess; the entry a maintainer writes after the review, with the
    newest version's recipe, settles (--write takes its pairs from upstream), then exit 0.
    Catches: a new branch going unnoticed, --write writing build flags, drift left after the
    maintainer's entry that --write could settle."""
    apex = _own_copy(mirrors, "ROCm/apex")
    master = Version(_git(apex, "show", "HEAD:version.txt"))
    new = f"{master.major}.{master.minor + 1}.0"
    text = (data_copy / "apex.toml").read_text()
    newest = max(load_matrix(data_copy).packages["apex"].versions, key=lambda v: Version(v.version))
    head = _commit(apex, f"refs/heads/{newest.ref}", {"version.txt": f"{new}\n"}, tmp_path / "index")
    _git(apex, "update-ref", f"refs/heads/release/{new}", head)

    code, lines, _ = _toolkit(data_copy, "upstream", str(mirrors))
    assert code == 1
    left = [x for x in lines if x.startswith(("drift:", "review:"))]
    assert len(left) == 1 and left[0].startswith(
        f"review: apex {new}: data none; upstream release/{new} @{head[:9]}"), lines
    assert f"..{head[:9]} setup.py op_builder" in left[0]
    code, lines, _ = _toolkit(data_copy, "upstream", str(mirrors), "--write")
    assert code == 1 and f'"{new}"' not in (data_copy / "apex.toml").read_text()

    # the maintainer's entry after reviewing the range: the newest entry with the new branch
    # head as the commit read (its pairs as they were: --write corrects them from upstream)
    block = text[text.rindex("[[versions]]"):]
    entry = re.sub(r"ROCm/apex@[0-9a-f]+ \(release/[0-9.]+\)", f"ROCm/apex@{head[:9]} (release/{new})",
                   block.replace(f'"{newest.version}"', f'"{new}"').replace(newest.ref, f"release/{new}"))
    (data_copy / "apex.toml").write_text(text.rstrip("\n") + "\n\n" + entry)
    code, lines, err = _toolkit(data_copy, "upstream", str(mirrors), "--write")
    assert code == 0, lines + [err]
    code, lines, err = _toolkit(data_copy, "upstream", str(mirrors))
    assert code == 0, lines + [err]
    forget_loaded()
    assert any(v.version == new for v in load_matrix(data_copy).packages["apex"].versions)
