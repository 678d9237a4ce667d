"""Naming a wheel: the local label, and a normalised archive (same contents, same bytes)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from wheel.wheelfile import WheelFile

from toolkit.core.errors import UsageError
from toolkit.run.wheels import local_label, name_wheel, with_dirty, with_local

WHEEL_META = "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: false\nTag: cp311-cp311-linux_x86_64\n"


def build_wheel(folder: Path, *, reverse: bool, date: tuple[int, ...], mode: int) -> Path:
    """A wheel written by wheel's own WheelFile, members in either order, given times/modes."""
    folder.mkdir(parents=True)
    path = folder / "demo_pkg-1.0-cp311-cp311-linux_x86_64.whl"
    members = [("demo_pkg/__init__.py", b"X = 1\n", 0o644),
               ("demo_pkg/run.sh", b"#!/bin/sh\necho hi\n", mode),
               ("demo_pkg-1.0.dist-info/METADATA",
                b"Metadata-Version: 2.1\nName: demo-pkg\nVersion: 1.0\n", 0o644),
               ("demo_pkg-1.0.dist-info/WHEEL", WHEEL_META.encode(), 0o644)]
    with WheelFile(path, "w") as wf:
        for name, data, perm in (reversed(members) if reverse else members):
            zi = zipfile.ZipInfo(name, date_time=date)  # type: ignore[arg-type]
            zi.external_attr = (0o100000 | perm) << 16
            wf.writestr(zi, data)
    return path


def test_label() -> None:
    assert local_label("7.0", "8d873bb6" + "0" * 32) == "rocm7.0git8d873bb6"
    assert local_label("cpu", "abcdef12") == "cpugitabcdef12"
    with pytest.raises(UsageError, match="8-40 lowercase hex"):
        local_label("7.0", "not-a-sha")


def test_a_version_that_is_not_pep_440_is_named_in_the_refusal() -> None:
    """``packaging`` (PEP 440) reads ``1.0`` and ``1.0+old`` but not ``banana``: the local
    label replaces any earlier one, and a version it cannot read is quoted back."""
    assert with_local("1.0+old", "rocm7.0gitabcdef12") == "1.0+rocm7.0gitabcdef12"
    assert with_dirty("1.0+rocm7.0gitabcdef12") == "1.0+rocm7.0gitabcdef12.dirty"
    with pytest.raises(UsageError) as caught:
        with_local("banana", "rocm7.0gitabcdef12")
    assert caught.value.exit_code == 2
    assert str(caught.value).startswith("'banana' is not a valid PEP 440 version")
    with pytest.raises(UsageError) as caught:
        with_dirty("banana")
    assert str(caught.value).startswith("'banana': no valid PEP 440 version with a dirty label")


def test_same_contents_give_the_same_bytes(tmp_path: Path) -> None:
    a = build_wheel(tmp_path / "a", reverse=False, date=(2020, 1, 2, 3, 4, 6), mode=0o755)
    b = build_wheel(tmp_path / "b", reverse=True, date=(2024, 5, 6, 7, 8, 10), mode=0o775)
    assert hashlib.sha256(a.read_bytes()).digest() != hashlib.sha256(b.read_bytes()).digest()
    out_a = name_wheel(a.parent, tmp_path / "out-a", label="rocm7.0git8d873bb6", epoch=1700000000)
    out_b = name_wheel(b.parent, tmp_path / "out-b", label="rocm7.0git8d873bb6", epoch=1700000000)
    assert out_a.name == "demo_pkg-1.0+rocm7.0git8d873bb6-cp311-cp311-linux_x86_64.whl"
    assert out_a.read_bytes() == out_b.read_bytes()
    with zipfile.ZipFile(out_a) as zf:
        infos = zf.infolist()
        assert infos[-1].filename.endswith(".dist-info/RECORD")
        assert {i.date_time for i in infos} == {(2023, 11, 14, 22, 13, 20)}  # 1700000000 UTC
        modes = {i.filename: (i.external_attr >> 16) & 0o777 for i in infos}
        assert modes["demo_pkg/run.sh"] == 0o755 and modes["demo_pkg/__init__.py"] == 0o644
        meta = zf.read("demo_pkg-1.0+rocm7.0git8d873bb6.dist-info/METADATA").decode()
        assert "Version: 1.0+rocm7.0git8d873bb6" in meta


def test_record_is_valid_for_wheel_and_pip(tmp_path: Path) -> None:
    src = build_wheel(tmp_path / "a", reverse=False, date=(2020, 1, 2, 3, 4, 6), mode=0o755)
    out = name_wheel(src.parent, tmp_path / "out", label="cpugitabcdef12", epoch=None)
    with WheelFile(out) as wf:  # wheel's reader verifies every member against RECORD
        for name in wf.namelist():
            wf.read(name)
    target = tmp_path / "site"
    env = {**os.environ, "PIP_CONFIG_FILE": os.devnull, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index",
                           "--target", str(target), str(out)], capture_output=True, text=True,
                          env=env)
    assert proc.returncode == 0, proc.stderr
    assert (target / "demo_pkg" / "run.sh").stat().st_mode & 0o111


def test_tampered_member_is_caught_by_the_independent_reader(tmp_path: Path) -> None:
    src = build_wheel(tmp_path / "a", reverse=False, date=(2020, 1, 2, 3, 4, 6), mode=0o755)
    out = name_wheel(src.parent, tmp_path / "out", label="cpugitabcdef12")
    bad = tmp_path / "bad" / out.name
    bad.parent.mkdir()
    with zipfile.ZipFile(out) as zin, zipfile.ZipFile(bad, "w") as zout:
        for info in zin.infolist():
            data = zin.read(info)
            zout.writestr(info, b"X = 2\n" if info.filename == "demo_pkg/__init__.py" else data)
    with WheelFile(bad) as wf, pytest.raises(Exception, match="[Hh]ash"):
        wf.read("demo_pkg/__init__.py")
