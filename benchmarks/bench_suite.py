"""How long the test suite takes: the unit tests, and what CI runs; medians of N runs.

    python benchmarks/bench_suite.py [--runs 3] [--only unit|ci] [--ci fresh|command]
    python benchmarks/bench_suite.py --against REV [--runs 3]

--against REV: the unit tests of this checkout's HEAD and of REV side by side, each in a
clone of its own (its toolkit first on PYTHONPATH, this environment's packages), runs
alternating REV, HEAD, REV, ...: both medians and their ratio, from the same minutes of a
machine whose speed drifts (the unit target alone says little when runs vary by 10%).

unit  `python -m pytest -n auto tests/unit` in this checkout (target: <= 120 s).
ci    what CI runs (target: <= 600 s), either
        fresh   (default) `CI=true bash .ci/run` in a fresh `git clone` of this checkout's HEAD:
                system packages, a new .venv, `pip install -e .[dev]`, the whole suite
                (uncommitted changes are not in the clone: commit first);
        command the README's test command only, `CI=true python -m pytest -n auto`, here.

Both run with Python's bytecode cache on, its default and what .ci/run keeps: an environment's
PYTHONDONTWRITEBYTECODE=1 (this machine sets it) is dropped for the runs, and the script says so.

Each run's wall time is printed as it ends, with pytest's summary line; then the medians and
whether each meets its target. A failing run is reported (its output's tail) and the script
exits 1: a time of a failing suite is no time of the suite. Run it on a quiet machine: the
medians of a loaded one say little (`uptime` is printed first).
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

TARGETS = {"unit": 120.0, "ci": 600.0}


def timed(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, str]:
    """Wall seconds of ``argv`` and pytest's last summary line; exits 1 when it fails."""
    start = time.perf_counter()
    res = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    took = time.perf_counter() - start
    lines = [ln for ln in res.stdout.splitlines() if ln.strip()]
    summary = next((ln.strip("= ") for ln in reversed(lines)
                    if " passed" in ln or " failed" in ln), lines[-1] if lines else "")
    if res.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed (exit {res.returncode}) after {took:.0f} s:\n"
                 f"{res.stdout[-3000:]}\n{res.stderr[-3000:]}")
    return took, summary


def _env(**extra: str) -> dict[str, str]:
    """The runs' environment: this one, with Python's default bytecode cache (as .ci/run)."""
    env = {**os.environ, **extra}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def unit_run(clone: Path = ROOT) -> tuple[float, str]:
    """The unit tests of this checkout, or of ``clone`` (its toolkit first on PYTHONPATH)."""
    env = _env() if clone == ROOT else _env(PYTHONPATH=str(clone))
    return timed([sys.executable, "-m", "pytest", "-n", "auto", "-q", "-p", "no:cacheprovider",
                  "tests/unit"], clone, env)


def against(rev: str, runs: int) -> int:
    """HEAD's and ``rev``'s unit tests, alternating; medians and the ratio HEAD / rev."""
    commits = {name: commit_of(ROOT, ref) for name, ref in (("rev", rev), ("head", "HEAD"))}
    tmp = Path(tempfile.mkdtemp(prefix="bench-against-"))
    try:
        clones = {name: clone_at(ROOT, commit, tmp / name) for name, commit in commits.items()}
        times: dict[str, list[float]] = {"rev": [], "head": []}
        for i in range(runs):
            for name in ("rev", "head"):
                took, summary = unit_run(clones[name])
                times[name].append(took)
                label = rev if name == "rev" else "HEAD"
                print(f"unit {label} run {i + 1}/{runs}: {took:7.1f} s  ({summary})", flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    old, new = statistics.median(times["rev"]), statistics.median(times["head"])
    # each HEAD run against the REV run just before it: a drift of the machine's speed over
    # the minutes cancels out of each pair
    pairs = statistics.median(h / r for r, h in zip(times["rev"], times["head"], strict=True))
    print(f"\n{'unit tests':<24}{'median s':>10}\n{rev:<24}{old:>10.1f}\n{'HEAD':<24}{new:>10.1f}"
          f"\nratio HEAD / {rev}: {new / old:.3f} of the medians, {pairs:.3f} the median of "
          f"the pairs; HEAD meets {TARGETS['unit']:.0f} s: "
          f"{'yes' if new <= TARGETS['unit'] else 'NO'}")
    return 0 if new <= TARGETS["unit"] else 1


def ci_run(mode: str) -> tuple[float, str]:
    env = _env(CI="true")
    if mode == "command":
        return timed([sys.executable, "-m", "pytest", "-n", "auto", "-q"], ROOT, env)
    tmp = Path(tempfile.mkdtemp(prefix="bench-suite-"))
    try:
        clone = tmp / "clone"
        subprocess.run(["git", "clone", "--quiet", "--shared", str(ROOT), str(clone)],
                       check=True)
        env["TOOLKIT_CACHE_DIR"] = str(tmp / "cache")
        env.pop("VIRTUAL_ENV", None)
        return timed(["bash", ".ci/run"], clone, env)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3, help="runs of each (default 3)")
    parser.add_argument("--only", choices=("unit", "ci"), default=None,
                        help="time only the unit tests, or only what CI runs")
    parser.add_argument("--ci", choices=("fresh", "command"), default="fresh",
                        help="fresh: .ci/run in a fresh clone (default); command: the test "
                             "command only, here")
    parser.add_argument("--against", metavar="REV", default=None,
                        help="time HEAD's unit tests and REV's side by side (alternating runs)")
    args = parser.parse_args()
    if args.runs < 1:
        parser.error("--runs: at least 1")
    if args.against is not None and args.only == "ci":
        parser.error("--against times the unit tests only")
    uptime = shutil.which("uptime")
    if uptime:
        print(subprocess.run([uptime], capture_output=True, text=True, check=False)
              .stdout.strip())
    if os.environ.get("PYTHONDONTWRITEBYTECODE"):
        print("PYTHONDONTWRITEBYTECODE is set here: dropped for the runs (bytecode cache on, "
              "Python's default, as .ci/run)")
    if args.against is not None:
        return against(args.against, args.runs)
    kinds = [k for k in ("unit", "ci") if args.only in (None, k)]
    times: dict[str, list[float]] = {k: [] for k in kinds}
    for kind in kinds:
        for i in range(args.runs):
            took, summary = unit_run() if kind == "unit" else ci_run(args.ci)
            times[kind].append(took)
            print(f"{kind} run {i + 1}/{args.runs}: {took:7.1f} s  ({summary})", flush=True)
    print(f"\n{'suite':<44}{'median s':>10}{'target s':>10}  meets")
    labels = {"unit": "unit tests (pytest -n auto tests/unit)",
              "ci": f"CI ({'.ci/run, fresh clone' if args.ci == 'fresh' else 'pytest -n auto'})"}
    ok = True
    for kind in kinds:
        median = statistics.median(times[kind])
        meets = median <= TARGETS[kind]
        ok = ok and meets
        print(f"{labels[kind]:<44}{median:>10.1f}{TARGETS[kind]:>10.0f}  {'yes' if meets else 'NO'}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
