"""Integrity (RECORD, size budget), fail-closed GPU gate, gfx ids, redundant variants (issue 11)."""

from __future__ import annotations

import base64
import hashlib
import os
import zipfile
from pathlib import Path

import pytest

from tests.fixtures.native import system_lib
from tests.fixtures.wheels import make_wheel
from tests.unit.test_checks_wheel import _lie_about_size
from toolkit.cli.commands.check import expand_targets
from toolkit.cli.main import main
from toolkit.inspect.checks import check_paths
from toolkit.inspect.readers.wheelzip import Budget
from toolkit.inspect.report import Report

TAG = "cp311-cp311-manylinux_2_28_x86_64"


@pytest.fixture(scope="module")
def libz() -> Path:
    return system_lib("libz.so.1")


def _by(report: Report, check: str) -> list[str]:
    return [f.message for f in report.findings if f.check == check and f.severity == "error"]


def _b64(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def _rewrite_record(whl: Path, edit: dict[str, str | None]) -> None:
    """Rewrite RECORD lines: path -> new line (None drops it)."""
    with zipfile.ZipFile(whl) as zf:
        items = [(i, zf.read(i)) for i in zf.infolist()]
    with zipfile.ZipFile(whl, "w", zipfile.ZIP_DEFLATED) as zf:
        for info, data in items:
            if info.filename.endswith(".dist-info/RECORD"):
                out = []
                for line in data.decode().splitlines():
                    path = line.split(",")[0]
                    if path in edit:
                        if edit[path] is not None:
                            out.append(str(edit[path]))
                    else:
                        out.append(line)
                data = ("\n".join(out) + "\n").encode()
            zf.writestr(info, data)


def test_record_hashes_and_sizes_are_verified(
    tmp_path: Path, libz: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = make_wheel(tmp_path / "g", "demo", "1.0", TAG, {"demo/_ext.so": libz, "demo/x.py": "x = 1\n"})
    assert check_paths([good]).ok
    bad = make_wheel(tmp_path / "b", "demo", "1.0", TAG, {"demo/_ext.so": libz, "demo/x.py": "x = 1\n"})
    wrong = _b64(b"x = 2\n")
    assert wrong != _b64(b"x = 1\n")
    _rewrite_record(bad, {"demo/x.py": f"demo/x.py,{wrong},6"})
    assert main(["check", str(bad)]) == 1
    assert "[record]" in capsys.readouterr().out
    (msg,) = _by(check_paths([bad]), "record")
    assert f"RECORD says {wrong}, its content hashes to {_b64(b'x = 1' + chr(10).encode())}" in msg
    _rewrite_record(bad, {"demo/x.py": f"demo/x.py,{_b64(b'x = 1' + chr(10).encode())},99"})
    assert "RECORD says 99 bytes, the member has 6" in _by(check_paths([bad]), "record")[0]
    _rewrite_record(bad, {"demo/x.py": None})
    assert _by(check_paths([bad]), "record") == ["demo/x.py is not listed in RECORD"]
    with zipfile.ZipFile(good, "a") as zf:
        zf.writestr("demo/extra.py", "y = 1\n")
    assert _by(check_paths([good]), "record") == ["demo/extra.py is not listed in RECORD"]


def test_record_listing_a_missing_file(tmp_path: Path) -> None:
    whl = make_wheel(tmp_path, "demo", "1.0", "py3-none-any", {"demo/x.py": ""})
    _rewrite_record(whl, {"demo/x.py": f"demo/x.py,{_b64(b'')},0\ndemo/gone.py,{_b64(b'')},0"})
    assert _by(check_paths([whl]), "record") == ["RECORD lists demo/gone.py, which the wheel lacks"]


def test_budget_refuses_a_bomb_before_inflating(tmp_path: Path, libz: Path) -> None:
    big = os.urandom(4 << 20)  # about 4 MiB compressed
    whl = make_wheel(tmp_path, "demo", "1.0", TAG, {"demo/big.bin": big, "demo/_ext.so": libz})
    # 4 GB declared, about 1020:1: the ratio budget refuses it without inflating a byte
    _lie_about_size(whl, "demo/big.bin", (4 << 30) - 1)
    r = check_paths([whl])
    (msg,) = [f.message for f in r.findings if f.library == "demo/big.bin" and f.check == "archive"]
    assert "over the 200:1 limit" in msg and "not inspected" in msg
    assert "over the 5:1 limit" in [f.message for f in check_paths(
        [whl], budget=Budget(ratio=5)).findings if f.library == "demo/big.bin"][0]
    r = check_paths([whl], budget=Budget(member_bytes=1 << 20, ratio=10_000))
    assert any("over the 1 MiB limit (--max-member-size)" in f.message for f in r.findings)
    assert main(["check", str(whl), "--max-member-size", "1M", "--max-ratio", "10000"]) == 1
    with pytest.raises(SystemExit) as bad:  # argparse: one line, exit 2
        main(["check", str(whl), "--max-member-size", "lots"])
    assert bad.value.code == 2


def test_gfx_gate_fails_closed_without_gpu_code(
    tmp_path: Path, libz: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    whl = make_wheel(tmp_path, "demo", "1.0", TAG, {"demo/_ext.so": libz})
    assert main(["check", str(whl)]) == 0
    capsys.readouterr()
    assert main(["check", str(whl), "--gfx", "gfx942,gfx90a"]) == 1
    out = capsys.readouterr().out
    assert "no GPU code for gfx942 in this wheel" in out and "no GPU code for gfx90a" in out
    r = check_paths([make_wheel(tmp_path / "p", "p", "1.0", "py3-none-any", {"p/x.py": ""})],
                    targets=expand_targets(["gfx942"]))  # fmt: skip
    assert ["no GPU code for gfx942" in m for m in _by(r, "gpu-targets")] == [True]


def test_any_well_formed_gfx_id_is_accepted(
    tmp_path: Path, libz: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    warnings: list[str] = []
    assert [str(t) for t in expand_targets(["gfx1251"], warnings)] == ["gfx1251"] and warnings == []
    # ROCm/TheRock@89553ce37 cmake/therock_amdgpu_targets.cmake: gfx125X-dcgpu is gfx1250 alone
    assert [str(t) for t in expand_targets(["gfx125X-dcgpu"])] == ["gfx1250"]
    assert expand_targets(["gfx1999"], warnings) and "gfx1999 belongs to no GPU family" in warnings[0]
    # where the families are written (that file is the toolkit's), and that the id is still used
    assert "the toolkit knows (toolkit/data/gpus.toml); " in warnings[0]
    assert (Path(__file__).resolve().parents[2] / "toolkit" / "data" / "gpus.toml").is_file()
    assert warnings[0].endswith("; checked as given")
    whl = make_wheel(tmp_path, "demo", "1.0", TAG, {"demo/_ext.so": libz})
    assert main(["check", str(whl), "--gfx", "gfx1251"]) == 1  # judged (no GPU code), not refused
    assert main(["check", str(whl), "--gfx", "gfx1999"]) == 1
    assert "warning: gfx1999 belongs to no GPU family" in capsys.readouterr().err
    assert main(["check", str(whl), "--gfx", "sm_90"]) == 2


def test_torchao_shaped_redundant_variants(tmp_path: Path) -> None:
    files = {"torchao/__init__.py": "VERSION = '0.7.0'\n", "torchao/ops.py": "def f(): pass\n"}
    rocm = make_wheel(tmp_path / "r", "torchao", "0.7.0+rocm", "py3-none-any", files)
    xpu = make_wheel(tmp_path / "x", "torchao", "0.7.0+xpu", "py3-none-any", files)
    plain = make_wheel(tmp_path / "p", "torchao", "0.7.0", "py3-none-any", files)
    r = check_paths([rocm])
    assert r.ok and [f.check for f in r.findings] == ["redundant-variant"]
    assert "labelled +rocm but carries no native or GPU code" in r.findings[0].message
    assert check_paths([plain]).findings == []
    both = check_paths([rocm, xpu, plain])
    for w in both.wheels:
        (same,) = [f.message for f in w.findings if f.check == "identical"]
        assert "identical to" in same
    changed = {**files, "torchao/ops.py": "x"}
    other = make_wheel(tmp_path / "o", "torchao", "0.7.0+cpu", "py3-none-any", changed)
    assert not [f for w in check_paths([rocm, other]).wheels for f in w.findings if f.check == "identical"]
