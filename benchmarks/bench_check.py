"""Benchmark `python -m toolkit check` against `auditwheel show` (and a bare unzip), side by side.

    python benchmarks/bench_check.py [WHEEL ...] [--runs N] [--skip-auditwheel] [--only NAME]

Default wheels: the torch 2.13.0 CPU wheel (/opt/wheels, else `pip download torch==2.13.0`)
and real ROCm wheels from PyPI (torch-cluster-rocm 1.6.3.post7, cupy-rocm-7-0 14.2.0,
jax-rocm7-plugin 0.12.0, jax-rocm7-pjrt 0.12.0, onnxruntime-rocm 1.22.2.post3; downloaded
once into ~/.cache). For each wheel the tools run in turn, N rounds interleaved, so they share
the machine's state (a loaded machine slows both alike); the medians and ratios are printed
side by side.

Targets (issues 11 and 19): on every wheel auditwheel/ours >= 1.5 and peak RSS at most 2x
auditwheel show's (the largest process of each tree, as wait4 reports it, like
/usr/bin/time -v); on the torch wheel auditwheel/ours >= 25 and ours/unzip <= 0.6 (unzip -p
of its ELF members to /dev/null).
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

TORCH = Path("/opt/wheels/torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl")
CACHE = Path.home() / ".cache" / "rocm-wheel-toolkit-bench"
TEST_CACHE = Path.home() / ".cache" / "rocm-wheel-toolkit-tests" / "wheels"
ROCM_WHEELS = {  # spec -> (file glob, Python version of the wheel)
    "torch-cluster-rocm==1.6.3.post7": ("torch_cluster_rocm-1.6.3.post7-cp312-*.whl", "3.12"),
    "cupy-rocm-7-0==14.2.0": ("cupy_rocm_7_0-14.2.0-cp312-*.whl", "3.12"),
    "jax-rocm7-plugin==0.12.0": ("jax_rocm7_plugin-0.12.0-cp312-*.whl", "3.12"),
    "jax-rocm7-pjrt==0.12.0": ("jax_rocm7_pjrt-0.12.0-py3-none-*.whl", "3.12"),
    "onnxruntime-rocm==1.22.2.post3": ("onnxruntime_rocm-1.22.2.post3-cp311-*.whl", "3.11"),
}
PLATFORMS = ("manylinux_2_34_x86_64", "manylinux_2_32_x86_64", "manylinux_2_28_x86_64",
             "manylinux_2_27_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64")  # fmt: skip


def _download(spec: str, pattern: str, extra: list[str]) -> Path:
    for folder in (TEST_CACHE, CACHE):
        found = sorted(folder.glob(pattern))
        if found:
            return found[0]
    CACHE.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "download", spec, "--no-deps", "--only-binary=:all:",
                    *extra, "-d", str(CACHE)], check=True)  # fmt: skip
    return sorted(CACHE.glob(pattern))[0]


def default_wheels() -> list[Path]:
    torch = TORCH if TORCH.exists() else _download("torch==2.13.0", "torch-2.13.0*.whl", [])
    plats = [a for p in PLATFORMS for a in ("--platform", p)]
    rocm = [_download(spec, pat, [*plats, "--python-version", py]) for spec, (pat, py) in ROCM_WHEELS.items()]
    return [torch, *rocm]


def elf_members(wheel: Path) -> list[str]:
    out = []
    with zipfile.ZipFile(wheel) as zf:
        for info in zf.infolist():
            if not info.is_dir() and info.file_size >= 4:
                with zf.open(info) as f:
                    if f.read(4) == b"\x7fELF":
                        out.append(info.filename)
    return out


def timed(cmd: list[str], ok: tuple[int, ...] = (0, 1)) -> tuple[float, int]:
    """Wall time and peak RSS (KiB, the largest process of the tree) of one child run."""
    pid = os.fork()
    if pid == 0:  # child: exec with rusage isolated to this process tree
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


def bench(wheel: Path, runs: int, auditwheel: str | None, unzip: str | None) -> dict[str, float]:
    members = elf_members(wheel)
    cmds = {"ours": [sys.executable, "-m", "toolkit", "check", str(wheel), "--json"]}
    if auditwheel:
        cmds["auditwheel"] = [auditwheel, "show", str(wheel)]
    if unzip:
        cmds["unzip"] = [unzip, "-p", str(wheel), *members]
    times: dict[str, list[float]] = {k: [] for k in cmds}
    rss: dict[str, list[int]] = {k: [] for k in cmds}
    print(f"{wheel.name} ({wheel.stat().st_size / 1e6:.0f} MB, {len(members)} ELF members)", flush=True)
    for i in range(runs):
        for name, cmd in cmds.items():
            t, r = timed(cmd, ok=(0,) if name == "unzip" else (0, 1))
            times[name].append(t)
            rss[name].append(r)
        print(f"  run {i + 1}: " + ", ".join(f"{k} {v[-1]:.2f}s" for k, v in times.items()), flush=True)
    med = {k: statistics.median(v) for k, v in times.items()}
    med["rss_mib"] = max(rss["ours"]) / 1024
    if "auditwheel" in rss:
        med["aw_rss_mib"] = max(rss["auditwheel"]) / 1024
    return med


def _compiled() -> str:
    """Both tools run from compiled bytecode, as an installed package does (pip compiles it
    at install): auditwheel's site-packages have theirs, and an editable toolkit under
    PYTHONDONTWRITEBYTECODE (this machine sets it) would otherwise compile its modules on
    every run."""
    import toolkit

    folder = Path(toolkit.__file__).parent
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(folder)], check=True)
    return f"bytecode of {folder} compiled (as pip install does)"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("wheels", nargs="*", type=Path)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--skip-auditwheel", action="store_true", help="only ours and unzip")
    ap.add_argument("--only", help="only the default wheels whose file name contains this")
    args = ap.parse_args()
    wheels = [w.resolve() for w in args.wheels] or default_wheels()
    if args.only:
        wheels = [w for w in wheels if args.only in w.name]
    aw = shutil.which("auditwheel") or str(Path(sys.executable).parent / "auditwheel")
    auditwheel = None if args.skip_auditwheel or not os.path.exists(aw) else aw
    unzip = shutil.which("unzip")
    print(f"runs: {args.runs} each, interleaved; {os.cpu_count()} CPUs; {_compiled()}\n")
    rows = [(w, bench(w, args.runs, auditwheel, unzip)) for w in wheels]
    print("\nmedian wall time (s), peak RSS (MiB, the largest process) and ratios:")
    head = (f"{'ours':>6} {'auditw':>7} {'unzip':>6} {'aw/ours':>8} {'ours/unzip':>11} "
            f"{'RSS ours':>9} {'RSS aw':>7} {'RSS ours/aw':>12}")
    print(f"  {'wheel':<50} {head}")
    for w, m in rows:
        aw_ratio = f"{m['auditwheel'] / m['ours']:8.2f}" if "auditwheel" in m else f"{'-':>8}"
        uz_ratio = f"{m['ours'] / m['unzip']:11.2f}" if "unzip" in m else f"{'-':>11}"
        aw_rss = m.get("aw_rss_mib")
        rss_ratio = f"{m['rss_mib'] / aw_rss:12.2f}" if aw_rss else f"{'-':>12}"
        print(f"  {w.name[:50]:<50} {m['ours']:6.2f} {m.get('auditwheel', float('nan')):7.2f} "
              f"{m.get('unzip', float('nan')):6.2f} {aw_ratio} {uz_ratio} {m['rss_mib']:9.0f} "
              f"{aw_rss or float('nan'):7.0f} {rss_ratio}")  # fmt: skip
    print("\ntargets: aw/ours >= 1.5 and RSS ours/aw <= 2 on every wheel; on torch aw/ours >= 25 "
          "and ours/unzip <= 0.6")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
