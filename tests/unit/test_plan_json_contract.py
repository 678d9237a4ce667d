"""A plan's JSON is recorded in every manifest (``plan``), and manifests are read back by
``toolkit.run.manifest_schema.validate``: each plan must meet that part of the manifest
schema, judged by jsonschema itself."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema

from toolkit.env.host import HostFacts, SystemRocm
from toolkit.plan.layout import Layout
from toolkit.plan.model import Options
from toolkit.plan.planner import plan
from toolkit.plan.recipes import load_matrix
from toolkit.plan.recipes.sample import demo_build
from toolkit.run.manifest_schema import SCHEMA

LAYOUT = Layout(Path("/w"), Path("/c"))


def test_every_plans_json_is_what_a_manifest_may_record() -> None:
    validator = jsonschema.Draft202012Validator(SCHEMA["properties"]["plan"])
    m = load_matrix()
    host = HostFacts(cores=16, mem_available_gib=64.0, interpreters={"3.12": "/usr/bin/python3.12"},
                     system_rocm=SystemRocm("/opt/rocm", "5.2"))
    builds = {(b.package.name, b.rocm.version): b for b in m.builds if b.python == "3.12"}
    plans = [plan(m, b, Options(), host, LAYOUT) for b in builds.values()]
    # 7.0's pip SDK: TheRock's legacy per-family nightlies (its default is a system ROCm)
    plans += [plan(m, b, Options(channel="nightly"), host, LAYOUT)
              for b in builds.values() if b.rocm.sdk.layout == "per-family"]
    plans += [plan(m, demo_build("3.12", hip), Options(rocm_from="system", gfx=("gfx90a",)), host, LAYOUT)
              for hip in (("/opt/rocm", "5.2"), None)]
    families = set()
    for p in plans:
        doc = json.loads(p.to_json())
        errors = [e.message for e in validator.iter_errors(doc)]
        assert errors == [], (p.build.id, errors)
        assert doc["family"] == p.family and doc["targets"] == list(p.targets)
        families.add(doc["family"])
    assert None in families and len(families) >= 2  # multi-arch or no SDK, and per-family ones


LEGEND = "\n# placeholders filled while running:\n"


def test_the_legend_explains_exactly_the_placeholders_the_steps_show() -> None:
    import re

    from toolkit.plan.model import render

    m = load_matrix()
    host = HostFacts(cores=16, mem_available_gib=64.0)
    for bid in ("apex-1.8.0-cp312-rocm7.0", "fbgemm_gpu-1.3.0-cp312-rocm6.4"):
        text = render(plan(m, m.build(bid), Options(gfx=("gfx90a",)), host, LAYOUT))
        steps, legend = text.split(LEGEND)
        shown = set(re.findall(r"\{[A-Z][A-Z0-9_]*\}", steps))
        explained = [line.split(" = ")[0].removeprefix("#   ") for line in legend.splitlines()]
        assert len(explained) == len(set(explained)) and set(explained) == shown, bid
        assert {"{WHEEL}", "{INTERPRETER}"} <= shown  # learned by name-wheel and check-env
