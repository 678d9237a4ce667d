"""Sum the per-test CPU seconds that benchmarks/cpu_plugin.py wrote.

    python benchmarks/cpu_report.py DIR [--top 40]

Prints the total CPU (each worker's own plus its children's), the costliest tests (setup,
call, teardown; own+children) and the costliest fixture setups.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("folder", type=Path)
    parser.add_argument("--top", type=int, default=40)
    args = parser.parse_args()
    tests: dict[str, dict[str, float]] = {}
    fixtures: list[dict[str, object]] = []
    total = 0.0
    paths = sorted(args.folder.glob("*.json"))
    if len(paths) > 1:  # under xdist the controller's children are its workers: counted twice
        paths = [p for p in paths if p.stem != "main"]
    for path in paths:
        data = json.loads(path.read_text())
        tests.update(data["tests"])
        fixtures.extend(data["fixtures"])
        total += data["total_own"] + data["total_kids"]
        print(f"{path.stem}: own {data['total_own']:.1f} s, children {data['total_kids']:.1f} s")

    def cost(rec: dict[str, float], phase: str) -> float:
        return rec.get(f"{phase}_own", 0.0) + rec.get(f"{phase}_kids", 0.0)

    rows = sorted(((sum(cost(r, p) for p in ("setup", "call", "teardown")), cost(r, "setup"),
                    cost(r, "call"), cost(r, "teardown"), node) for node, r in tests.items()),
                  reverse=True)
    print(f"\ntotal CPU {total:.1f} s over {len(tests)} tests; "
          f"in tests {sum(r[0] for r in rows):.1f} s")
    print(f"\n{'total':>7} {'setup':>7} {'call':>7} {'tdown':>7}  test")
    for tot, s, c, t, node in rows[:args.top]:
        print(f"{tot:7.1f} {s:7.1f} {c:7.1f} {t:7.1f}  {node}")
    fx = sorted(fixtures, key=lambda f: -(float(f["own"]) + float(f["kids"])))  # type: ignore[arg-type]
    print(f"\n{'cpu':>7}  fixture (scope) first used by")
    for f in fx[:args.top]:
        print(f"{float(f['own']) + float(f['kids']):7.1f}  {f['fixture']} ({f['scope']}) {f['node']}")  # type: ignore[arg-type]
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
