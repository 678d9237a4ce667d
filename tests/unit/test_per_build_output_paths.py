"""Every build writes only into its own folders (README: "The wheel lands in
`dist/<build-id>/`, its manifest in `artifacts/<build-id>/manifest.json`"; the smoke run's
JUnit in `artifacts/<build-id>/smoke-junit.xml`; locks in `locks/`), so builds sharing one
work folder never write into each other's. The build id is spelt by hand from the build's
fields, in the README's form (``apex-1.8.0-cp312-rocm7.0``)."""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Any

from toolkit.env.host import HostFacts
from toolkit.plan.layout import Layout
from toolkit.plan.model import Options
from toolkit.plan.planner import plan
from toolkit.plan.recipes import load_matrix

WORK = "/w"
LAYOUT = Layout(Path(WORK), Path("/c"))


def _paths(value: object) -> list[str]:
    """Every path under the work folder a plan's JSON names (in argv, env and actions)."""
    text = json.dumps(value)
    return re.findall(rf"{WORK}/[^\"\s:;,=]*", text)


@functools.cache
def _plans() -> list[tuple[str, dict[str, Any]]]:
    m = load_matrix()
    out = []
    for b in m.builds:
        try:
            p = plan(m, b, Options(rocm_from="pip"), HostFacts(uv="/usr/bin/uv"), LAYOUT,
                     toolkit_python="/t/python")
        except Exception:  # a build this host's options cannot plan: not this test's subject
            continue
        rocm = "cpu" if b.rocm.version == "cpu" else f"rocm{b.rocm.version}"
        by_hand = f"{b.package.name}-{b.pkg_version.version}-cp{b.python.replace('.', '')}-{rocm}"
        out.append((by_hand, json.loads(p.to_json())))
    return out


def test_each_build_writes_only_under_its_own_folders() -> None:
    plans = _plans()
    assert len(plans) > 20  # not an empty comparison
    owners: dict[str, str] = {}
    for build_id, data in plans:
        mine = tuple(f"{WORK}/{top}/{build_id}" for top in ("build", "dist", "artifacts"))
        for path in _paths(data["steps"]):
            if path.startswith(f"{WORK}/locks/"):
                continue  # the shared lock files, read only by a build
            assert path.startswith(tuple(m + "/" for m in mine)) or path in mine, (build_id, path)
            folder = "/".join(path.split("/")[:4])
            assert owners.setdefault(folder, build_id) == build_id, (folder, build_id)


def test_the_wheel_manifest_and_junit_go_where_the_readme_says() -> None:
    for build_id, data in _plans():
        steps = {s["name"]: s for s in data["steps"]}
        assert steps["publish"]["action"]["dest"] == f"{WORK}/dist/{build_id}"
        smoke = steps.get("smoke")
        if smoke is not None:
            assert f"{WORK}/artifacts/{build_id}/smoke-junit.xml" in smoke["argv"], smoke["argv"]
