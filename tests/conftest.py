"""Shared pytest configuration."""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, settings

from tests.fixtures.gate import Gate

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "toolkit" / "data"

# `nox -s mutants` runs the tests in mutmut's copy of the tree, ``mutants/``, in this process.
# The Python processes a test starts (python -m toolkit, nox, invoke) run the mutated toolkit
# too, and while mutmut collects its stats they report the functions they called, which count
# as calls of the test that started them: tests/mutation_child/sitecustomize.py, copied to
# ``mutants/`` itself, so that a child finds it wherever ``mutants/`` is on its PYTHONPATH
# (also where a test sets its own PYTHONPATH to the tree's root).
UNDER_MUTMUT = ROOT.name == "mutants" and (ROOT.parent / "toolkit" / "cli" / "mutants.py").is_file()
if UNDER_MUTMUT:
    import tempfile

    shutil.copyfile(ROOT / "tests" / "mutation_child" / "sitecustomize.py", ROOT / "sitecustomize.py")
    os.environ["TOOLKIT_MUTANTS_ROOT"] = str(ROOT)
    os.environ["TOOLKIT_MUTMUT_HITS"] = tempfile.mkdtemp(prefix="mutmut-hits-")
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH"))))

# Hypothesis profiles. Property tests leave max_examples, deadline and randomness to these
# (a test's own @settings only suppresses health checks it needs).
# - ci (CI=true): the same examples on every run (derandomize; no example database, whose
#   contents differ from clone to clone), a bounded count, and a deadline that only a real
#   blow-up misses on 2 busy cores; the too_slow health check measures the machine's load,
#   not the code, so it is off.
# - dev (otherwise): random exploration, the local example database replays past failures.
# - fuzz (`nox -s fuzz`): random, many examples, every phase including explain; failures
#   print their reproduction blob, and the session turns them into @example lines.
settings.register_profile(
    "ci", derandomize=True, database=None, max_examples=200, deadline=timedelta(seconds=5),
    suppress_health_check=[HealthCheck.too_slow], print_blob=True)
settings.register_profile("dev", max_examples=100, deadline=timedelta(seconds=2), print_blob=True)
settings.register_profile(
    "fuzz", derandomize=False, max_examples=int(os.environ.get("TOOLKIT_FUZZ_EXAMPLES", "5000")),
    deadline=None, phases=list(Phase), suppress_health_check=[HealthCheck.too_slow],
    print_blob=True, report_multiple_bugs=True)
# `--hypothesis-profile NAME` (Hypothesis's pytest plugin) loads another after this
settings.load_profile("ci" if os.environ.get("CI", "").lower() in ("true", "1") else "dev")


@pytest.fixture
def data_copy(tmp_path: Path) -> Path:
    """A writable copy of the matrix data, for malformed-data tests."""
    dest = tmp_path / "data"
    shutil.copytree(DATA, dest)
    return dest


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Never touch the user's cache from tests unless a test points it somewhere on purpose."""
    if "TOOLKIT_CACHE_DIR" not in os.environ:
        monkeypatch.setenv("TOOLKIT_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "toolkit-cache"))


# ccache (the toolkit's compiler launcher) keys a compile on its arguments, which name the
# source by its absolute path: every test builds in its own tmp folder, so the same hipcc
# compile of the sample missed the cache in every test (about 3 s of CPU each). With
# CCACHE_BASEDIR ccache names paths under it relative to the compile's folder, and the same
# compile in another tmp folder hits. Tests whose compiles must see their own folders (builds
# compared across folders or clones, hostile folder names) are marked `own_compile_paths`:
# they run without it (also when the caller set one).


@pytest.fixture(autouse=True)
def _own_compile_paths(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    if request.node.get_closest_marker("own_compile_paths"):
        monkeypatch.delenv("CCACHE_BASEDIR", raising=False)


@pytest.fixture
def gate(tmp_path: Path) -> Iterator[Gate]:
    """A build that waits for the test (see ``tests.fixtures.gate``)."""
    g = Gate(tmp_path / "gate")
    yield g
    g.close()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--run-network", action="store_true", default=False,
                     help="also run tests marked `network` (they download real wheels from PyPI)")
    parser.addoption("--third-recipe", action="store_true", default=False,
                     help="register the torchao-style test recipe abi3_ext and its data "
                          "(also: TOOLKIT_TEST_THIRD_RECIPE=1)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--run-network"):
        return
    skip = pytest.mark.skip(reason="needs PyPI: run with --run-network")
    for item in items:
        if "network" in item.keywords:
            item.add_marker(skip)


# A third recipe (tests/fixtures/third_recipe.py), registered for the whole run: the suite
# must pass unchanged with it (no test enumerates the recipes or the packages).


def pytest_configure(config: pytest.Config) -> None:
    if "CCACHE_BASEDIR" not in os.environ:  # see _own_compile_paths; xdist's workers inherit it
        import tempfile

        os.environ["CCACHE_BASEDIR"] = str(Path(tempfile.gettempdir()).resolve())
    if not (config.getoption("third_recipe")
            or os.environ.get("TOOLKIT_TEST_THIRD_RECIPE") == "1"):
        return
    import tempfile

    from toolkit.plan.recipes import register_named

    # for this process and every child (python -m toolkit, nox, invoke, xdist's workers): the
    # recipe by name; the registry imports it (importing the fixture first would be a cycle)
    named = "tests.fixtures.third_recipe:Abi3Recipe"
    os.environ["TOOLKIT_RECIPES"] = named
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, (str(ROOT),
                                                             os.environ.get("PYTHONPATH"))))
    register_named(named)
    from tests.fixtures.third_recipe import data_folder

    folder = Path(tempfile.mkdtemp(prefix="third-recipe-")) / "data"
    os.environ["TOOLKIT_DATA_DIR"] = str(data_folder(folder, DATA))


# earlier runs' tmp folders: removed behind this run's tests, not after them
# (tests/fixtures/old_runs.py)
OLD_RUNS = pytest.StashKey[threading.Thread | None]()


def pytest_sessionstart(session: pytest.Session) -> None:
    from tests.fixtures import old_runs

    session.config.stash[OLD_RUNS] = old_runs.start(session.config)


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    thread = session.config.stash.get(OLD_RUNS, None)
    if thread is not None:  # before pytest's own clean-up, which then has nothing left
        thread.join()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_teardown(item: pytest.Item) -> None:
    """Under mutmut's stats: the functions the test's child processes called, as its own."""
    folder = os.environ.get("TOOLKIT_MUTMUT_HITS")
    if not (UNDER_MUTMUT and folder and os.environ.get("MUTANT_UNDER_TEST") == "stats"):
        return
    from mutmut.state import state

    for path in Path(folder).glob("*.hits"):
        state()._stats.update(path.read_text(encoding="utf-8").split())
        path.unlink()


# xdist sets a module-scoped fixture up once on every worker that runs one of its tests: on 2
# workers the module fixtures that build the demo were built twice. Plain `-n N` ("load")
# therefore keeps each integration module whose module fixture builds (SHARED in
# tests/fixtures/scheduling.py) on one worker and spreads every other test one by one, as
# "load" does. (xdist's own `--dist loadgroup` does not group under pytest 9, whose node ids
# it can no longer suffix.)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    if config.getvalue("dist") != "load":
        return None
    from tests.fixtures.scheduling import ModuleFixtureScheduling

    return ModuleFixtureScheduling(config, log)
