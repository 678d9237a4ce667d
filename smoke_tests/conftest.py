"""Smoke tests: run by a build environment's own Python against its *installed* wheels.

Options (or environment variables, for runners that cannot pass options):

* ``--manifest PATH`` (``TOOLKIT_SMOKE_MANIFEST``): the build's ``manifest.json``;
* ``--build ID`` (``TOOLKIT_SMOKE_BUILD``) with ``--workdir DIR`` (``TOOLKIT_WORKDIR``,
  default: the current folder): find ``DIR/artifacts/ID/manifest.json`` instead;
* ``--gfx TARGETS`` (``TOOLKIT_SMOKE_GFX``): comma list; default: the build's own targets;
* ``--require-gpu`` (``TOOLKIT_SMOKE_REQUIRE_GPU=1``): a missing or different GPU fails the
  GPU runtime tests instead of skipping them;
* ``--test-timeout S`` (``TOOLKIT_SMOKE_TEST_TIMEOUT``, default 900; 0: none): the limit of
  one test (setup, call and teardown), see "Time limit" below;
* ``--status-file PATH`` (``TOOLKIT_SMOKE_STATUS``): where the test running now is written
  (JSON), so a runner that stops pytest can name it.

Time limit (no plugin: nothing to install, and it also ends a test stuck in native code).
At the limit, SIGALRM fails the running test (``pytest.fail``: "<test id> timed out after S s
(the per-test limit, --test-timeout)"); pytest goes on with the next test and the JUnit XML
records the failure. A test that cannot be interrupted (blocked in a GPU driver call that
never returns to Python) is ended ``WATCHDOG_GRACE_S`` later by a watchdog thread: one line
naming the test and the limit on stderr, every thread's traceback (faulthandler), the
status file marked ``hung``, and pytest ends with exit ``WATCHDOG_EXIT`` (9).

``python -m toolkit smoke`` passes all of these; it also installs pytest, packaging and
zstandard into the environment and puts the toolkit (only it) on ``PYTHONPATH``. Run
standalone, this file makes the toolkit importable itself (a link in a scratch folder).

Tests are parameterised by package-version (``build``), gfx target (``target``) and
expected module (``module``); ``@pytest.mark.package(...)`` tests of other packages are
deselected, ``@pytest.mark.needs_torch`` tests skip with the reason for packages without torch.
"""

from __future__ import annotations

import faulthandler
import json
import os
import signal
import sys
import sysconfig
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent


def _ensure_toolkit() -> None:
    """Run standalone, make the toolkit this suite belongs to importable (only it)."""
    try:
        import toolkit  # noqa: F401
    except ImportError:
        # installed: this folder is toolkit/smoke_suite; in the repository: smoke_tests/
        # next to toolkit/
        package = HERE.parent if (HERE.parent / "__init__.py").is_file() else HERE.parent / "toolkit"
        shim = Path(tempfile.mkdtemp(prefix="toolkit-shim-"))
        (shim / "toolkit").symlink_to(package, target_is_directory=True)
        sys.path.append(str(shim))


_ensure_toolkit()


# ------------------------------------------------------------------------------ build facts
@dataclass(frozen=True)
class BuildInfo:
    id: str
    package: str
    version: str
    recipe: str
    dist: str
    python: str
    rocm: str
    torch: str | None  # the torch minor the build was planned for
    hip: str | None  # the HIP major.minor of the build's ROCm release
    needs_torch: bool
    carries_gpu_code: bool
    expected_modules: tuple[str, ...]
    targets: tuple[str, ...]  # what it was built for
    env_dir: Path | None
    # the recipe's expectations (toolkit's Recipe.smoke_expectations): the optional test
    # groups (markers) this build runs, where the package records the torch it was built for
    markers: tuple[str, ...] = ()
    recorded_torch: tuple[dict[str, Any], ...] = ()
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def label(self) -> str:
        return f"{self.package}-{self.version}"

    def installed_version(self) -> str:
        return metadata.version(self.dist)

    def libraries(self) -> list[Path]:
        """The native files the installed distribution ships (.so, .so.N, .hsaco, .co)."""
        dist = metadata.distribution(self.dist)
        out: list[Path] = []
        for f in dist.files or ():
            name = f.name
            if name.endswith((".so", ".hsaco", ".co")) or ".so." in name:
                out.append(Path(str(dist.locate_file(f))).resolve())
        return sorted(out)


