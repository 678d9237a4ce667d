"""Run the smoke suite (``smoke_tests/``) inside a build's environment, against its wheels.

The suite runs under the environment's own Python, from a scratch folder outside the repo,
with ``--import-mode=importlib`` and no cache provider, so only the *installed* wheel can be
imported. What the suite needs besides the wheel is put there by the runner:

* ``pytest`` (and ``pytest-xdist`` for ``-n``), ``packaging`` and ``zstandard`` are installed
  into the environment with uv, only when missing (the checks engine needs the last two);
* the toolkit itself is *not* installed: a scratch folder holding one link,
  ``toolkit -> <the installed toolkit package>``, is put on ``PYTHONPATH``;
* the build's manifest plus a ``smoke`` section of facts only the host knows (does the
  package use torch, which HIP version the ROCm release has) is written to the scratch
  folder and passed as ``--manifest``.

The manifest is the build's own ``artifacts/<id>/manifest.json`` whenever it exists (a
running build writes one when it starts, so its own smoke step reads it too). Only for a
build id without one (``--build ID --env PATH``) is it made from the build id, with the
same shared fields as the build's (``toolkit.run.manifest.recipe_facts``).

Results come back through pytest's JUnit XML (read by ``toolkit.verify.junit``, as
``report --junit`` reads it), which is also what ``--junit`` keeps for CI. Nothing here
prints: progress goes to a ``Reporter``; pytest's own output goes to the text stream the
caller gives (``out``), else to ``reporter.output``.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from toolkit.core.errors import CheckFailed, CommandFailed, EnvironmentProblem, UsageError
from toolkit.core.files import write_atomic
from toolkit.core.proc import Result
from toolkit.core.proc import run as run_command
from toolkit.core.proc import stream as stream_command
from toolkit.core.reporter import NullReporter, Reporter
from toolkit.verify import junit as junit_xml
from toolkit.verify import smoke_limits as limits
from toolkit.verify.smoke_builds import DEMO_HINT as DEMO_HINT  # which build: its own module
from toolkit.verify.smoke_builds import SmokeTarget as SmokeTarget
from toolkit.verify.smoke_builds import build_for_id as build_for_id
from toolkit.verify.smoke_builds import load_target as load_target
from toolkit.verify.smoke_builds import manifest_for_id as manifest_for_id
from toolkit.verify.smoke_builds import manifests as manifests
from toolkit.verify.smoke_builds import newest_successful as newest_successful
from toolkit.verify.smoke_builds import read_manifest as read_manifest
from toolkit.verify.smoke_builds import resolve as resolve

if TYPE_CHECKING:
    pass

PACKAGE = Path(__file__).resolve().parent.parent  # the installed toolkit package


def suite_dir() -> Path:
    """The smoke suite as installed (``toolkit.smoke_suite``: ``smoke_tests/`` of the repo);
    in a source tree that is not installed, the repository's ``smoke_tests/``."""
    import importlib.resources

    try:
        found = Path(str(importlib.resources.files("toolkit.smoke_suite")))
    except ModuleNotFoundError:
        found = PACKAGE.parent / "smoke_tests"
    if not (found / "pytest.ini").is_file():
        raise EnvironmentProblem(
            f"the smoke suite is missing (looked for toolkit.smoke_suite and {found})",
            hint="reinstall the toolkit: pip install <the repository>")
    return found


XDIST = "pytest-xdist"


def smoke_facts(manifest: dict[str, Any]) -> dict[str, Any]:
    """What the suite needs that only the host knows (recipes and the matrix)."""
    from toolkit.plan.recipes import load_matrix, recipe_for

    b = manifest["build"]
    recipe = recipe_for(str(manifest.get("recipe") or b.get("package")))
    rocm = str(b.get("rocm") or "")
    hip = None
    release = load_matrix().rocm.get(rocm)
    if release is not None:
        hip = release.hip
    elif rocm and rocm != "cpu":
        hip = ".".join(rocm.split(".")[:2])
    modules = tuple(str(m) for m in manifest.get("expected_modules") or ())
    expects = recipe.smoke_expectations(str(b.get("version") or ""), modules)
    return {
        "needs_torch": bool(recipe.needs_torch) or bool(b.get("torch")),
        "carries_gpu_code": rocm != "cpu",
        "rocm": rocm,
        "hip": hip,
        "torch": b.get("torch") or None,
        # the recipe's own expectations (Recipe.smoke_expectations)
        "markers": list(expects.get("markers", ())),
        "recorded_torch": list(expects.get("recorded_torch", ())),
    }


