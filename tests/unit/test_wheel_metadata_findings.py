"""The metadata rule against the wheel specification (PEP 427 / the binary distribution
format): the file name, the one ``.dist-info`` folder, METADATA's Name and Version (PEP 440,
compared as versions, names as PEP 503 normalised names) and WHEEL's Tag lines. Each case
is one inconsistency and the exact line a user reads for it."""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.wheels import make_wheel
from toolkit.inspect.readers.wheelzip import Budget, WheelZip
from toolkit.inspect.report import WheelResult
from toolkit.inspect.rules.metadata import check_metadata

TAG = "py3-none-any"


def _findings(whl: Path) -> tuple[WheelResult, list[tuple[str, str, str | None, str]]]:
    res = WheelResult(str(whl))
    with WheelZip.open(whl, Budget()) as wz:
        check_metadata(res, wz)
    return res, [(f.check, f.severity, f.library, f.message) for f in res.findings]


def test_a_consistent_wheel_has_no_metadata_findings(tmp_path: Path) -> None:
    whl = make_wheel(tmp_path, "Demo.Pkg", "1.0", TAG, {"demo/__init__.py": ""},
                     metadata_name="demo_pkg", metadata_version="1.0.0",
                     requires=["Torch>=2.0", "numpy ; python_version>'3'", "not a requirement!"])
    res, found = _findings(whl)
    assert found == []
    assert (res.name, res.version, res.tags) == ("demo-pkg", "1.0", ["py3-none-any"])
    assert res.requires == ["numpy", "torch"]  # canonical, sorted, the unparsable line left out


@pytest.mark.parametrize(("kw", "message"), [
    ({"metadata_version": ""}, "METADATA has no Version"),
    ({"metadata_version": "1.0-beta-x"}, "METADATA Version '1.0-beta-x' is not valid PEP 440"),
    ({"metadata_version": "1.1"}, "METADATA Version 1.1 does not match the file name (1.0)"),
    ({"metadata_name": ""}, "METADATA Name '' does not match the file name (demo)"),
    ({"metadata_name": "other"}, "METADATA Name 'other' does not match the file name (demo)"),
    ({"wheel_tags": ["py2-none-any"]},
     "WHEEL Tag lines ['py2-none-any'] do not match the file name tags ['py3-none-any']"),
])
def test_one_inconsistency_one_error(tmp_path: Path, kw: dict[str, Any], message: str) -> None:
    whl = make_wheel(tmp_path, "demo", "1.0", TAG, {"demo/__init__.py": ""}, **kw)
    assert _findings(whl)[1] == [("metadata", "error", None, message)]


def _rewrite(whl: Path, drop: str = "", rename: tuple[str, str] = ("", "")) -> Path:
    out = whl.with_name("x-" + whl.name)
    with zipfile.ZipFile(whl) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            if drop and info.filename.endswith(drop):
                continue
            name = info.filename.replace(*rename) if rename[0] else info.filename
            dst.writestr(name, src.read(info))
    final = whl.parent / "out" / whl.name
    final.parent.mkdir(exist_ok=True)
    out.rename(final)
    return final


@pytest.mark.parametrize(("what", "message"), [
    ("METADATA", "the wheel has no METADATA file"),
    ("WHEEL", "the wheel has no WHEEL file"),
])
def test_a_missing_metadata_file_is_named(tmp_path: Path, what: str, message: str) -> None:
    whl = _rewrite(make_wheel(tmp_path, "demo", "1.0", TAG, {"demo/__init__.py": ""}),
                   drop=f".dist-info/{what}")
    assert _findings(whl)[1] == [("metadata", "error", None, message)]


def test_a_dist_info_folder_of_another_project_or_version(tmp_path: Path) -> None:
    whl = _rewrite(make_wheel(tmp_path, "demo", "1.0", TAG, {"demo/__init__.py": ""}),
                   rename=("demo-1.0.dist-info", "demo-2.0.dist-info"))
    assert _findings(whl)[1] == [
        ("metadata", "error", None, "demo-2.0.dist-info does not match the file name (demo 1.0)")]


def test_no_dist_info_folder_or_a_bad_file_name_stops_the_rule(tmp_path: Path) -> None:
    whl = _rewrite(make_wheel(tmp_path, "demo", "1.0", TAG, {"demo/__init__.py": ""}),
                   rename=(".dist-info/", ".info/"))
    assert _findings(whl)[1] == [
        ("metadata", "error", None, "expected exactly one .dist-info folder, found none")]
    bad = make_wheel(tmp_path / "b", "demo", "1.0", TAG, {}, filename="demo.whl")
    res, found = _findings(bad)
    assert len(found) == 1 and found[0][3].startswith("bad wheel file name 'demo.whl': ")
    assert res.name is None and res.tags == []
