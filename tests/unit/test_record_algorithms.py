"""Issue 29, classes 2 and 3: RECORD's hash algorithm is one the wheel spec allows.

The binary distribution format spec: "The hash algorithm must be sha256 or better;
specifically, md5 and sha1 are not permitted". A RECORD hashed otherwise (md5, sha1, sha224,
or shake_128, whose digest has no fixed length: a traceback before) is one error line naming
the algorithm and the allowed ones, from the real CLI; ``index`` leaves that wheel out with a
warning and lists the others. RECORDs are written here with hashlib's real digests.
"""

from __future__ import annotations

import base64
import hashlib
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.fixtures.wheels import make_wheel

ROOT = Path(__file__).resolve().parents[2]
TAG = "py3-none-any"
# the spec's "sha256 or better" among hashlib.algorithms_guaranteed: 256-bit digests or more
ALLOWED = "blake2b, blake2s, sha256, sha384, sha3_256, sha3_384, sha3_512, sha512"


def _digest(algo: str, data: bytes) -> str:
    h = hashlib.new(algo, data)
    raw = h.digest(16) if algo.startswith("shake_") else h.digest()  # type: ignore[call-arg]
    return f"{algo}=" + base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def rehash(whl: Path, algo: str) -> Path:
    """Rewrite the wheel's RECORD with every member hashed (correctly) in ``algo``."""
    with zipfile.ZipFile(whl) as zf:
        members = {i.filename: zf.read(i) for i in zf.infolist()}
    record = next(n for n in members if n.endswith(".dist-info/RECORD"))
    lines = [f"{n},{_digest(algo, d)},{len(d)}" for n, d in members.items() if n != record]
    members[record] = ("\n".join([*lines, f"{record},,"]) + "\n").encode()
    with zipfile.ZipFile(whl, "w", zipfile.ZIP_DEFLATED) as zf:
        for n, d in members.items():
            zf.writestr(n, d)
    return whl


def toolkit(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "toolkit", *args], capture_output=True, text=True,
                          env=env, timeout=120, check=False)


def wheel(folder: Path, name: str, algo: str) -> Path:
    return rehash(make_wheel(folder, name, "1.0", TAG, {f"{name}/__init__.py": "x = 1\n"}), algo)


@pytest.mark.parametrize("algo", ["md5", "sha1", "sha224", "shake_128"])
def test_check_names_a_hash_algorithm_the_spec_forbids_in_one_line(algo: str, tmp_path: Path) -> None:
    whl = wheel(tmp_path, "weak", algo)
    out = toolkit("check", str(whl))
    text = out.stdout + out.stderr
    assert out.returncode == 1, text
    assert "Traceback" not in text
    errors = [ln.strip() for ln in out.stdout.splitlines() if ln.strip().startswith("error ")]
    # 4 members (the package, METADATA, WHEEL; RECORD itself unhashed): one line for all
    assert errors == [f"error [record] RECORD hashes 3 members with '{algo}' (the wheel spec allows "
                      f"sha256 or stronger: {ALLOWED}), e.g. weak-1.0.dist-info/METADATA"], text


@pytest.mark.parametrize("algo", ["sha256", "sha512", "blake2b", "sha3_256"])
def test_check_accepts_sha256_or_stronger(algo: str, tmp_path: Path) -> None:
    out = toolkit("check", str(wheel(tmp_path, "strong", algo)))
    assert out.returncode == 0, out.stdout + out.stderr
    assert "[record]" not in out.stdout


def test_a_wrong_digest_in_an_allowed_algorithm_is_still_named(tmp_path: Path) -> None:
    whl = wheel(tmp_path, "bad", "sha512")
    with zipfile.ZipFile(whl) as zf:
        members = {i.filename: zf.read(i) for i in zf.infolist()}
    members["bad/__init__.py"] = b"x = 2\n"  # same size, other content
    with zipfile.ZipFile(whl, "w", zipfile.ZIP_DEFLATED) as zf:
        for n, d in members.items():
            zf.writestr(n, d)
    out = toolkit("check", str(whl))
    assert out.returncode == 1
    assert f"bad/__init__.py: RECORD says {_digest('sha512', b'x = 1' + bytes([10]))}, its content " \
           f"hashes to {_digest('sha512', b'x = 2' + bytes([10]))}" in out.stdout


def test_index_leaves_out_the_wheels_with_a_forbidden_algorithm_and_lists_the_rest(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    good = wheel(dist, "good", "sha256")
    strong = wheel(dist, "strong", "sha384")
    for algo in ("shake_128", "md5", "sha1"):
        wheel(dist, f"weak_{algo}", algo)
    out = toolkit("index", str(dist))
    text = out.stdout + out.stderr
    assert out.returncode == 0, text
    assert "Traceback" not in text
    warnings = [ln for ln in out.stderr.splitlines() if "weak_" in ln]
    assert len(warnings) == 3, text
    for algo in ("shake_128", "md5", "sha1"):
        assert any(f"weak_{algo}-1.0-{TAG}.whl" in w and f"with '{algo}' (the wheel spec allows sha256 or "
                   f"stronger: {ALLOWED})" in w for w in warnings), text
    page = (dist / "index.html").read_text()
    # the page lists exactly the good wheels, by their sha256 (pip verifies it)
    hrefs = sorted(part.split('"')[0] for part in page.split('href="')[1:])
    want = [f"{w.name}#sha256={hashlib.sha256(w.read_bytes()).hexdigest()}" for w in (good, strong)]
    assert hrefs == sorted(want)
    assert "2 wheels" in text
