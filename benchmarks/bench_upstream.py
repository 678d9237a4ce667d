"""Benchmark `python -m toolkit upstream`: a folder of mirrors, and the cache's partial clones.

    python benchmarks/bench_upstream.py [MIRRORS] [--runs N] [--remote URL]

N rounds, interleaved so the modes share the machine's state:

- ``folder``: ``upstream MIRRORS`` (default /work/.mirror, the OWNER+NAME/repo layout), read
  in place;
- with ``--remote URL`` (``TOOLKIT_UPSTREAM_REMOTE``: ``https://github.com/`` or a
  ``file://`` folder of complete repositories as OWNER+NAME/repo that allow filters):
  ``cache-clone`` (no DIR, an empty cache: bare partial clones, ``--filter=blob:none``, and
  the blobs the rules read fetched in batches) and ``cache-fetch`` (again, the cache kept).
  The snapshots in /work/.mirror cannot serve clones (they lack objects outside what they
  hold), so the cache modes need another remote.

Prints the median seconds of each and their ratios to ``folder``.
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


def _once(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    res = subprocess.run([sys.executable, "-m", "toolkit", "upstream", *argv], env=env,
                         capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    if res.returncode not in (0, 1):
        raise SystemExit(f"upstream failed ({res.returncode}): {res.stderr.strip()}")
    return seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mirrors", nargs="?", default="/work/.mirror")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--remote", default="", help="TOOLKIT_UPSTREAM_REMOTE for the cache modes")
    args = parser.parse_args()
    mirrors = Path(args.mirrors).resolve()
    modes = ["folder", *(["cache-clone", "cache-fetch"] if args.remote else [])]
    times: dict[str, list[float]] = {mode: [] for mode in modes}
    with tempfile.TemporaryDirectory(prefix="bench-upstream-") as tmp:
        for i in range(args.runs):
            cache = Path(tmp) / f"cache{i}"
            env = {**os.environ, "TOOLKIT_CACHE_DIR": str(cache),
                   "TOOLKIT_UPSTREAM_REMOTE": args.remote,
                   "GIT_CONFIG_COUNT": "2",
                   "GIT_CONFIG_KEY_0": "uploadpack.allowFilter", "GIT_CONFIG_VALUE_0": "true",
                   "GIT_CONFIG_KEY_1": "uploadpack.allowAnySHA1InWant",
                   "GIT_CONFIG_VALUE_1": "true"}
            times["folder"].append(_once([str(mirrors)], env))
            if args.remote:
                times["cache-clone"].append(_once([], env))
                times["cache-fetch"].append(_once([], env))
            shutil.rmtree(cache, ignore_errors=True)
    base = statistics.median(times["folder"])
    print(f"{'mode':<12} {'median s':>9} {'ratio':>7}   (runs: {args.runs}, mirrors: {mirrors})")
    for mode, values in times.items():
        median = statistics.median(values)
        print(f"{mode:<12} {median:9.2f} {median / base:7.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
