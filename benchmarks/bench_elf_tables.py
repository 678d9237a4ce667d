"""Benchmark the ELF reader on crafted tables of growing size (issue 29, class 6).

    python benchmarks/bench_elf_tables.py [--size N] [--runs N]

For each table kind of tests/unit/test_elf_linear.py, reads the crafted file at sizes N and
2N and prints the median seconds of both and their ratio (linear: about 2; quadratic: about
4), and the outcome (ok or the corrupt-ELF line). Then checks a crafted ~20 KiB wheel with
``python -m toolkit check`` (the issue's case: 90 s and 391 MB before the fix) and prints
its median seconds. Target: every ratio near 2, the wheel in well under a second.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.fixtures import crafted_elf as c
from tests.fixtures.wheels import make_wheel
from tests.unit.test_elf_linear import KINDS, crafted, read_all
from toolkit.core.errors import ElfError

ROOT = Path(__file__).resolve().parents[1]


def median_seconds(data: bytes, runs: int) -> tuple[float, str]:
    times, outcome = [], "ok"
    for _ in range(runs):
        start = time.perf_counter()
        try:
            read_all(data)
        except ElfError as err:
            outcome = str(err)[:70]
        times.append(time.perf_counter() - start)
    return statistics.median(times), outcome


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    print(f"{'table':36} {'N':>9} {'2N':>9} ratio  outcome")
    for kind in KINDS:
        t1, out = median_seconds(crafted(kind, args.size), args.runs)
        t2, _ = median_seconds(crafted(kind, 2 * args.size), args.runs)
        print(f"{kind:36} {t1:9.5f} {t2:9.5f} {t2 / t1 if t1 else 0:5.2f}  {out}")
    strtab, offs = c.names(2, "libc.so.")
    so = c.shared_object(dynstr=strtab, verneed=c.verneed_shared(15000, 15000, offs[0]),
                         verneed_count=15000)
    with tempfile.TemporaryDirectory() as tmp:
        whl = make_wheel(tmp, "crafted", "1.0", "cp311-cp311-manylinux_2_28_x86_64", {"crafted/libx.so": so})
        times = []
        for _ in range(args.runs):
            start = time.perf_counter()
            subprocess.run([sys.executable, "-m", "toolkit", "check", str(whl)], cwd=ROOT,
                           capture_output=True, check=False)
            times.append(time.perf_counter() - start)
        print(f"check of a crafted {whl.stat().st_size // 1024} KiB wheel: median "
              f"{statistics.median(times):.3f} s (interpreter start included)")


if __name__ == "__main__":
    main()
