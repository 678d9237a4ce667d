"""Provisioning speed: the toolkit (uv + env stamps) against plain pip as TheRock's script.

Provisions one (Python, ROCm) environment -- the SDK doubles from a local PEP 503 index and
the real CPU torch wheel (192 MB, deps from PyPI) -- three ways, side by side, N times:

  (a) cold:      ``python -m toolkit provision`` into a new environment (no env, no stamp);
                 uv's download cache is warm, as pip's is for (c) -- both tools keep their
                 caches between runs, as on a contributor's machine. The first, untimed
                 provisioning with an empty uv cache is printed too ("empty-cache").
  (b) unchanged: the same command again (the stamp matches: every step is skipped)
  (c) pip:       a fresh ``python -m venv``, ``pip cache remove rocm``, then
                 ``pip install --force-reinstall --pre`` of the same SDK spec and torch

Targets: median (b) <= 1 s; median (c) / median (a) >= 3.

    /tmp/venv/bin/python benchmarks/bench_provision.py [--runs 3] [--python 3.11]
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

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.doubles.fixtures import write_data  # noqa: E402
from tests.doubles.index import CPU_TORCH, start  # noqa: E402
from toolkit.env.interpreters import find  # noqa: E402

BUILD = "sample-2.0.0-cp311-rocm7.0"  # Python 3.11 x ROCm 7.0 with torch 2.13 (the CPU wheel)
SDK_SPEC = "rocm[libraries,devel]>1.0,>=7.0.0a0,<7.1"


def timed(argv: list[str], env: dict[str, str]) -> float:
    start = time.monotonic()
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    secs = time.monotonic() - start
    if proc.returncode != 0:
        raise SystemExit(f"failed: {' '.join(argv)}\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return secs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    if not CPU_TORCH.is_file():
        raise SystemExit(f"needs {CPU_TORCH}")
    interp = find("3.11").path
    tmp = Path(tempfile.mkdtemp(prefix="bench-provision-"))
    served = start(tmp / "www")
    index = next(served).index
    try:
        data = write_data(tmp / "data", index.url)
        family_index = f"{index.per_family}gfx94X-dcgpu/"
        base = {**os.environ, "TOOLKIT_DATA_DIR": str(data)}
        cold: list[float] = []
        warm: list[float] = []
        pip: list[float] = []
        uvc = tmp / "uv-cache"

        def command(work: Path) -> list[str]:
            return [sys.executable, "-m", "toolkit", "provision", BUILD, "--workdir", str(work),
                    "--allow-rocm-mismatch"]

        empty = timed(command(tmp / "work-warmup"),
                      {**base, "TOOLKIT_CACHE_DIR": str(tmp / "cache-warmup"),
                       "UV_CACHE_DIR": str(uvc)})
        shutil.rmtree(tmp / "cache-warmup", ignore_errors=True)
        print(f"empty-cache: new env with an empty uv cache {empty:6.2f}s", flush=True)
        for run in range(args.runs):
            cache, work = tmp / f"cache{run}", tmp / f"work{run}"
            env = {**base, "TOOLKIT_CACHE_DIR": str(cache), "UV_CACHE_DIR": str(uvc)}
            cmd = command(work)
            cold.append(timed(cmd, env))
            warm.append(timed(cmd, env))
            venv = tmp / f"pipenv{run}"
            py = str(venv / "bin" / "python")
            start_t = time.monotonic()
            timed([interp, "-m", "venv", str(venv)], base)
            subprocess.run([py, "-m", "pip", "cache", "remove", "rocm"], env=base,
                           capture_output=True, check=False)
            timed([py, "-m", "pip", "install", "-q", "--force-reinstall", "--pre",
                   "--index-url", family_index, SDK_SPEC],
                  {**base, "ROCM_SDK_TARGET_FAMILY": "gfx94X-dcgpu"})
            timed([py, "-m", "pip", "install", "-q", "--force-reinstall", "--pre",
                   "--index-url", family_index, "--extra-index-url", "https://pypi.org/simple/",
                   "torch==2.13.0"], base)
            pip.append(time.monotonic() - start_t)
            print(f"run {run + 1}: (a) cold {cold[-1]:6.2f}s  (b) unchanged {warm[-1]:5.2f}s  "
                  f"(c) pip {pip[-1]:6.2f}s", flush=True)
            for d in (cache, venv):
                shutil.rmtree(d, ignore_errors=True)
        a, b, c = (statistics.median(x) for x in (cold, warm, pip))
        print(f"\nmedians over {args.runs} runs: (a) cold {a:.2f}s  (b) unchanged {b:.2f}s  "
              f"(c) pip --force-reinstall {c:.2f}s")
        print(f"(b) target <= 1 s: {'met' if b <= 1 else 'MISSED'} ({b:.2f}s)")
        print(f"(c)/(a) = {c / a:.1f}x, target >= 3: {'met' if c / a >= 3 else 'MISSED'}")
        print(f"(c)/(b) = {c / b:.0f}x;  empty uv cache: {empty:.2f}s, (c)/that = {c / empty:.1f}x")
    finally:
        served.close()
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
