"""A new upstream version, in a copy of the real repositories, through the real command
(``python -m toolkit upstream DIR`` and ``invoke upstream``) on a copy of the data.

Each test makes the new version with git in a mirror copy (``git clone --mirror --shared``:
the real mirror is never written): its number, its torch and its base are computed from what
the mirrors and the data hold today (the next minor after the newest), so a new upstream release
changes nothing here.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from packaging.version import Version

from toolkit.data.matrix import forget_loaded, load_matrix

_GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_CONFIG_NOSYSTEM": "1"}


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


# the unit tests that read the real data files: they must pass on the data `--write` made
DATA_READERS = ("test_matrix.py", "test_channels.py", "test_known_failures_real.py",
                "test_ci_matrix.py", "test_ci_families.py", "test_data_schema.py",
                "test_data_loaded_as_written.py", "test_multi_arch.py", "test_known_failures.py")


def test_a_new_therock_release_is_written_whole_and_the_tests_still_pass(
        mirrors: Path, data_copy: Path, tmp_path: Path) -> None:
    """A copy of TheRock's history gains the next version on main, its release branch and its
    tag (``therock-X.Y``): `upstream` reports it (exit 1), `--write` settles it (the release
    with its torch, channels and era, then the package versions TheRock builds there), then
    exit 0; its builds plan, and the unit tests that read the data pass on the written data.
    Catches: a release read only on main, a new tag unnoticed, a written table the loader
    refuses, a cascade --write leaves for another run, tests that enumerate releases."""
    rock = _own_copy(mirrors, "ROCm/TheRock")
    head = _git(rock, "rev-parse", "HEAD")
    now = Version(json.loads(_git(rock, "show", "HEAD:version.json"))["rocm-version"])
    new = f"{now.major}.{now.minor + 1}"
    assert new not in load_matrix(data_copy).rocm
    version_json = json.dumps({"rocm-version": f"{new}.0"}, indent=2) + "\n"
    cut = _commit(rock, head, {"version.json": version_json}, tmp_path / "index")
    branch = _git(rock, "symbolic-ref", "HEAD")
    _git(rock, "update-ref", branch, cut)
    _git(rock, "update-ref", f"refs/heads/release/therock-{new}", cut)
    _git(rock, "tag", f"therock-{new}", cut)

    code, lines, _ = _toolkit(data_copy, "upstream", str(mirrors))
    assert code == 1
    assert any(x.startswith(f"drift: new ROCm release {new}:") for x in lines), lines

    code, lines, err = _toolkit(data_copy, "upstream", str(mirrors), "--write")
    assert code == 0, lines + [err]
    code, lines, err = _toolkit(data_copy, "upstream", str(mirrors))
    assert code == 0, lines + [err]

    forget_loaded()
    rel = load_matrix(data_copy).rocm[new]
    assert rel.line is not None
    assert (rel.line.status, rel.line.ref) == ("released", f"therock-{new}")
    # the torch it builds: what the matrix script at the tag (main's, unchanged) lists
    script = _git(rock, "show", f"{cut}:build_tools/github_actions/configure_pytorch_release_matrix.py")
    stated = re.search(r'RELEASE_STABLE_PYTORCH_REFS\s*=\s*\{[^}]*?"linux":\s*\[([^\]]*)\]', script)
    assert stated is not None
    assert sorted(rel.torch, key=Version) == re.findall(r'"release/([0-9.]+)"', stated.group(1))
    assert rel.sdk.default_channel == "stable"
    apex_here = [v for v in load_matrix(data_copy).packages["apex"].versions if new in v.rocm]
    assert apex_here, "TheRock builds apex with the torch of its new release: --write paired it"
    build = f"apex-{apex_here[-1].version}-cp312-rocm{new}"
    code, out, err = _toolkit(data_copy, "plan", build)
    assert code == 0, err
    assert f"ROCm {new} SDK from TheRock's stable channel" in "\n".join(out)

    unit = Path(__file__).parents[1] / "unit"
    res = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          *(str(unit / name) for name in DATA_READERS)],
                         capture_output=True, text=True, cwd=Path(__file__).parents[2],
                         env={**os.environ, "TOOLKIT_DATA_DIR": str(data_copy)}, check=False)
    assert res.returncode == 0, res.stdout[-3000:]
