"""A pytest plugin recording each test's CPU time, its own and its children's, per phase and per fixture.

    python -m pytest -p benchmarks.cpu_plugin --cpu-report=DIR [...]

CPU is what a loaded machine cannot distort much, unlike wall time: user+system seconds of the
pytest process (RUSAGE_SELF) plus those of every child it waited for (RUSAGE_CHILDREN: builds,
nox, pip, uv, hipcc ...) counted as deltas around each test's setup, call and teardown and
around each fixture's setup. Every process (each xdist worker) writes DIR/<worker>.json;
``python benchmarks/cpu_report.py DIR`` sums them.
"""

from __future__ import annotations

import json
import os
import resource
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

_RECORDS: dict[str, dict[str, float]] = {}
_FIXTURES: list[dict[str, Any]] = []


def _cpu() -> tuple[float, float]:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, kids.ru_utime + kids.ru_stime


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--cpu-report", default=None, metavar="DIR",
                     help="write per-test CPU seconds (own and children's) to DIR/<worker>.json")


def _phase(item: pytest.Item, phase: str) -> Generator[None, None, None]:
    own0, kids0 = _cpu()
    yield
    own1, kids1 = _cpu()
    rec = _RECORDS.setdefault(item.nodeid, {})
    rec[f"{phase}_own"] = own1 - own0
    rec[f"{phase}_kids"] = kids1 - kids0


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, None, None]:
    yield from _phase(item, "setup")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    yield from _phase(item, "call")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Generator[None, None, None]:
    yield from _phase(item, "teardown")


@pytest.hookimpl(hookwrapper=True)
def pytest_fixture_setup(fixturedef: pytest.FixtureDef[Any],
                         request: pytest.FixtureRequest) -> Generator[None, None, None]:
    own0, kids0 = _cpu()
    yield
    own1, kids1 = _cpu()
    node = getattr(request, "node", None)
    _FIXTURES.append({"fixture": fixturedef.argname, "scope": fixturedef.scope,
                      "node": getattr(node, "nodeid", ""),
                      "own": own1 - own0, "kids": kids1 - kids0})


def pytest_sessionfinish(session: pytest.Session) -> None:
    out = session.config.getoption("--cpu-report")
    if not out:
        return
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    own, kids = _cpu()
    (folder / f"{worker}.json").write_text(json.dumps(
        {"tests": _RECORDS, "fixtures": _FIXTURES, "total_own": own, "total_kids": kids},
        indent=1))
