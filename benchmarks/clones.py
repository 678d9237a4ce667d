"""A checkout at another commit, for the benchmarks that time HEAD against ``--against REV``:
a shared, detached ``git clone`` of this checkout (no network, no copy of its objects)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def commit_of(root: Path, rev: str) -> str:
    """``rev``'s commit in ``root``; exit with a one-line message when it names none."""
    res = subprocess.run(["git", "-C", str(root), "rev-parse", "--verify", "--quiet",
                          f"{rev}^{{commit}}"], capture_output=True, text=True, check=False)
    if res.returncode != 0:
        sys.exit(f"--against {rev!r}: no such commit in {root} (valid: a commit, branch or tag)")
    return res.stdout.strip()


def clone_at(root: Path, commit: str, dest: Path) -> Path:
    """``root`` cloned (shared) to ``dest`` and checked out at ``commit``, detached."""
    subprocess.run(["git", "clone", "--quiet", "--shared", "--no-checkout", str(root), str(dest)],
                   check=True)
    subprocess.run(["git", "-C", str(dest), "checkout", "--quiet", "--detach", commit],
                   check=True)
    return dest