def _load_manifest(config: pytest.Config) -> tuple[dict[str, Any], Path]:
    path = config.getoption("manifest") or os.environ.get("TOOLKIT_SMOKE_MANIFEST")
    if not path:
        build = config.getoption("build") or os.environ.get("TOOLKIT_SMOKE_BUILD")
        if not build:
            raise pytest.UsageError("give --manifest PATH or --build ID (the smoke suite tests one "
                                    "build; `python -m toolkit smoke` passes them)")
        workdir = Path(config.getoption("workdir") or os.environ.get("TOOLKIT_WORKDIR") or ".")
        path = str(workdir / "artifacts" / build / "manifest.json")
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise pytest.UsageError(f"cannot read the build manifest {p}: {err}") from None
    if not isinstance(data, dict) or not isinstance(data.get("build"), dict):
        raise pytest.UsageError(f"{p} is not a build manifest (no 'build' object)")
    missing = [k for k in ("id", "package", "version") if not data["build"].get(k)]
    if missing:
        raise pytest.UsageError(f"{p} is not a build manifest (its 'build' object lacks "
                                f"{', '.join(missing)})")
    return data, p


def _facts(data: dict[str, Any]) -> dict[str, Any]:
    facts = data.get("smoke")
    if isinstance(facts, dict):
        return facts
    from toolkit.verify.smoke import smoke_facts  # standalone run: ask the toolkit

    return smoke_facts(data)


def installed_modules(dist: str) -> tuple[str, ...]:
    """The top-level packages and modules the installed distribution ``dist`` lists in its
    RECORD (what a project outside the matrix is smoke-tested by); () when it is not here."""
    try:
        files = metadata.distribution(dist).files or []
    except metadata.PackageNotFoundError:
        return ()
    names: dict[str, None] = {}
    for f in files:
        parts = f.parts
        top = parts[0]
        if top.endswith((".dist-info", ".data")) or top in ("..", "__pycache__"):
            continue
        if len(parts) > 1:
            if top.isidentifier():
                names[top] = None
        elif top.endswith(".py") or top.endswith((".so", ".pyd")):
            stem = top.split(".")[0]
            if stem.isidentifier():
                names[stem] = None
    return tuple(names)


def build_info(data: dict[str, Any]) -> BuildInfo:
    b = data["build"]
    facts = _facts(data)
    env = data.get("env_dir")
    return BuildInfo(
        id=str(b["id"]), package=str(b["package"]), version=str(b["version"]),
        recipe=str(data.get("recipe") or b["package"]), dist=str(data.get("dist") or b["package"]),
        python=str(b.get("python", "")), rocm=str(b.get("rocm", "")),
        torch=facts.get("torch") or None, hip=facts.get("hip") or None,
        needs_torch=bool(facts.get("needs_torch")),
        carries_gpu_code=bool(facts.get("carries_gpu_code")),
        expected_modules=tuple(data.get("expected_modules") or ())
        or installed_modules(str(data.get("dist") or b["package"])),
        targets=tuple(data.get("targets") or ()),
        env_dir=Path(env) if env else None,
        markers=tuple(str(m) for m in facts.get("markers") or ()),
        recorded_torch=tuple(r for r in facts.get("recorded_torch") or () if isinstance(r, dict)),
        raw=data,
    )


