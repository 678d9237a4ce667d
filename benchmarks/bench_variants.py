"""Wheel variants against the fat wheel (issue 31): each variant's size beside the fat wheel's.

    python benchmarks/bench_variants.py [DIR] [--gfx gfx90a,gfx908,...] [--workdir DIR]

DIR: a folder holding a fat wheel and its variants (``dist/<build-id>`` of a ``--variants``
build). Without it, the bundled sample is built first with
``python -m toolkit demo --variants --no-smoke --gfx TARGETS`` (needs hipcc) into a temporary
work folder (or ``--workdir``). For each wheel: its file size, the bytes of GPU code it
carries (``python -m toolkit check --json``: code object bytes per target) and both as a share
of the fat wheel's.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from toolkit.core.variants import parse_name

DEFAULT_GFX = "gfx90a,gfx908,gfx906,gfx1030"  # what Debian's hipcc (ROCm 5.2) has device libraries for


def build(workdir: Path, gfx: str) -> Path:
    cmd = [sys.executable, "-m", "toolkit", "demo", "--variants", "--no-smoke", "--gfx", gfx,
           "--workdir", str(workdir)]
    print("$ " + " ".join(cmd), flush=True)
    res = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if res.returncode != 0:
        sys.exit(f"the build failed (exit {res.returncode}):\n{res.stdout[-3000:]}{res.stderr[-2000:]}")
    (dist,) = (workdir / "dist").iterdir()
    return dist


def gpu_bytes(wheel: Path) -> dict[str, int]:
    res = subprocess.run([sys.executable, "-m", "toolkit", "check", str(wheel), "--json"],
                         capture_output=True, text=True, check=False)
    (data,) = json.loads(res.stdout)["wheels"]
    return {target: code["bytes"] for target, code in data["gpu"].items()}


def table(dist: Path) -> list[str]:
    wheels = sorted(dist.glob("*.whl"))
    fat = [w for w in wheels if (n := parse_name(w.name)) is not None and n.label is None]
    if len(fat) != 1:
        sys.exit(f"{dist}: expected one wheel without a variant label, found {len(fat)}")
    fat_size, fat_gpu = fat[0].stat().st_size, sum(gpu_bytes(fat[0]).values())
    lines = [f"{'wheel':<12} {'size (B)':>10} {'vs fat':>7} {'GPU code (B)':>13} {'vs fat':>7}  "
             "targets"]
    for wheel in [fat[0], *(w for w in wheels if w != fat[0])]:
        name = parse_name(wheel.name)
        label = (name.label if name else None) or "fat"
        code = gpu_bytes(wheel)
        size, total = wheel.stat().st_size, sum(code.values())
        lines.append(f"{label:<12} {size:>10} {size / fat_size:>7.1%} {total:>13} "
                     f"{(total / fat_gpu if fat_gpu else 0):>7.1%}  {', '.join(code)}")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dist", nargs="?", type=Path, help="a folder with a fat wheel and variants")
    ap.add_argument("--gfx", default=DEFAULT_GFX, help=f"targets to build (default {DEFAULT_GFX})")
    ap.add_argument("--workdir", type=Path, default=None)
    args = ap.parse_args()
    if args.dist is not None:
        dist = args.dist
    else:
        workdir = args.workdir or Path(tempfile.mkdtemp(prefix="bench-variants-"))
        dist = build(workdir, args.gfx)
    print(f"# {dist}")
    for line in table(dist):
        print(line)


if __name__ == "__main__":
    main()
