"""Record, then compare, `python -m toolkit check --json` on the bench wheels: a change made
for speed or memory must not change a verdict.

    python benchmarks/check_outputs.py record DIR    # before the change
    python benchmarks/check_outputs.py compare DIR   # after it: exit 1 on any difference

The wheels are bench_check.py's (downloaded once into ~/.cache) and the real ROCm wheels the
tests cache (~/.cache/rocm-wheel-toolkit-tests/wheels), when present.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_check import TEST_CACHE, default_wheels


def outputs(wheel: Path) -> tuple[int, str]:
    """Exit code and JSON report of one check."""
    done = subprocess.run([sys.executable, "-m", "toolkit", "check", "--json", str(wheel)],
                          capture_output=True, text=True, check=False)  # fmt: skip
    if done.returncode not in (0, 1):
        raise SystemExit(f"check of {wheel.name} exited {done.returncode}: {done.stderr.strip()[:300]}")
    return done.returncode, done.stdout


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=("record", "compare"))
    ap.add_argument("dir", type=Path)
    args = ap.parse_args()
    wheels = [*default_wheels(), *sorted(TEST_CACHE.glob("*.whl"))]
    args.dir.mkdir(parents=True, exist_ok=True)
    changed = 0
    for wheel in wheels:
        code, text = outputs(wheel)
        saved = args.dir / f"{wheel.name}.json"
        got = f"exit {code}\n{text}"
        if args.mode == "record":
            saved.write_text(got)
            print(f"recorded {wheel.name}: exit {code}")
        elif not saved.exists():
            print(f"{wheel.name}: nothing recorded")
            changed += 1
        elif saved.read_text() != got:
            print(f"{wheel.name}: CHANGED")
            changed += 1
        else:
            print(f"{wheel.name}: same")
    return 1 if changed else 0


if __name__ == "__main__":
    raise SystemExit(main())
