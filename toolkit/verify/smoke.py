"""Run the smoke suite (``smoke_tests/``) inside a build's environment, against its wheels.

The suite runs under the environment's own Python, from a scratch folder outside the repo,
with ``--import-mode=importlib`` and no cache provider, so only the *installed* wheel can be
imported. What the suite needs besides the wheel is put there by the runner:

* ``pytest`` (and ``pytest-xdist`` for ``-n``), ``packaging`` and ``zstandard`` are installed
  into the environment with uv, only when missing (the checks engine needs the last two);
* the toolkit itself is *not* installed: a scratch folder holding one link,
  ``toolkit -> <the installed toolkit package>``, is put on ``PYTHONPATH``;
* the build's manifest (``artifacts/<id>/manifest.json``, or one made from the build id when
  the build is still running) plus a ``smoke`` section of facts only the host knows (does
  the package use torch, which HIP version the ROCm release has) is written to the scratch
  folder and passed as ``--manifest``.

Results come back through pytest's JUnit XML, which is also what ``--junit`` keeps for CI.
The library never prints except for pytest's own output, which streams through.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from toolkit.core.errors import CheckFailed, EnvironmentProblem, UsageError

PACKAGE = Path(__file__).resolve().parent.parent  # the installed toolkit package


def suite_dir() -> Path:
    """The smoke suite as installed (``toolkit.smoke_suite``: ``smoke_tests/`` of the repo)."""
    import importlib.resources

    return Path(str(importlib.resources.files("toolkit.smoke_suite")))


SUITE_DEPS = ("pytest", "packaging", "zstandard")
XDIST = "pytest-xdist"
DEMO_HINT = "nox -s demo (builds the sample for gfx90a and gfx908), then invoke smoke --gfx gfx90a"


# ------------------------------------------------------------------------------ builds
def manifests(workdir: Path) -> dict[str, Path]:
    """Build id -> manifest path for every ``artifacts/*/manifest.json``, newest last."""
    found = sorted((workdir / "artifacts").glob("*/manifest.json"),
                   key=lambda p: (p.stat().st_mtime, p.parent.name))
    return {p.parent.name: p for p in found}


def _ids(found: dict[str, Path]) -> str:
    return ", ".join(sorted(found)) if found else "none"


@dataclass(frozen=True)
class SmokeTarget:
    """One build to smoke: its manifest (read or made up) and the environment to run in."""

    build_id: str
    manifest: dict[str, Any]
    env_dir: Path
    manifest_path: Path | None = None  # None: made from the build id (build still running)

    @property
    def dist(self) -> str:
        return str(self.manifest.get("dist") or self.manifest["build"]["package"])

    @property
    def targets(self) -> tuple[str, ...]:
        return tuple(self.manifest.get("targets") or ())


