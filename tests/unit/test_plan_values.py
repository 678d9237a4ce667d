"""Every plan's text and JSON carry real values: no Python ``None`` printed, and every
placeholder is one the executor fills."""

from __future__ import annotations

import re
from pathlib import Path

from tests.unit.plan_truths import demo_plan
from toolkit.core.errors import UsageError
from toolkit.core.steps.env import ProvideLibrary
from toolkit.data.matrix import load_matrix
from toolkit.env.host import HostFacts, SystemRocm
from toolkit.plan.layout import Layout
from toolkit.plan.model import Options, Plan, render
from toolkit.plan.planner import plan

LAYOUT = Layout(Path("/w"), Path("/c"))


def _demo(hip: tuple[str, str] | None) -> Plan:
    return demo_plan(hip)  # type: ignore[no-any-return]


PY_NONE = re.compile(r"(?<!'Cuda )\bNone\b")  # apex's own message quotes 'Cuda None'


def _plans() -> list[Plan]:
    m = load_matrix()
    host = HostFacts(cores=16, mem_available_gib=64.0, interpreters={"3.12": "/usr/bin/python3.12"},
                     system_rocm=SystemRocm("/opt/rocm", "7.0"))
    out = [_demo(("/opt/rocm", "5.2")), _demo(None)]
    picked = {(b.package.name, b.version, b.rocm.version): b for b in m.builds}  # one per version/ROCm
    for b in picked.values():
        for opts in (Options(), Options(naming="upstream", gfx=("gfx90a",)), Options(rocm_from="system")):
            try:
                out.append(plan(m, b, opts, host, LAYOUT))
            except UsageError:
                continue  # e.g. a release whose targets cannot be given
    return out


def test_a_dry_run_shows_values_never_pythons_none() -> None:
    """The plan is the truth of what a build does: every path, placeholder and label in its
    text and JSON is a real value (a None that slipped in would print as "None")."""
    plans = _plans()
    assert len(plans) > 60
    for p in plans:
        text = render(p)
        assert not PY_NONE.search(text), (p.build.id, [ln for ln in text.splitlines() if PY_NONE.search(ln)])
        js = p.to_json()
        assert '"None' not in js and "None/" not in js, p.build.id


def test_every_placeholder_of_a_plan_is_one_the_executor_fills() -> None:
    from toolkit.core.steps import PLACEHOLDER_HELP, CheckWheel, Publish

    known = {p for p in PLACEHOLDER_HELP if "<" not in p}
    for p in _plans():
        provided = {s.action.placeholder for s in p.steps if isinstance(s.action, ProvideLibrary)}
        for s in p.steps:
            for ph in re.findall(r"\{[A-Za-z0-9_]+\}", s.text()):
                assert ph in known | provided, (p.build.id, s.name, ph)
        # the wheel name-wheel learns is what check, install and publish are given, as is
        check, publish = p.step("check").action, p.step("publish").action
        assert isinstance(check, CheckWheel) and isinstance(publish, Publish)
        assert check.wheel == publish.wheel == "{WHEEL}"
        assert publish.dest == str(LAYOUT.dist(p.build)) and check.cwd == str(LAYOUT.artifacts(p.build))
        if p.options.smoke:
            assert p.step("install-wheel").action.argv[-3:] == (  # type: ignore[union-attr]
                "--no-deps", "--reinstall", "{WHEEL}")
        if p.build.package.name in ("apex", "fbgemm_gpu"):  # torch extensions resolve against torch
            assert "{TORCH_LIB}" in check.with_libs
        assert set(check.with_libs) >= provided
        env = dict(p.step("build-wheel").action.build.env)  # type: ignore[union-attr]
        assert (env["LDSHARED"], env["LDCXXSHARED"]) == ("{LDSHARED}", "{LDCXXSHARED}")
        # C, C++ and HIP compiles all map the interpreter's prefix away
        for var in ("CFLAGS", "CXXFLAGS", "HIPCC_COMPILE_FLAGS_APPEND"):
            assert env[var].endswith("{PYTHON_PREFIX_MAP}"), (var, env[var])