# ------------------------------------------------------------------------------ targets
def check_targets(tokens: Sequence[str]) -> tuple[str, ...]:
    """Expand gfx ids and families; unknown ones are a ``UsageError`` naming the valid ids."""
    from toolkit.core.gfx import split_tokens
    from toolkit.plan.recipes import load_matrix

    words = split_tokens(tokens)
    if not words:
        raise UsageError("empty gfx target list; give at least one gfx id or family name")
    return load_matrix().expand_gfx(words)


# ------------------------------------------------------------------------------ environment
def env_python(env_dir: Path) -> Path:
    return env_dir / "bin" / "python"


def _probe(python: Path, code: str, *args: str) -> Result:
    try:
        return run_command([str(python), "-c", code, *args], timeout=300, check=False)
    except CommandFailed as err:  # could not start, or hung
        raise EnvironmentProblem(f"the environment's Python {python} does not run: "
                                 f"{err.reason or err.returncode}") from None


_VERSION_OF = """import importlib.metadata as m, sys
try:
    print(m.version(sys.argv[1]))
except m.PackageNotFoundError:
    print("")
"""


def check_environment(target: SmokeTarget) -> str:
    """The installed version of the build's package; a one-line error when it is absent."""
    python = env_python(target.env_dir)
    if not python.exists():
        raise EnvironmentProblem(
            f"environment {target.env_dir} of {target.build_id} does not exist (no bin/python)",
            hint="check --env, or run the build again (its create-env step makes it)",
        )
    probe = _probe(python, _VERSION_OF, target.dist)
    version = probe.stdout.strip()
    if probe.returncode != 0 or not version:
        why = f" (its build ended: {target.manifest.get('outcome')}" + (
            f" at step {target.manifest['failed_step']})" if target.manifest.get("failed_step")
            else ")") if target.manifest.get("outcome") == "failed" else ""
        raise EnvironmentProblem(
            f"{target.dist} is not installed in {target.env_dir}{why}",
            hint=f"run the build {target.build_id} to its install-wheel step",
        )
    return version


def ensure_suite_deps(python: Path, uv: str, *, xdist: bool,
                      reporter: Reporter | None = None) -> list[str]:
    """Install what the suite needs into the environment, only what is missing; the
    distributions installed."""
    reporter = reporter or NullReporter()
    want = {"pytest": "pytest", "packaging": "packaging", "zstandard": "zstandard"}
    if xdist:
        want["xdist"] = XDIST
    code = ("import importlib.util as u, sys\n"
            "print(' '.join(n for n in sys.argv[1:] if u.find_spec(n) is None))")
    probe = _probe(python, code, *sorted(want))
    missing = probe.stdout.split() if probe.returncode == 0 else sorted(want)
    if not missing:
        return []
    pkgs = [want[m] for m in missing if m in want]
    env_dir = python.parent.parent
    reporter.info(f"smoke: installing {', '.join(pkgs)} into {env_dir}")
    try:
        run_command([uv, "pip", "install", "--python", str(python), *pkgs])
    except CommandFailed as err:
        tail = [line for line in err.tail if line.strip()][-3:] or [err.reason or "no output"]
        raise EnvironmentProblem(
            f"could not install {', '.join(pkgs)} into {env_dir}: " + " | ".join(tail),
            hint="the smoke suite needs them in the build's environment (network or --find-links)",
        ) from None
    return pkgs


# ------------------------------------------------------------------------------ results
@dataclass(frozen=True)
class Case:
    name: str  # test_imports.py::test_import[hip_sample-0.1.0-hip_sample]
    outcome: str  # passed, failed, error, skipped
    message: str = ""

    @classmethod
    def from_junit(cls, case: junit_xml.JUnitCase) -> Case:
        return cls(case.test_id, case.outcome, case.reason)


