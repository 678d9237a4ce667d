"""`nox -s lock-...` with pip-compile against the local index; installs honour the lock."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.doubles.fixtures import REPO, local_index, sandbox, toolkit, uv_cache  # noqa: F401

pytestmark = pytest.mark.integration


def nox(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "nox", "-f", str(REPO / "noxfile.py"), *args],
                          capture_output=True, text=True, env={**os.environ, **env},
                          cwd=env["WORK"], timeout=900, check=False)


def test_lock_write_use_and_stale(sandbox: dict[str, str]) -> None:  # noqa: F811
    work = Path(sandbox["WORK"])
    proc = nox(sandbox, "-s", "lock-3.12-rocm7.0", "--", "--workdir", str(work))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lock = work / "locks" / "3.12-rocm7.0.txt"
    text = lock.read_text()
    assert "# toolkit-lock-inputs: " in text
    # the indexes are recorded for people in the header; installs pass them on the command
    # line, never from the file (a masked credential there would be sent as "***")
    assert "# sdk: rocm[libraries,devel]" in text and " from http://127.0.0.1:" in text
    assert not [ln for ln in text.splitlines() if ln.startswith(("--index-url", "--find-links"))]
    assert "rocm-sdk-libraries-gfx94x-dcgpu==7.0.0a20260101" in text
    assert "torch==2.8.0+rocm7.0" in text and "--hash=sha256:" in text

    # installs use the lock (hashes required)
    dry = toolkit("provision", "sample-1.0.0-cp312-rocm7.0", "--workdir", str(work), "--dry-run",
                  env=sandbox)
    assert "--require-hashes" in dry.stdout and str(lock) in dry.stdout
    ok = toolkit("provision", "sample-1.0.0-cp312-rocm7.0", "--workdir", str(work), env=sandbox)
    assert ok.returncode == 0, ok.stderr

    # a tampered hash is refused by the installer; nothing is marked ready
    lines = text.splitlines()
    idx = next(i for i, ln in enumerate(lines) if "--hash=sha256:" in ln)
    lines[idx] = lines[idx].split("sha256:")[0] + "sha256:" + "0" * 64
    lock.write_text("\n".join(lines) + "\n")
    bad = toolkit("provision", "sample-1.0.0-cp312-rocm7.0", "--workdir", str(work), env=sandbox)
    assert bad.returncode != 0
    assert not (Path(sandbox["TOOLKIT_CACHE_DIR"]) / "envs/3.12-rocm7.0-torch2.8/.toolkit-env.json").exists()
    lock.write_text(text)

    # options changed since the lock was written: reported as stale, --no-lock opts out
    check = nox(sandbox, "-s", "lock-3.12-rocm7.0", "--", "--workdir", str(work), "--check",
                "--gfx", "gfx90a")
    assert check.returncode != 0 and f"stale     {lock}" in check.stdout
    stale = toolkit("provision", "sample-1.0.0-cp312-rocm7.0", "--workdir", str(work),
                    "--gfx", "gfx90a", env=sandbox)
    assert stale.returncode == 2 and "is stale" in stale.stderr
    ok2 = toolkit("provision", "sample-1.0.0-cp312-rocm7.0", "--workdir", str(work),
                  "--gfx", "gfx90a", "--no-lock", env=sandbox)
    assert ok2.returncode == 0, ok2.stderr

    # a symlink where the lock goes is refused in one line before pip-compile runs; its
    # target is never written (issue 29: outputs are never written through a symlink)
    precious = work / "precious.txt"
    precious.write_text("keep me\n")
    lock.unlink()
    lock.symlink_to(precious)
    linked = nox(sandbox, "-s", "lock-3.12-rocm7.0", "--", "--workdir", str(work))
    out = linked.stdout + linked.stderr
    assert linked.returncode != 0 and "(exit 2)" in out, out  # nox itself exits 1
    assert f"lock file {lock}: a symlink, not written through" in out
    assert "Traceback" not in out
    assert precious.read_text() == "keep me\n" and lock.is_symlink()
