"""CI publishes wheel variants where ci.toml says so: the nightly (``schedule``) and manual runs
build, for each entry whose family has several gfx targets, one variant per target
(``--variants``); pull requests and pushes build the fat wheel only. What the workflow's build
step really passes is read from the workflow and parsed by the session's own parser."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import pytest

from tests.unit import test_workflow as workflows
from toolkit.cli.commands.plan import options_from
from toolkit.cli.sessions import session_parser
from toolkit.data.ci import load_ci
from toolkit.plan.recipes import load_matrix

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def wf() -> dict[str, Any]:
    """wheels.yml with the jobs of the workflow it calls (build, test)."""
    doc = workflows._doc(workflows.WORKFLOW)
    doc["jobs"] = {**doc["jobs"], **workflows._doc(workflows.SHARD)["jobs"]}
    return doc


def _ci_toml_says(event: str) -> bool:
    import tomllib

    doc = tomllib.loads((ROOT / "toolkit" / "data" / "ci.toml").read_text())
    return bool(doc["triggers"][event].get("variants", False))


@pytest.mark.parametrize("trigger", ["pull_request", "push", "schedule", "workflow_dispatch"])
def test_the_build_step_asks_for_variants_where_ci_toml_says(
        wf: dict[str, Any], trigger: str, monkeypatch: pytest.MonkeyPatch,
        tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)  # no locks/ here
    step = workflows._step(wf, "build", "nox ")
    assert "${VARIANTS:+--variants}" in shlex.split(step["run"])
    wants = _ci_toml_says(trigger)
    assert load_ci(load_matrix()).triggers[trigger].variants is wants
    entries = workflows._entries(trigger)
    assert entries
    seen = set()
    for entry in entries[:200]:
        argv = workflows._argv(step, workflows._matrix_values(entry))
        several = len(entry["gfx"].split(",")) > 1
        assert ("--variants" in argv) is (wants and several), entry["id"]
        seen.add("--variants" in argv)
        session = argv[argv.index("-s") + 1]
        args = session_parser(session).parse_args(argv[argv.index("--") + 1:])
        _matrix, opts = options_from(args)
        assert opts.variants is (wants and several)
    if wants:
        assert True in seen  # some family of the trigger has several targets