@dataclass
class SmokeOutcome:
    build_id: str
    targets: tuple[str, ...]
    cases: list[Case] = field(default_factory=list)
    returncode: int = 0
    junit: Path | None = None

    def count(self, outcome: str) -> int:
        return sum(1 for c in self.cases if c.outcome == outcome)

    @property
    def ok(self) -> bool:
        return (self.returncode == 0 and bool(self.cases)
                and not any(c.outcome in ("failed", "error") for c in self.cases))

    def skip_reasons(self) -> dict[str, int]:
        reasons: dict[str, int] = {}
        for c in self.cases:
            if c.outcome == "skipped":
                reasons[c.message] = reasons.get(c.message, 0) + 1
        return reasons

    def to_json(self) -> dict[str, Any]:
        return {"build": self.build_id, "targets": list(self.targets), "ok": self.ok,
                "passed": self.count("passed"), "failed": self.count("failed"),
                "errors": self.count("error"), "skipped": self.count("skipped"),
                "cases": [{"name": c.name, "outcome": c.outcome, "message": c.message}
                          for c in self.cases]}


def parse_junit(path: Path) -> list[Case]:
    """The test cases of the smoke run's JUnit XML (read by ``toolkit.verify.junit``)."""
    try:
        return [Case.from_junit(c) for c in junit_xml.cases(path)]
    except UsageError as err:  # pytest wrote it: unreadable means the run broke, not the input
        raise CheckFailed(f"the smoke run wrote no readable JUnit report ({err})") from None


# ------------------------------------------------------------------------------ running
def pytest_argv(python: Path, manifest: Path, targets: Sequence[str], junit: Path, *,
                require_gpu: bool, workers: str | None, extra: Sequence[str] = ()) -> list[str]:
    suite = suite_dir()
    argv = [str(python), "-m", "pytest", str(suite), "-c", str(suite / "pytest.ini"),
            "--rootdir", str(suite), "-p", "no:cacheprovider", "--import-mode=importlib",
            f"--junitxml={junit}", "-o", "junit_family=xunit2",
            "--manifest", str(manifest), "--gfx", ",".join(targets)]
    if require_gpu:
        argv.append("--require-gpu")
    if workers:
        argv += ["-n", workers]
    return [*argv, *extra]


def _is_tty(out: TextIO | None) -> bool:
    try:
        return out is not None and out.isatty()
    except (AttributeError, ValueError):
        return False


def _keep_junit(report: Path, junit: Path) -> Path:
    try:
        junit.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(junit, report.read_bytes(), "JUnit XML")
    except OSError as exc:
        raise UsageError(f"{junit}: cannot write the JUnit XML there ({exc.strerror or exc})") \
            from None
    return junit


def _sink(out: TextIO | None, reporter: Reporter) -> Callable[[str], None]:
    """Where pytest's lines go: ``out`` when given, else ``reporter.output``."""
    def on_line(line: str) -> None:
        if out is not None:
            out.write(line)
            out.flush()
        else:
            reporter.output(line)

    return on_line


def _scratch(scratch: Path, target: SmokeTarget, targets: Sequence[str]) -> Path:
    """The toolkit's link (``scratch/path``) and the manifest the suite reads (its path)."""
    shim = scratch / "path"
    shim.mkdir()
    (shim / "toolkit").symlink_to(PACKAGE, target_is_directory=True)
    manifest = {**target.manifest, "env_dir": str(target.env_dir),
                "targets": list(target.targets or targets),
                "smoke": smoke_facts(target.manifest)}
    mpath = scratch / "manifest.json"
    mpath.write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    return mpath


def _pytest(argv: list[str], cwd: Path, env: dict[str, str], on_line: Callable[[str], None],
            timeout: float | None) -> tuple[int, str]:
    """Run pytest: its exit code and last non-blank line. ``CommandFailed`` (``timed_out``)
    past ``timeout``; one that cannot start is a ``CheckFailed``."""
    last = [""]
    ended = [True]  # pytest's output ended its last line (a run stopped mid-line did not)

    def keep(line: str) -> None:
        if line.strip():
            last[0] = line.strip()
        ended[0] = line.endswith("\n")
        on_line(line)

    try:
        return stream_command(argv, on_line=keep, cwd=cwd, env=env, timeout=timeout), last[0]
    except CommandFailed as err:
        if err.timed_out:
            raise
        if err.returncode is None:  # could not start
            raise CheckFailed(f"the smoke run did not finish: {err.reason}") from None
        return err.returncode, last[0]
    finally:
        if not ended[0]:
            on_line("\n")


