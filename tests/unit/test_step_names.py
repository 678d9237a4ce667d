"""Step names are defined once (toolkit/core/step_names.py): the plans use them, the data's
known failures take them from there, and the README lists them in the same order."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from toolkit.core.errors import DataError, ToolkitError
from toolkit.core.step_names import PUBLISH, STEP_NAMES
from toolkit.data import known
from toolkit.env.host import HostFacts
from toolkit.plan.layout import Layout
from toolkit.plan.model import Options
from toolkit.plan.planner import plan
from toolkit.plan.recipes import load_matrix

README = Path(__file__).resolve().parents[2] / "toolkit" / "README.md"


def test_the_readme_lists_the_steps_in_plan_order() -> None:
    text = README.read_text(encoding="utf-8")
    section = text[text.index("The steps of a plan, in order"):text.index("A manifest records")]
    assert tuple(re.findall(r"`([a-z]+(?:-[a-z]+)*)`", section)) == STEP_NAMES


@pytest.mark.parametrize("options", [Options(), Options(rocm_sdk_test=True),
                                     Options(rocm_from="system"),
                                     Options(recipe_options=("apex-ops=jit",))], ids=str)
def test_every_plan_names_its_steps_from_the_list_in_its_order(options: Options) -> None:
    m = load_matrix()
    seen: set[str] = set()
    for build in m.builds:
        try:
            p = plan(m, build, options, HostFacts(cores=4, mem_available_gib=8.0),
                     Layout(Path("/w"), Path("/c")))
        except ToolkitError:  # an option this build refuses (no system ROCm of that version)
            continue
        names = [s.name for s in p.steps]
        assert set(names) <= set(STEP_NAMES), (build.id, names)
        assert names == sorted(names, key=STEP_NAMES.index), (build.id, names)
        seen.update(names)
    assert seen


def test_every_plan_step_but_publish_may_be_an_expected_failure() -> None:
    assert known.STEPS == tuple(n for n in STEP_NAMES if n != PUBLISH)


def test_a_known_failure_at_publish_is_refused_naming_the_steps(data_copy: Path) -> None:
    path = data_copy / "known_failures.toml"
    text = path.read_text()
    fails = re.search(r'^fails = "([a-z-]+)"', text, re.M)
    assert fails is not None
    path.write_text(text.replace(fails.group(0), 'fails = "publish"', 1))
    with pytest.raises(DataError) as err:
        load_matrix(data_copy)
    assert "'publish' is not allowed" in str(err.value)
    assert ", ".join(known.STEPS) in str(err.value)