# ------------------------------------------------------------------------------ pytest hooks
def pytest_addoption(parser: pytest.Parser) -> None:
    g = parser.getgroup("smoke", "toolkit smoke tests")
    g.addoption("--manifest", default=None, help="the build's manifest.json")
    g.addoption("--build", default=None, help="build id (with --workdir: finds its manifest)")
    g.addoption("--workdir", default=None, help="work folder holding artifacts/<id>/")
    g.addoption("--gfx", default=None, help="gfx targets, comma list (default: the build's)")
    g.addoption("--require-gpu", action="store_true", default=False,
                help="fail (not skip) GPU runtime tests without a GPU of the requested target")
    g.addoption("--test-timeout", default=None, type=float, metavar="S",
                help=f"limit of one test in seconds (default {DEFAULT_TEST_TIMEOUT_S:g}; "
                     "0: none)")
    g.addoption("--status-file", default=None, metavar="PATH",
                help="write the test running now there (JSON), for the runner")


# test groups a recipe's expectations turn on (``markers``); off for every other build
OPTIONAL_MARKERS = ("apex_jit",)
_BUILD = pytest.StashKey[BuildInfo]()
_TARGETS = pytest.StashKey[tuple[str, ...]]()


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("help", False):
        return
    data, _ = _load_manifest(config)
    info = build_info(data)
    raw = config.getoption("gfx") or os.environ.get("TOOLKIT_SMOKE_GFX") or ""
    targets = tuple(t for t in raw.replace(";", ",").split(",") if t.strip()) or info.targets
    if not targets:
        raise pytest.UsageError(f"no gfx targets: give --gfx (the manifest of {info.id} names none)")
    config.stash[_BUILD] = info
    config.stash[_TARGETS] = tuple(t.strip() for t in targets)


def pytest_report_header(config: pytest.Config) -> list[str]:
    info = config.stash.get(_BUILD, None)
    if info is None:
        return []
    return [f"smoke: build {info.id} ({info.dist}), environment {sys.prefix}",
            f"smoke: targets {', '.join(config.stash[_TARGETS])}"]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    info = metafunc.config.stash[_BUILD]
    if "build" in metafunc.fixturenames:
        metafunc.parametrize("build", [info], ids=[info.label], scope="session")
    if "target" in metafunc.fixturenames:
        targets = metafunc.config.stash[_TARGETS]
        metafunc.parametrize("target", targets, ids=list(targets), scope="session")
    if "module" in metafunc.fixturenames:
        mods = info.expected_modules
        metafunc.parametrize("module", mods, ids=list(mods))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    info = config.stash[_BUILD]
    keep, drop = [], []
    for item in items:
        pkg = item.get_closest_marker("package")
        if pkg is not None and info.recipe not in pkg.args:
            drop.append(item)
        elif any(item.get_closest_marker(m) is not None and m not in info.markers
                 for m in OPTIONAL_MARKERS):
            drop.append(item)
        else:
            keep.append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def pytest_runtest_setup(item: pytest.Item) -> None:
    info = item.config.stash[_BUILD]
    if item.get_closest_marker("needs_torch") is not None and not info.needs_torch:
        pytest.skip(f"{info.package} does not use torch: no torch in its environment to compare")


# ------------------------------------------------------------------------------ time limit
DEFAULT_TEST_TIMEOUT_S = 900.0
WATCHDOG_GRACE_S = 10.0  # after the limit, before a test that SIGALRM cannot stop is ended
WATCHDOG_EXIT = 9  # pytest's exit when the watchdog ended it (toolkit's TimedOut)


def _test_limit(config: pytest.Config) -> float:
    raw = config.getoption("test_timeout")
    if raw is None:
        raw = os.environ.get("TOOLKIT_SMOKE_TEST_TIMEOUT") or DEFAULT_TEST_TIMEOUT_S
    try:
        limit = float(raw)
    except ValueError:
        raise pytest.UsageError(f"--test-timeout: not a number of seconds: {raw!r}") from None
    return max(0.0, limit)


def timed_out_message(nodeid: str, limit: float) -> str:
    return f"{nodeid} timed out after {limit:g} s (the per-test limit, --test-timeout)"


