"""Every list that reaches a plan has a defined order: the same plans, identities and CI
matrix under any ``PYTHONHASHSEED`` (issue 27: a project's build requirements came from
pypa/build as a set and were planned in set order, so repro refused 4 seeds in 8).

Each seed runs in its own interpreter (the seed is fixed at start-up); the test compares
what they print. Two seeds, each run also showing that the two order a set of the same
strings differently (Python's own ``set``): equal outputs are then no accident of two seeds
that happen to agree. The project read through pypa/build has several build requirements, so
a set order would show.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SEEDS = ("0", "1")
# what each run prints last: the order Python's set gives the strings in `names` under its seed
SET_ORDER = "print(json.dumps(list(set(names))))"

PLAN_ALL = """
import hashlib, json, sys
from pathlib import Path
from toolkit.env.host import HostFacts
from toolkit.plan.layout import Layout
from toolkit.plan.model import Options
from toolkit.plan.planner import plan
from toolkit.plan.recipes import load_matrix
from toolkit.run.identity import planned_identity
m = load_matrix()
layout = Layout(Path("/w"), Path("/c"))
out = []
for b in m.builds:
    for rocm_from in ("pip", "system"):
        try:
            p = plan(m, b, Options(rocm_from=rocm_from), HostFacts(cores=8), layout,
                     toolkit_python="/t/python")
        except Exception as err:
            out.append([b.id, rocm_from, type(err).__name__, str(err)])
            continue
        out.append([b.id, rocm_from, p.to_json(), planned_identity(p, layout)])
print(hashlib.sha256(json.dumps(out, sort_keys=True).encode()).hexdigest(), len(out))
names = [b.id for b in m.builds]
""" + SET_ORDER

PROJECT = """
import json, sys
from pathlib import Path
from toolkit.env.project import read_project
info = read_project(sys.argv[1], Path(sys.argv[2]) / sys.argv[3] / "meta.log")
print(json.dumps(info.requires))
names = [r.split(">")[0] for r in info.requires]
""" + SET_ORDER


def _run_each(seeds: tuple[str, ...], *argv: str, seed_args: bool = False) -> dict[str, str]:
    """What ``python ARGV`` prints under each ``PYTHONHASHSEED``; the interpreters run side by
    side (each waits on its own pip and files), with the seed as the last argument if asked."""
    procs = {seed: subprocess.Popen([sys.executable, *argv, *([seed] if seed_args else [])], cwd=ROOT,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                    env={**os.environ, "PYTHONHASHSEED": seed})
             for seed in seeds}
    out: dict[str, str] = {}
    try:
        for seed, proc in procs.items():
            stdout, stderr = proc.communicate(timeout=300)
            assert proc.returncode == 0, stderr[-3000:]
            out[seed] = stdout
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    return out


def same_under_seeds_that_differ(outputs: dict[str, str]) -> str:
    """What every seed printed (all the same) but the last line, which must differ: each
    seed's own set order of the same strings."""
    printed = {seed: out.strip().rsplit("\n", 1) for seed, out in outputs.items()}
    assert len({o[0] for o in printed.values()}) == 1, outputs
    orders = [o[1] for o in printed.values()]
    assert len(set(orders)) == len(orders), \
        f"seeds {list(outputs)} order a set alike: {orders[0][:300]}"
    return printed[SEEDS[0]][0]


def test_every_matrix_plan_is_the_same_under_any_hash_seed() -> None:
    out = same_under_seeds_that_differ(_run_each(SEEDS, "-c", PLAN_ALL))
    assert int(out.split()[1]) > 50  # every build, twice: not an empty comparison


def test_ci_matrix_is_the_same_under_any_hash_seed() -> None:
    argv = ("-m", "toolkit", "matrix", "--format", "github", "--trigger", "schedule")
    outputs = _run_each(SEEDS, *argv)
    assert len(set(outputs.values())) == 1
    assert outputs["0"].strip()
    # the same under every seed could be the same mistake each time: the listing is also held
    # to what does not come from the code (README: ids like apex-1.8.0-cp312-rocm7.0; the
    # family's targets as toolkit/data/gpus.toml spells them; no known failure on schedule
    # without --include-known-failures; one entry per build and family)
    import json
    import re

    import tomllib

    gpus = tomllib.loads((ROOT / "toolkit" / "data" / "gpus.toml").read_text())["families"]
    members = {name: set(f["targets"]) for name, f in gpus.items()}
    members.update({alias: set(f["targets"]) for f in gpus.values() for alias in f.get("aliases", [])})
    entries = json.loads(outputs["0"])["include"]
    # the two seeds order a set of these very ids differently: one listing is no accident
    probe = f"import json; names = {json.dumps([e['id'] for e in entries])}\n{SET_ORDER}"
    orders = _run_each(SEEDS, "-c", probe)
    assert len(set(orders.values())) == len(SEEDS), f"seeds {SEEDS} order the ids alike"
    assert len({e["artifact"] for e in entries}) == len(entries)
    # a version whose data says `abi3 = "cp39"` is one wheel named by that tag (README:
    # <pkg>-<ver>-cp39-abi3-rocm<r>), read from the package's data file, not from the code
    data = Path(os.environ.get("TOOLKIT_DATA_DIR") or ROOT / "toolkit" / "data")
    abi3 = {(pkg, v["version"]): v.get("abi3", "") for pkg in {e["package"] for e in entries}
            for v in tomllib.loads((data / f"{pkg}.toml").read_text())["versions"]}
    for e in entries:
        rocm = "cpu" if e["rocm"] == "cpu" else "rocm" + e["rocm"]
        limited = abi3[(e["package"], e["version"])]
        tag = f"{limited}-abi3" if limited else f"cp{e['python'].replace('.', '')}"
        assert e["id"] == f"{e['package']}-{e['version']}-{tag}-{rocm}", e
        assert re.fullmatch(r"gfx[0-9a-f]+(,gfx[0-9a-f]+)*", e["gfx"]), e
        assert set(e["gfx"].split(",")) <= members[e["family"]], e
        assert e["known_failure"] == "", e


@pytest.mark.parametrize("requires", [
    ["setuptools>=64", "wheel", "packaging", "tomli", "six"],  # five names a set orders by hash
])
def test_a_projects_build_requirements_keep_one_order(tmp_path: Path,
                                                       requires: list[str]) -> None:
    """pypa/build gives ``build_system_requires`` as a set: read under several seeds, the
    project's requirements are listed the same way each time (sorted: a defined order)."""
    src = tmp_path / "proj"
    src.mkdir()
    quoted = ", ".join(f'"{r}"' for r in requires)
    (src / "pyproject.toml").write_text(
        f'[build-system]\nrequires = [{quoted}]\nbuild-backend = "setuptools.build_meta"\n'
        '[project]\nname = "seeded"\nversion = "1.0"\n')
    seen = same_under_seeds_that_differ(
        _run_each(SEEDS, "-c", PROJECT, str(src), str(tmp_path), seed_args=True))
    import json

    listed = json.loads(seen)
    assert listed[:len(requires)] == sorted(requires)
