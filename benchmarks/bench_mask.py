"""Benchmark ``toolkit.core.urls.mask`` on hostile lines against the whole-line patterns it
used before session 26, side by side.

    python benchmarks/bench_mask.py [--size N] [--runs N]

Each line repeats a piece N times (default 10,000: the whole-line patterns take seconds
there, minutes at 100,000). Prints, per line, the median seconds of both and their ratio, and
checks that both give the same text. Target: linear time (the ratio grows with N).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.fixtures.mask_oracle import whole_line
from toolkit.core import urls


def lines(n: int) -> dict[str, str]:
    return {"a:// repeated": "a://" * n, "a:// then #?": "a://" * n + "#?t=1",
            "x:y then letters": "x:y" + "a" * (3 * n), ",x: repeated then @": ",x:" * n + "@",
            "normal log line x n": "see https://u:p@h/x?t=1 " * n}


TYPICAL = ("    gcc -O2 -I/usr/include -c native.c -o build/temp/native.o -fPIC -DNDEBUG",
           "Looking in indexes: https://user:pw@repo.example/simple?token=abc, https://pypi.org")


def median(fn: Callable[[str], str], text: str, runs: int) -> tuple[float, str]:
    times, out = [], ""
    for _ in range(runs):
        start = time.perf_counter()
        out = fn(text)
        times.append(time.perf_counter() - start)
    return statistics.median(times), out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", type=int, default=10_000)
    p.add_argument("--runs", type=int, default=3)
    args = p.parse_args()
    print(f"{'line':<24} {'mask s':>9} {'whole s':>9} {'whole/mask':>11}  same")
    for name, text in lines(args.size).items():
        ours, a = median(urls.mask, text, args.runs)
        old, b = median(whole_line, text, args.runs)
        print(f"{name:<24} {ours:9.4f} {old:9.4f} {old / max(ours, 1e-9):11.1f}  {a == b}")
    print(f"\n{'typical line (20,000 calls)':<44} {'mask us':>8} {'whole us':>9}")
    for line in TYPICAL:
        ours = median(lambda t: [urls.mask(t) for _ in range(20_000)][0], line, args.runs)[0]
        old = median(lambda t: [whole_line(t) for _ in range(20_000)][0], line, args.runs)[0]
        print(f"{line[:44]:<44} {ours * 50:8.2f} {old * 50:9.2f}")


if __name__ == "__main__":
    main()
