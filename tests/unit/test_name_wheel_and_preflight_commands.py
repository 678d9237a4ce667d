"""`python -m toolkit name-wheel` and `python -m toolkit preflight hip-match`, in process.

name-wheel prints the final path of the one wheel of a folder, named with the README's local
label ``+rocm<r>git<sha8>`` (``--naming toolkit``, the default) or as built (``--naming
upstream``); a commit that is no hex is bad input (exit 2). preflight runs the real hipcc
(Debian's, ROCm 5.2) and a real Python whose ``torch`` is a double on PYTHONPATH carrying
``torch.version.hip``: equal major.minor prints "hipcc and torch agree: HIP X.Y" (exit 0),
else one line naming both (exit 4, README "## Exit codes": environment problem)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from tests.unit.test_renamed_wheels_and_variant_indexes import a_wheel
from toolkit.cli.main import main

SHA = "8d873bb6c0ffee0123456789abcdef0123456789"


def test_the_wheel_gets_the_local_label_and_its_path_is_printed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a_wheel(tmp_path / "house")
    dest = tmp_path / "dist" / "b"
    assert main(["name-wheel", str(tmp_path / "house"), "--rocm", "7.0", "--sha", SHA,
                 "--dest", str(dest)]) == 0
    final = dest / "demo_pkg-1.8.0+rocm7.0git8d873bb6-py3-none-any.whl"
    assert capsys.readouterr().out == f"{final}\n"
    assert final.is_file()


def test_upstream_naming_keeps_the_built_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a_wheel(tmp_path / "house")
    dest = tmp_path / "dist"
    assert main(["name-wheel", str(tmp_path / "house"), "--rocm", "7.0", "--sha", SHA,
                 "--naming", "upstream", "--dest", str(dest)]) == 0
    assert capsys.readouterr().out == f"{dest / 'demo_pkg-1.8.0-py3-none-any.whl'}\n"


def test_a_commit_that_is_no_hex_is_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a_wheel(tmp_path / "house")
    assert main(["name-wheel", str(tmp_path / "house"), "--rocm", "7.0", "--sha", "main",
                 "--dest", str(tmp_path / "d")]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("error: bad source commit 'main'")


@pytest.mark.parametrize(("hip", "code"), [("5.2.21153-0", 0), ("6.4.43482", 4), (None, 4)])
def test_hip_match_compares_hipcc_with_torch(hip: str | None, code: int, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    hipcc = shutil.which("hipcc")
    if hipcc is None:
        pytest.skip("no hipcc on PATH")
    torch = tmp_path / "torch"
    torch.mkdir()
    (torch / "__init__.py").write_text(f"__version__ = '2.8.0'\nclass version:\n    hip = {hip!r}\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    assert main(["preflight", "hip-match", "--hipcc", hipcc, "--python", sys.executable]) == code
    out, err = capsys.readouterr()
    if code == 0:
        assert out == "hipcc and torch agree: HIP 5.2\n" and err == ""
        return
    assert out == ""
    (line,) = err.splitlines()
    if hip is None:
        assert line == (f"error: torch in {sys.executable} is not a ROCm build (torch.version.hip "
                        "is None); hipcc is HIP 5.2: install the ROCm torch of this session")
    else:
        assert line.startswith("error: hipcc is HIP 5.2 but torch was built with HIP 6.4; ")
