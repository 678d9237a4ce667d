"""`invoke index` / `python -m toolkit index DIR` write ``<name>-<version>-variants.json``, the
same document the real ``variantlib generate-index-json`` writes for the folder (issue 31)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.fixtures.wheels import make_wheel
from toolkit.cli.main import main
from toolkit.run.variant_wheels import make_variant

pytest.importorskip("variantlib")
REPO = Path(__file__).resolve().parents[2]
VARIANTLIB = str(Path(sys.executable).parent / "variantlib")
JSON_NAME = "hip_sample-1.0+rocm6.4gitabcdef12-variants.json"


def _folder(tmp: Path) -> Path:
    src = make_wheel(tmp / "in", "hip_sample", "1.0+rocm6.4gitabcdef12",
                     "cp312-cp312-linux_x86_64", {"hip_sample/__init__.py": "x = 1\n"})
    dist = tmp / "dist" / "build-a"
    for target in ("gfx90a", "gfx908"):
        make_variant(src, dist, target)
    shutil.copy(src, dist / src.name)
    return tmp / "dist"


def _variantlibs(tmp: Path, dist: Path) -> str:
    theirs = tmp / "theirs"
    shutil.copytree(dist / "build-a", theirs)
    subprocess.run([VARIANTLIB, "generate-index-json", "-d", str(theirs)], check=True,
                   capture_output=True, timeout=120)
    return (theirs / JSON_NAME).read_text()


def test_python_m_toolkit_index(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dist = _folder(tmp_path)
    assert main(["index", "--strict", str(dist)]) == 0  # variant wheels are not "unlistable"
    err = capsys.readouterr().err
    assert "not listed" not in err
    assert (dist / "build-a" / JSON_NAME).read_text() == _variantlibs(tmp_path, dist)
    page = (dist / "index.html").read_text()
    assert "gfx90a.whl" not in page and "linux_x86_64.whl" in page  # pip's page: the fat wheel


def test_invoke_index(tmp_path: Path) -> None:
    dist = _folder(tmp_path)
    res = subprocess.run([sys.executable, "-m", "invoke", "--search-root", str(REPO), "index",
                          str(dist)], capture_output=True, text=True, timeout=120, check=False)
    assert res.returncode == 0, res.stderr
    assert (dist / "build-a" / JSON_NAME).read_text() == _variantlibs(tmp_path, dist)


def test_a_variant_without_variant_json_is_left_out_with_a_warning(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dist = _folder(tmp_path)
    bad = dist / "build-a" / "hip_sample-1.0+rocm6.4gitabcdef12-cp312-cp312-linux_x86_64-gfx1100.whl"
    with zipfile.ZipFile(bad, "w") as zf:
        zf.writestr("hip_sample-1.0+rocm6.4gitabcdef12.dist-info/RECORD", "")
    assert main(["index", str(dist)]) == 0
    assert "gfx1100.whl: its variant.json is missing" in capsys.readouterr().err
    doc = json.loads((dist / "build-a" / JSON_NAME).read_text())
    assert set(doc["variants"]) == {"gfx90a", "gfx908"}
    bad.unlink()
    assert (dist / "build-a" / JSON_NAME).read_text() == _variantlibs(tmp_path, dist)
