"""Benchmark `python -m toolkit check` against `auditwheel show` and a bare unzip.

    python benchmarks/bench_check.py [WHEEL] [--runs N]

Default wheel: the torch 2.13.0 CPU wheel in /opt/wheels (else `pip download torch==2.13.0
--no-deps` into ~/.cache). Prints the median of N runs of each, the ratios and the peak RSS
of our check. Targets: auditwheel/ours >= 10, ours/unzip <= 1.5, peak RSS < 1 GiB.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
import zipfile
from pathlib import Path

DEFAULT = Path("/opt/wheels/torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl")
CACHE = Path.home() / ".cache" / "rocm-wheel-toolkit-bench"


def default_wheel() -> Path:
    if DEFAULT.exists():
        return DEFAULT
    found = sorted(CACHE.glob("torch-2.13.0*.whl"))
    if not found:
        CACHE.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "torch==2.13.0", "--no-deps",
                        "-d", str(CACHE)], check=True)  # fmt: skip
        found = sorted(CACHE.glob("torch-2.13.0*.whl"))
    return found[0]


def elf_members(wheel: Path) -> list[str]:
    out = []
    with zipfile.ZipFile(wheel) as zf:
        for info in zf.infolist():
            if not info.is_dir() and info.file_size >= 4:
                with zf.open(info) as f:
                    if f.read(4) == b"\x7fELF":
                        out.append(info.filename)
    return out


def timed(cmd: list[str], *, stdout: int | None = subprocess.DEVNULL, ok: tuple[int, ...] = (0, 1)
          ) -> tuple[float, int]:  # fmt: skip
    """Wall time and peak RSS (KiB) of one child run."""
    pid = os.fork()
    if pid == 0:  # child: exec with rusage isolated to this process
        if stdout is not None:
            fd = os.open(os.devnull, os.O_WRONLY)
            os.dup2(fd, 1)
            os.dup2(fd, 2)
        try:
            os.execvp(cmd[0], cmd)
        finally:
            os._exit(127)
    start = time.perf_counter()
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code not in ok:
        raise SystemExit(f"{' '.join(cmd[:4])} ... exited {code}")
    return wall, int(usage.ru_maxrss)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("wheel", nargs="?", type=Path)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--skip-auditwheel", action="store_true", help="only ours and unzip")
    args = ap.parse_args()
    wheel = (args.wheel or default_wheel()).resolve()
    members = elf_members(wheel)
    listfile = Path(os.environ.get("TMPDIR", "/tmp")) / "bench_check_members.txt"
    listfile.write_text("\n".join(members))
    ours_cmd = [sys.executable, "-m", "toolkit", "check", str(wheel), "--json"]
    unzip = shutil.which("unzip")
    # unzip -p WHEEL <members> > /dev/null (members passed through a shell-free xargs-like call)
    unzip_cmd = [unzip, "-p", str(wheel), *members] if unzip else None
    aw = shutil.which("auditwheel") or str(Path(sys.executable).parent / "auditwheel")
    aw_cmd = None if args.skip_auditwheel or not os.path.exists(aw) else [aw, "show", str(wheel)]
    print(f"wheel: {wheel.name} ({wheel.stat().st_size / 1e6:.0f} MB, {len(members)} ELF members)")
    print(f"runs: {args.runs} each, interleaved; {os.cpu_count()} CPUs\n")
    times: dict[str, list[float]] = {"ours": [], "unzip": [], "auditwheel": []}
    rss: list[int] = []
    for i in range(args.runs):
        t, r = timed(ours_cmd)
        times["ours"].append(t)
        rss.append(r)
        if unzip_cmd:
            times["unzip"].append(timed(unzip_cmd, ok=(0,))[0])
        if aw_cmd:
            times["auditwheel"].append(timed(aw_cmd, ok=(0, 1))[0])
        print(f"  run {i + 1}: " + ", ".join(f"{k} {v[-1]:.2f}s" for k, v in times.items() if v), flush=True)
    med = {k: statistics.median(v) for k, v in times.items() if v}
    print("\nmedian wall time:")
    for k, v in med.items():
        print(f"  {k:<11} {v:7.2f} s")
    print(f"peak RSS of our check: {max(rss) / 1024:.0f} MiB (target < 1024 MiB)")
    if "auditwheel" in med:
        print(f"auditwheel / ours = {med['auditwheel'] / med['ours']:.1f}  (target >= 10)")
    if "unzip" in med:
        print(f"ours / unzip      = {med['ours'] / med['unzip']:.2f}  (target <= 1.5)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
