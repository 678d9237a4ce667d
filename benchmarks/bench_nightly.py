"""How many builds a nightly runs with --changed-since after one upstream change, against all.

    python benchmarks/bench_nightly.py [--runs 3]

Last night: every entry of the nightly (`--trigger schedule`) on today's data was built and
published; its manifests are made from the plans (tests/fixtures/manifests.py, as a build on
another host writes them). Tonight: one apex release branch got a new commit, i.e. the
data's evidence names a new head for that version, as `invoke upstream --write` writes it.
For each apex version in turn, the real CLI (`python -m toolkit matrix --format github
--trigger schedule --changed-since FOLDER`, data from a changed copy) says which entries to
build. Printed side by side: entries built without and with --changed-since, their ratio,
and the medians of the command's wall time.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.fixtures.manifests import write_folder  # noqa: E402
from toolkit.data.ci import github_matrix, load_ci  # noqa: E402
from toolkit.plan.recipes import load_matrix  # noqa: E402

DATA = ROOT / "toolkit" / "data"


def matrix(data: Path, *extra: str) -> tuple[int, float]:
    start = time.perf_counter()
    res = subprocess.run([sys.executable, "-m", "toolkit", "matrix", "--format", "github",
                          "--trigger", "schedule", *extra], cwd=ROOT, capture_output=True,
                         text=True, env={**os.environ, "TOOLKIT_DATA_DIR": str(data)})
    took = time.perf_counter() - start
    if res.returncode != 0:
        sys.exit(f"matrix failed:\n{res.stderr[-3000:]}")
    return len(json.loads(res.stdout)["include"]), took


def new_head(data: Path, version: str) -> None:
    toml = data / "apex.toml"
    text, n = re.subn(rf"ROCm/apex@[0-9a-f]+ \(release/{re.escape(version)}\)",
                      f"ROCm/apex@0123456789ab (release/{version})", toml.read_text())
    assert n == 1, version
    toml.write_text(text)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    m = load_matrix()
    entries = github_matrix(m, load_ci(m), "schedule")
    versions = sorted({b.version for b in m.builds if b.package.name == "apex"},
                      key=lambda v: tuple(int(x) for x in v.split(".")))
    tmp = Path(tempfile.mkdtemp(prefix="bench-nightly-"))
    try:
        published = write_folder(tmp / "published", m, entries)
        print(f"{'new commit on':<22}{'all':>6}{'changed':>9}{'ratio':>7}"
              f"{'all s':>8}{'changed s':>11}")
        rows = []
        for version in versions:
            data = tmp / f"data-{version}"
            shutil.copytree(DATA, data)
            new_head(data, version)
            every, changed = [], []
            for _ in range(args.runs):
                n_all, t_all = matrix(data)
                n_changed, t_changed = matrix(data, "--changed-since", str(published))
                every.append(t_all)
                changed.append(t_changed)
            rows.append((n_all, n_changed))
            print(f"{'apex release/' + version:<22}{n_all:>6}{n_changed:>9}"
                  f"{n_changed / n_all:>7.2f}{statistics.median(every):>8.2f}"
                  f"{statistics.median(changed):>11.2f}")
        n_none, _ = matrix(DATA, "--changed-since", str(published))
        print(f"{'(no change)':<22}{len(entries):>6}{n_none:>9}{n_none / len(entries):>7.2f}")
        built = sum(c for _, c in rows)
        print(f"one new apex commit: {built / len(rows):.1f} builds on average of {rows[0][0]} "
              f"(median {statistics.median(c for _, c in rows)}), "
              f"{built / sum(a for a, _ in rows):.1%} of a full nightly")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
