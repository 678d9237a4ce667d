"""`python -m toolkit upstream DIR` against the real repositories (all four, as
``OWNER+NAME/repo``): the data carries no drift, and a mirror copy that lacks one apex release
branch, or data that lacks one version, is reported naming that version."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from packaging.version import Version

from tests.upstream.conftest import Upstream
from toolkit.cli.main import main
from toolkit.data.matrix import load_matrix


def _copy_refs(src: Path, dest: Path) -> Path:
    """A bare repository sharing ``src``'s objects (alternates) with its own copy of the refs."""
    subprocess.run(["git", "init", "--quiet", "--bare", str(dest)], check=True)
    (dest / "objects" / "info" / "alternates").write_text(f"{(src / 'objects').resolve()}\n")
    for name in ("packed-refs", "HEAD"):
        if (src / name).exists():
            shutil.copy(src / name, dest / name)
    shutil.rmtree(dest / "refs")
    shutil.copytree(src / "refs", dest / "refs")
    return dest


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(["upstream", *argv])
    out = capsys.readouterr()
    return code, out.out + out.err


def test_the_data_carries_no_drift(mirrors: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _run(capsys, str(mirrors))
    assert code == 0, out
    assert not [line for line in out.splitlines() if line.startswith(("drift:", "review:"))]


def test_a_deleted_release_branch_is_drift_naming_its_version(
    mirrors: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    apex = mirrors / "ROCm+apex" / "repo"
    real = apex.resolve()
    apex.unlink()
    _copy_refs(real, apex)
    newest = max((v for v in load_matrix().packages["apex"].versions),
                 key=lambda v: Version(v.version))
    subprocess.run(["git", "--git-dir", str(apex), "update-ref", "-d",
                    f"refs/heads/{newest.ref}"], check=True)
    code, out = _run(capsys, str(mirrors))
    assert code == 1, out
    lines = [line for line in out.splitlines() if line.startswith("drift:")]
    assert lines == [f"drift: apex {newest.version}: data {newest.ref}; upstream no such branch "
                     "[ROCm/apex refs/heads/release/*]; needs a recipe review: the data names a "
                     "branch upstream lacks"], out


def test_a_version_the_data_lacks_needs_a_recipe_review_with_its_range(
    mirrors: Path, data_copy: Path, monkeypatch: pytest.MonkeyPatch,
    upstream: dict[str, Upstream], capsys: pytest.CaptureFixture[str]
) -> None:
    """Drop the newest apex version from a data copy: the command names it, the torch pair and
    the commit range to review, and --write does not guess its build flags."""
    text = (data_copy / "apex.toml").read_text()
    start = text.rindex("[[versions]]")
    dropped = re.search(r'version = "([0-9.]+)"', text[start:])
    assert dropped
    (data_copy / "apex.toml").write_text(text[:start])
    # a known failure of the dropped version would select nothing (a data error): not this
    # test's subject
    (data_copy / "known_failures.toml").write_text("[failures]\n")
    monkeypatch.setenv("TOOLKIT_DATA_DIR", str(data_copy))
    version = dropped.group(1)
    head = upstream["apex"].commit(f"release/{version}")
    code, out = _run(capsys, str(mirrors), "--write")
    assert code == 1, out
    line = next(x for x in out.splitlines() if x.startswith(f"review: apex {version}: data none"))
    assert f"..{head[:9]} setup.py op_builder" in line
    assert f'version = "{version}"' not in (data_copy / "apex.toml").read_text()