def read_manifest(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise UsageError(f"{path}: not a readable manifest ({err})") from None
    if not isinstance(data, dict) or not isinstance(data.get("build"), dict):
        raise UsageError(f"{path}: not a build manifest (no 'build' object)")
    return data


def resolve(workdir: Path, build_id: str | None = None, env: str | None = None) -> SmokeTarget:
    """Which build to smoke: ``--build``, else the build whose environment is ``--env``,
    else the most recent build of the work folder."""
    found = manifests(workdir)
    env_dir = Path(env).expanduser().resolve() if env else None
    if build_id:
        if build_id in found:
            data = read_manifest(found[build_id])
            return SmokeTarget(build_id, data, env_dir or Path(data["env_dir"]), found[build_id])
        made = manifest_for_id(build_id, env_dir) if env_dir else None
        if made is None:
            raise UsageError(
                f"no build {build_id!r} in {workdir / 'artifacts'}; builds with a manifest: "
                f"{_ids(found)}",
                hint=None if found else DEMO_HINT,
            )
        assert env_dir is not None
        return SmokeTarget(build_id, made, env_dir, None)
    if not found:
        raise EnvironmentProblem(f"no builds in {workdir} yet (no artifacts/*/manifest.json)",
                                 hint=DEMO_HINT)
    if env_dir:
        for bid, path in reversed(found.items()):
            data = read_manifest(path)
            if Path(data.get("env_dir", "")).expanduser().resolve() == env_dir:
                return SmokeTarget(bid, data, env_dir, path)
        raise UsageError(f"no build in {workdir / 'artifacts'} used the environment {env_dir}; "
                         f"give --build ID (builds with a manifest: {_ids(found)})")
    bid, path = next(reversed(found.items()))
    data = read_manifest(path)
    return SmokeTarget(bid, data, Path(data["env_dir"]), path)


def manifest_for_id(build_id: str, env_dir: Path | None) -> dict[str, Any] | None:
    """A manifest-shaped dict for a build that has none yet (the build's own smoke step runs
    before its manifest is written): a matrix build, or the demo's sample build."""
    from toolkit.data.matrix import Build, load_matrix
    from toolkit.plan.recipes import recipe_for

    build: Build | None = next((b for b in load_matrix().builds if b.id == build_id), None)
    if build is None and build_id.startswith("hip_sample-"):
        from toolkit.plan.recipes.sample import demo_build, detect_hip

        m = re.search(r"-cp([0-9])([0-9]+)(t?)-", build_id)
        if m:
            python = f"{m.group(1)}.{m.group(2)}{m.group(3)}"
            hip = detect_hip() if not build_id.endswith("-cpu") else None
            cand = demo_build(python, hip)
            build = cand if cand.id == build_id else None
    if build is None:
        return None
    recipe = recipe_for(build.package.recipe)
    return {
        "build": build.as_json(),
        "recipe": build.package.recipe,
        "dist": build.package.dist,
        "targets": [],
        "env_dir": str(env_dir) if env_dir else None,
        "expected_modules": list(recipe.expected_modules(build.pkg_version)),
        "required_symbols": list(recipe.required_symbols(build.pkg_version)),
        "outcome": "running",
    }


def smoke_facts(manifest: dict[str, Any]) -> dict[str, Any]:
    """What the suite needs that only the host knows (recipes and the matrix)."""
    from toolkit.data.matrix import load_matrix
    from toolkit.plan.recipes import recipe_for

    b = manifest["build"]
    recipe = recipe_for(str(manifest.get("recipe") or b.get("package")))
    rocm = str(b.get("rocm") or "")
    hip = None
    release = load_matrix().rocm.get(rocm)
    if release is not None:
        hip = release.hip
    elif rocm and rocm != "cpu":
        hip = ".".join(rocm.split(".")[:2])
    return {
        "needs_torch": bool(recipe.needs_torch),
        "carries_gpu_code": rocm != "cpu",
        "rocm": rocm,
        "hip": hip,
        "torch": b.get("torch") or None,
    }


# ------------------------------------------------------------------------------ targets
def check_targets(tokens: Sequence[str]) -> tuple[str, ...]:
    """Expand gfx ids and families; unknown ones are a ``UsageError`` naming the valid ids."""
    from toolkit.core.gfx import split_tokens
    from toolkit.data.matrix import load_matrix

    words = split_tokens(tokens)
    if not words:
        raise UsageError("empty gfx target list; give at least one gfx id or family name")
    return load_matrix().expand_gfx(words)


# ------------------------------------------------------------------------------ environment
def env_python(env_dir: Path) -> Path:
    return env_dir / "bin" / "python"


def _probe(python: Path, code: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(python), "-c", code, *args], capture_output=True, text=True,
                          errors="replace", timeout=300, check=False)


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


def ensure_suite_deps(python: Path, uv: str, *, xdist: bool, out: TextIO) -> None:
    """Install what the suite needs into the environment, only what is missing."""
    want = {"pytest": "pytest", "packaging": "packaging", "zstandard": "zstandard"}
    if xdist:
        want["xdist"] = XDIST
    code = ("import importlib.util as u, sys\n"
            "print(' '.join(n for n in sys.argv[1:] if u.find_spec(n) is None))")
    probe = _probe(python, code, *sorted(want))
    missing = probe.stdout.split() if probe.returncode == 0 else sorted(want)
    if not missing:
        return
    pkgs = [want[m] for m in missing]
    print(f"smoke: installing {', '.join(pkgs)} into {python.parent.parent}", file=out, flush=True)
    proc = subprocess.run([uv, "pip", "install", "--python", str(python), *pkgs],
                          capture_output=True, text=True, errors="replace", check=False)
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        raise EnvironmentProblem(
            f"could not install {', '.join(pkgs)} into {python.parent.parent}: "
            + " | ".join(tail))


