"""Median wall time of `nox -l` on the full noxfile vs a one-session noxfile, side by side.

    python benchmarks/bench_list.py [--runs 9]

Target: full / one-session <= 1.5.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ONE_SESSION = '''
import nox


@nox.session(python=False)
def only(session):
    """The one session."""
'''


def timed(noxfile: Path) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "nox", "-l", "-f", str(noxfile)], cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        one = Path(tmp) / "noxfile.py"
        one.write_text(ONE_SESSION)
        full = ROOT / "noxfile.py"
        timed(full), timed(one)  # warm the file cache
        full_t, one_t = [], []
        for _ in range(args.runs):  # interleaved: both see the same machine load
            full_t.append(timed(full))
            one_t.append(timed(one))
    f, o = statistics.median(full_t), statistics.median(one_t)
    sessions = subprocess.run([sys.executable, "-m", "nox", "-l"], cwd=ROOT, capture_output=True,
                              text=True).stdout.count("\n- ")
    print(f"{'noxfile':<22}{'median s':>10}")
    print(f"{'full (' + str(sessions) + ' sessions)':<22}{f:>10.3f}")
    print(f"{'one session':<22}{o:>10.3f}")
    ratio = f / o
    print(f"ratio full/one: {ratio:.2f} (target <= 1.5: {'met' if ratio <= 1.5 else 'NOT met'})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
