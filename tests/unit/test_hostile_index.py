"""``index`` judges wheels as ``check``'s integrity rules do (issue 20): seven wheels that
``check`` refuses, all under one file name, are never listed; ``--strict`` refuses the run;
two different wheels under one file name are refused."""

from __future__ import annotations

import os
import stat
import warnings
import zipfile
from pathlib import Path

import pytest

from tests.fixtures.wheels import make_wheel
from tests.unit.test_checks_integrity import _b64, _rewrite_record
from tests.unit.test_checks_wheel import _lie_about_size
from toolkit.cli.main import main
from toolkit.core.errors import UsageError
from toolkit.inspect.checks import check_paths
from toolkit.run.findlinks import make_index, scan

NAME = "demo-1.0-py3-none-any.whl"
OK = {"demo/__init__.py": "x = 1\n"}


def _add_raw(whl: Path, name: str, data: bytes, *, mode: int | None = None) -> None:
    """Append a member as is (no RECORD line): duplicates and symlinks need raw zip."""
    info = zipfile.ZipInfo(name, (2020, 1, 1, 0, 0, 0))
    if mode is not None:
        info.external_attr = mode << 16
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Duplicate name": the point of the test
        with zipfile.ZipFile(whl, "a") as zf:
            zf.writestr(info, data)


def hostile(root: Path) -> dict[str, Path]:
    """Seven wheels named ``NAME``, each one thing ``check`` refuses, in its own folder."""
    out: dict[str, Path] = {}
    out["dotdot"] = make_wheel(root / "dotdot", "demo", "1.0", "py3-none-any",
                               {**OK, "../evil.py": "x\n"})
    out["absolute"] = make_wheel(root / "absolute", "demo", "1.0", "py3-none-any",
                                 {**OK, "/etc/evil.py": "x\n"})
    bomb = make_wheel(root / "bomb", "demo", "1.0", "py3-none-any",
                      {**OK, "demo/big.bin": os.urandom(1 << 20)})
    _lie_about_size(bomb, "demo/big.bin", (4 << 30) - 1)
    out["bomb"] = bomb
    dup = make_wheel(root / "duplicate", "demo", "1.0", "py3-none-any", OK)
    _add_raw(dup, "demo/__init__.py", b"import os; os.system('evil')\n")
    out["duplicate"] = dup
    liar = make_wheel(root / "record", "demo", "1.0", "py3-none-any", OK)
    _rewrite_record(liar, {"demo/__init__.py": f"demo/__init__.py,{_b64(b'other')},5"})
    out["record"] = liar
    link = make_wheel(root / "symlink", "demo", "1.0", "py3-none-any", OK)
    _add_raw(link, "demo/passwd", b"/etc/passwd", mode=stat.S_IFLNK | 0o777)
    out["symlink"] = link
    out["random-so"] = make_wheel(root / "random-so", "demo", "1.0", "py3-none-any",
                                  {**OK, "demo/_ext.so": os.urandom(4096)})
    return out


@pytest.mark.parametrize("kind", ["dotdot", "absolute", "bomb", "duplicate", "record",
                                  "symlink", "random-so"])
def test_check_refuses_each_hostile_wheel(tmp_path: Path, kind: str) -> None:
    """The independent truth for the index: ``check`` itself fails each of them."""
    whl = hostile(tmp_path)[kind]
    assert not check_paths([whl]).ok, kind


def test_index_lists_none_of_them_and_warns_once_each(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dist = tmp_path / "dist"
    bad = hostile(dist)
    good = make_wheel(dist / "good", "other", "1.0", "py3-none-any", {"other/__init__.py": ""})
    found = scan(dist)
    assert [lk.href for lk in found.links] == [good.relative_to(dist).as_posix()]
    skipped = {s.path.split("/")[0]: s.reason for s in found.skipped}
    assert set(skipped) == set(bad)
    assert all("integrity" in why or "corrupt" in why for why in skipped.values()), skipped
    assert main(["index", str(dist)]) == 0
    err = capsys.readouterr().err
    assert len([ln for ln in err.splitlines() if "not listed" in ln]) == 7
    page = (dist / "index.html").read_text()
    assert NAME not in page and good.name in page


def test_index_strict_refuses_them(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dist = tmp_path / "dist"
    hostile(dist)
    assert main(["index", str(dist), "--strict"]) == 2
    assert "cannot be listed" in capsys.readouterr().err
    assert not (dist / "index.html").exists()


def test_two_different_wheels_under_one_name_are_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dist = tmp_path / "dist"
    a = make_wheel(dist / "a", "demo", "1.0", "py3-none-any", OK)
    b = make_wheel(dist / "b", "demo", "1.0", "py3-none-any", {"demo/__init__.py": "x = 2\n"})
    assert a.name == b.name and a.read_bytes() != b.read_bytes()
    with pytest.raises(UsageError, match="2 different wheels named demo-1.0-py3-none-any.whl"):
        make_index(dist)
    assert main(["index", str(dist)]) == 2
    assert "a/demo-1.0-py3-none-any.whl, b/demo-1.0-py3-none-any.whl" in capsys.readouterr().err
    assert not (dist / "index.html").exists()
    # the same wheel twice (a copy) is no clash
    b.write_bytes(a.read_bytes())
    assert len(make_index(dist).scan.links) == 2
