"""Building the sample twice with no source change: the second build must be cheap.

    python benchmarks/bench_rebuild.py [--runs 3]

Each run starts from an empty work folder, toolkit cache and ccache folder, then builds
the sample (`nox -s demo -- --no-smoke`: provision, build, name, check) three times:
  first   - cold: new environment, cold compiler cache;
  second  - nothing changed: the environment is reused and build-wheel is up to date;
  forced  - nothing changed but --rebuild: the build runs again, compiles hit ccache.
Target: second / first <= 0.25. Medians over the runs are printed with the ratios.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def demo(work: Path, env: dict[str, str], *extra: str) -> float:
    start = time.perf_counter()
    res = subprocess.run([sys.executable, "-m", "nox", "-s", "demo", "--", "--workdir", str(work),
                          *extra],
                         cwd=ROOT, env=env, capture_output=True, text=True)
    took = time.perf_counter() - start
    if res.returncode != 0:
        sys.exit(f"demo failed:\n{res.stdout[-3000:]}\n{res.stderr[-3000:]}")
    return took


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    first: list[float] = []
    second: list[float] = []
    forced: list[float] = []
    with_smoke: list[float] = []
    for _ in range(args.runs):
        tmp = Path(tempfile.mkdtemp(prefix="bench-rebuild-"))
        try:
            env = {**os.environ, "TOOLKIT_CACHE_DIR": str(tmp / "cache"),
                   "CCACHE_DIR": str(tmp / "ccache"), "CI": "true"}
            first.append(demo(tmp / "work", env, "--no-smoke"))
            second.append(demo(tmp / "work", env, "--no-smoke"))
            forced.append(demo(tmp / "work", env, "--no-smoke", "--rebuild"))
            with_smoke.append(demo(tmp / "work", env))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    f, s, r, w = (statistics.median(x) for x in (first, second, forced, with_smoke))
    print(f"{'build of the sample (nox -s demo --no-smoke)':<44}{'median s':>10}")
    print(f"{'first (cold env, cold ccache)':<44}{f:>10.2f}")
    print(f"{'second (no change: up to date)':<44}{s:>10.2f}")
    print(f"{'forced rebuild (no change, warm ccache)':<44}{r:>10.2f}")
    print(f"second/first: {s / f:.2f} (target <= 0.25: {'met' if s / f <= 0.25 else 'NOT met'})")
    print(f"forced/first: {r / f:.2f}")
    print(f"(for reference: an unchanged demo including its smoke tests: {w:.2f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
