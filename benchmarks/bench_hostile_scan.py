"""How long `toolkit check` takes on a library whose data is a hostile run of GPU-code magics.

    python benchmarks/bench_hostile_scan.py [--mib 8] [--runs 5] [--against REV]

The GPU-code scan (toolkit/inspect/readers/gpuscan.py) looks at every place a code-object or
bundle magic occurs in a library's data sections and validates what starts there. A crafted
library can fill a section with magics. Each library built here (gcc, `.incbin` into
`.rodata`) has MIB MiB of one pattern, repeated:

    zeros          nothing to look at (the baseline: reading and parsing the library)
    elf            "\\x7fELF": the ELF magic alone, as host data holds it
    code-object    the first 8 bytes of an AMDGPU code object (HSA OS ABI), nothing valid after
    plain          clang's "__CLANG_OFFLOAD_BUNDLE__" with no valid entry table after it
    ccob           "CCOB", a compressed bundle's magic, with no valid header
    ccob-header    "CCOB" with a valid version and method, nothing valid after

Runs are interleaved (every library once per round, so a machine's drift hits all alike); the
medians, seconds per MiB above the baseline and the ratio to the baseline are printed.
Target (session 35): every pattern within 0.5 s per MiB above the baseline (before session 35,
`plain` took about 2 s per MiB: each candidate copied the next MiB).

--against REV: the same libraries, also checked by REV's toolkit (a clone of this checkout at
REV, run in that folder), alternating with HEAD's, and the ratio HEAD / REV per pattern.
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
sys.path.insert(0, str(Path(__file__).resolve().parent))
from clones import clone_at, commit_of  # noqa: E402  (benchmarks/clones.py)

TARGET_S_PER_MIB = 0.5
PATTERNS = {
    "zeros": b"\0",
    "elf": b"\x7fELF",
    "code-object": b"\x7fELF\x02\x01\x01\x40",
    "plain": b"__CLANG_OFFLOAD_BUNDLE__",
    "ccob": b"CCOB",
    "ccob-header": b"CCOB\x02\x00\x01\x00",
}


def build(folder: Path, name: str, pattern: bytes, mib: int) -> Path:
    """A shared library whose ``.rodata`` holds ``mib`` MiB of ``pattern`` repeated."""
    blob = folder / f"{name}.bin"
    blob.write_bytes((pattern * ((mib << 20) // len(pattern) + 1))[: mib << 20])
    src = folder / f"{name}.c"
    src.write_text(f'__asm__(".section .rodata\\n.globl blob\\nblob:\\n.incbin \\"{blob.name}\\"\\n");\n'
                   "int f(void) { return 1; }\n")
    lib = folder / f"lib{name.replace('-', '_')}.so"
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(lib), str(src)], cwd=folder, check=True)
    return lib


def check(lib: Path, toolkit: Path) -> float:
    """Wall seconds of ``python -m toolkit check LIB`` run in ``toolkit`` (``-m`` puts the
    working folder first on sys.path, before PYTHONPATH: its toolkit is the one run)."""
    start = time.perf_counter()
    res = subprocess.run([sys.executable, "-m", "toolkit", "check", str(lib)], cwd=toolkit,
                         capture_output=True, text=True, check=False)
    took = time.perf_counter() - start
    if res.returncode not in (0, 1):  # 1: findings; anything else: the check broke
        sys.exit(f"toolkit check {lib.name} failed (exit {res.returncode}):\n{res.stderr[-2000:]}")
    return took


def report(times: dict[tuple[str, str], list[float]], mib: int, tools: list[str]) -> bool:
    base = {t: statistics.median(times[(t, "zeros")]) for t in tools}
    head = ["pattern", *(f"{t} s" for t in tools), "HEAD s/MiB", "x zeros"]
    if len(tools) == 2:
        head.append(f"HEAD/{tools[1]}")
    print("\n" + "".join(f"{h:>14}" if i else f"{h:<14}" for i, h in enumerate(head)))
    ok = True
    for name in PATTERNS:
        med = {t: statistics.median(times[(t, name)]) for t in tools}
        per_mib = (med["HEAD"] - base["HEAD"]) / mib
        row = [name, *(f"{med[t]:.2f}" for t in tools), f"{per_mib:.3f}",
               f"{med['HEAD'] / base['HEAD']:.1f}"]
        if len(tools) == 2:
            row.append(f"{med['HEAD'] / med[tools[1]]:.2f}")
        print("".join(f"{c:>14}" if i else f"{c:<14}" for i, c in enumerate(row)))
        ok &= per_mib <= TARGET_S_PER_MIB
    print(f"\nevery pattern within {TARGET_S_PER_MIB} s per MiB above zeros (HEAD): "
          f"{'yes' if ok else 'NO'}")
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mib", type=int, default=8, help="MiB of each pattern (default 8)")
    parser.add_argument("--runs", type=int, default=5, help="rounds (default 5)")
    parser.add_argument("--against", metavar="REV", default=None,
                        help="also check with REV's toolkit, alternating with HEAD's")
    args = parser.parse_args()
    if args.runs < 1 or args.mib < 1:
        parser.error("--runs and --mib: at least 1")
    print(os.uname().nodename, subprocess.run(["uptime"], capture_output=True, text=True,
                                              check=False).stdout.strip())
    tmp = Path(tempfile.mkdtemp(prefix="bench-hostile-"))
    try:
        tools = {"HEAD": ROOT}
        if args.against:
            tools[args.against] = clone_at(ROOT, commit_of(ROOT, args.against), tmp / "rev")
        libs = {name: build(tmp, name, pat, args.mib) for name, pat in PATTERNS.items()}
        times: dict[tuple[str, str], list[float]] = {(t, n): [] for t in tools for n in libs}
        for i in range(args.runs):
            for name, lib in libs.items():
                for tool, path in tools.items():
                    times[(tool, name)].append(check(lib, path))
            print(f"round {i + 1}/{args.runs} done", flush=True)
        return 0 if report(times, args.mib, list(tools)) else 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