# ------------------------------------------------------------------------------ results
@dataclass(frozen=True)
class Case:
    name: str  # test_imports.py::test_import[hip_sample-0.1.0-hip_sample]
    outcome: str  # passed, failed, error, skipped
    message: str = ""


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


_SKIP_PREFIX = re.compile(r"^(Skipped|Failed):\s*")


def parse_junit(path: Path) -> list[Case]:
    """Test cases of a pytest JUnit XML file."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as err:
        raise CheckFailed(f"the smoke run wrote no readable JUnit report ({err})") from None
    cases: list[Case] = []
    for tc in root.iter("testcase"):
        cls = tc.get("classname", "")
        module = cls.split(".")[-1] if "." in cls else cls
        name = f"{module}.py::{tc.get('name', '?')}" if module else tc.get("name", "?")
        outcome, message = "passed", ""
        for child in tc:
            if child.tag in ("failure", "error", "skipped"):
                outcome = {"failure": "failed", "error": "error", "skipped": "skipped"}[child.tag]
                message = child.get("message") or (child.text or "").strip()
                message = _SKIP_PREFIX.sub("", message)
                break
        cases.append(Case(name, outcome, message))
    return cases


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


def run(target: SmokeTarget, targets: Sequence[str], *, require_gpu: bool = False,
        workers: str | None = None, junit: Path | None = None, out: TextIO | None = None,
        uv: str | None = None, extra: Sequence[str] = ()) -> SmokeOutcome:
    """Run the suite for one build and the given (already expanded) targets."""
    from toolkit.env.host import find_uv

    out = out or sys.stdout
    check_environment(target)
    python = env_python(target.env_dir)
    ensure_suite_deps(python, uv or find_uv(), xdist=bool(workers), out=out)
    with tempfile.TemporaryDirectory(prefix="toolkit-smoke-") as tmp:
        scratch = Path(tmp)
        shim = scratch / "path"
        shim.mkdir()
        (shim / "toolkit").symlink_to(PACKAGE, target_is_directory=True)
        manifest = {**target.manifest, "env_dir": str(target.env_dir),
                    "smoke": smoke_facts(target.manifest)}
        mpath = scratch / "manifest.json"
        mpath.write_text(json.dumps(manifest, indent=2), encoding="utf-8")
        report = scratch / "junit.xml"
        argv = pytest_argv(python, mpath, targets, report, require_gpu=require_gpu,
                           workers=workers, extra=extra)
        env = {**os.environ, "PYTHONPATH": str(shim), "PYTHONDONTWRITEBYTECODE": "1",
               "PYTHONNOUSERSITE": "1"}
        env.pop("PYTHONHOME", None)
        out.flush()
        proc = subprocess.run(argv, cwd=scratch, env=env, stdout=out if _has_fd(out) else
                              subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              errors="replace", check=False)
        if proc.stdout:
            out.write(proc.stdout)
            out.flush()
        result = SmokeOutcome(target.build_id, tuple(targets), returncode=proc.returncode)
        if report.exists():
            result.cases = parse_junit(report)
            if junit:
                junit.parent.mkdir(parents=True, exist_ok=True)
                junit.write_bytes(report.read_bytes())
                result.junit = junit
        elif proc.returncode not in (0, 5):
            raise CheckFailed(f"pytest did not run in {target.env_dir} (exit {proc.returncode})")
    return result


def _has_fd(stream: TextIO) -> bool:
    try:
        stream.fileno()
    except (AttributeError, OSError, ValueError):
        return False
    return True