def _suite_env(scratch: Path) -> dict[str, str]:
    """The suite's environment: this one, importing the scratch path first, writing no
    bytecode, without the user's site-packages or a PYTHONHOME."""
    env = {**os.environ, "PYTHONPATH": str(scratch / "path"), "PYTHONDONTWRITEBYTECODE": "1",
           "PYTHONNOUSERSITE": "1"}
    env.pop("PYTHONHOME", None)
    return env


def _stopped(err: limits.TimedOut, test: str | None, report: Path,
             junit: Path | None) -> limits.TimedOut:
    """A run stopped past a time limit: the JUnit XML kept at ``junit`` (written for the
    test that hung, when pytest wrote none), and ``err`` to raise."""
    if junit and test and not report.exists():
        limits.write_junit(report, test, err.message)
    if junit and report.exists():
        _keep_junit(report, junit)
    return err


def _outcome(target: SmokeTarget, targets: Sequence[str], returncode: int, last: str,
             report: Path, junit: Path | None) -> SmokeOutcome:
    """The run's outcome with its cases from the JUnit XML (kept at ``junit``); no XML is
    CheckFailed unless pytest passed or collected nothing (exit 0 or 5)."""
    result = SmokeOutcome(target.build_id, tuple(targets), returncode=returncode)
    if report.exists():
        result.cases = parse_junit(report)
        if junit:
            result.junit = _keep_junit(report, junit)
    elif returncode not in (0, 5):
        raise CheckFailed(f"pytest did not run in {target.env_dir} (exit {returncode})"
                          + (f": {last}" if last else ""))
    return result


def run(target: SmokeTarget, targets: Sequence[str], *, require_gpu: bool = False,
        workers: str | None = None, junit: Path | None = None,
        reporter: Reporter | None = None, out: TextIO | None = None, uv: str | None = None,
        extra: Sequence[str] = (), timeout: float | None = limits.DEFAULT_TIMEOUT_S,
        test_timeout: float | None = limits.DEFAULT_TEST_TIMEOUT_S) -> SmokeOutcome:
    """Run the suite for one build and the given (already expanded) targets.

    Progress lines go to ``reporter``; pytest's own output, line by line, to ``out`` when
    given, else to ``reporter.output``. ``test_timeout`` bounds each test, ``timeout`` the
    whole pytest run (seconds; None: no limit); past either, ``TimedOut`` (exit 9) names the
    test and the limit (``toolkit.verify.smoke_limits``), after the JUnit XML is kept."""
    from toolkit.env.host import find_uv

    reporter = reporter or NullReporter()
    if not targets:
        raise UsageError(f"{target.build_id}: no gfx targets to test; give --gfx")
    check_environment(target)
    python = env_python(target.env_dir)
    ensure_suite_deps(python, uv or find_uv(), xdist=bool(workers), reporter=reporter)

    on_line = _sink(out, reporter)
    with tempfile.TemporaryDirectory(prefix="toolkit-smoke-") as tmp:
        scratch = Path(tmp)
        report, status = scratch / "junit.xml", scratch / "status.json"
        argv = pytest_argv(python, _scratch(scratch, target, targets), targets, report,
                           require_gpu=require_gpu, workers=workers,
                           extra=[*(["--color=yes"] if _is_tty(out) else []),
                                  "--test-timeout", f"{test_timeout or 0:g}",
                                  "--status-file", str(status), *extra])
        try:
            returncode, last = _pytest(argv, scratch, _suite_env(scratch), on_line, timeout)
        except CommandFailed:  # past the total limit
            test, _ = limits.running(status)
            raise _stopped(limits.total_limit(target.build_id, timeout, test), test, report,
                           junit) from None
        test, hung = limits.running(status)
        if returncode == limits.WATCHDOG_EXIT and hung and test:
            raise _stopped(limits.hung_test(target.build_id, test, test_timeout), test, report, junit)
        result = _outcome(target, targets, returncode, last, report, junit)
    timed = [c.name for c in result.cases if limits.PER_TEST in c.message]
    if timed:
        raise limits.hung_test(target.build_id, ", ".join(timed), test_timeout)
    return result