def _status(config: pytest.Config, **fields: Any) -> None:
    """The test running now, for the runner (one file per xdist worker)."""
    path = config.getoption("status_file") or os.environ.get("TOOLKIT_SMOKE_STATUS")
    if not path:
        return
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    target = Path(f"{path}.{worker}" if worker else path)
    tmp = target.with_name(target.name + ".tmp")
    try:
        tmp.write_text(json.dumps(fields), encoding="utf-8")
        os.replace(tmp, target)
    except OSError:
        pass  # the runner then names no test, nothing worse


def _watchdog(config: pytest.Config, nodeid: str, limit: float) -> None:
    """The test did not stop at SIGALRM (native code): end pytest, naming it."""
    line = timed_out_message(nodeid, limit)
    _status(config, test=nodeid, limit=limit, hung=True)
    try:  # pytest captures the test's output: write to the real streams
        capman = config.pluginmanager.getplugin("capturemanager")
        if capman is not None:
            capman.suspend_global_capture(in_=False)
        sys.stdout.flush()
        sys.stderr.write(f"\nsmoke: {line} and did not stop; ending the run\n")
        sys.stderr.flush()
        faulthandler.dump_traceback(sys.stderr, all_threads=True)
    finally:
        os._exit(WATCHDOG_EXIT)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    limit = _test_limit(item.config)
    _status(item.config, test=item.nodeid, limit=limit, hung=False)
    if not limit:
        yield
        _status(item.config)
        return

    def alarm(signum: int, frame: Any) -> None:
        pytest.fail(timed_out_message(item.nodeid, limit), pytrace=False)

    main = threading.current_thread() is threading.main_thread()
    if main:
        previous = signal.signal(signal.SIGALRM, alarm)
        signal.setitimer(signal.ITIMER_REAL, limit)
    dog = threading.Timer(limit + WATCHDOG_GRACE_S, _watchdog, (item.config, item.nodeid, limit))
    dog.daemon = True
    dog.start()
    try:
        yield
    finally:
        dog.cancel()
        if main:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
        _status(item.config)


# ------------------------------------------------------------------------------ fixtures
@pytest.fixture(scope="session")
def site_packages() -> list[Path]:
    """The running environment's site-packages folders."""
    paths = sysconfig.get_paths()
    return sorted({Path(paths["purelib"]).resolve(), Path(paths["platlib"]).resolve()})


@pytest.fixture(scope="session")
def require_gpu(pytestconfig: pytest.Config) -> bool:
    return bool(pytestconfig.getoption("require_gpu")
                or os.environ.get("TOOLKIT_SMOKE_REQUIRE_GPU", "") in ("1", "true", "yes"))


@pytest.fixture(scope="session")
def detection() -> Any:
    from toolkit.env.gpus import detect

    return detect()


@dataclass(frozen=True)
class Device:
    gfx: str
    index: int  # among the GPUs found (the HIP device index when nothing is hidden)
    source: str


@pytest.fixture
def gpu(target: str, detection: Any, require_gpu: bool) -> Device:
    """The GPU of the requested target; skip (or fail with --require-gpu) without one."""
    reason = detection.mismatch(target)
    if reason:
        if require_gpu:
            pytest.fail(f"--require-gpu: {reason}", pytrace=False)
        pytest.skip(reason)
    found = detection.find(target)
    return Device(found.gfx, list(detection.gpus).index(found), found.source)


@pytest.fixture
def torch_device(gpu: Device, build: BuildInfo) -> Any:
    import torch

    if not torch.cuda.is_available():
        pytest.fail(f"a {gpu.gfx} GPU is present ({gpu.source}) but torch {torch.__version__} "
                    "sees no device (HIP_VISIBLE_DEVICES? permissions on /dev/kfd?)", pytrace=False)
    return torch.device("cuda", gpu.index)


@pytest.fixture
def load(build: BuildInfo) -> Any:
    """``load(name)`` imports a module as users do: torch first for packages built against it."""
    import importlib

    def _load(name: str) -> Any:
        if build.needs_torch:
            import torch  # noqa: F401
        return importlib.import_module(name)

    return _load
