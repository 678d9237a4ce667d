"""invoke tasks: thin wrappers over `python -m toolkit ...` (logic lives in toolkit/)."""

from __future__ import annotations

from invoke.context import Context
from invoke.exceptions import Exit
from invoke.tasks import task

from toolkit.cli.main import main


def _run(argv: list[str]) -> None:
    code = main(argv)
    if code:
        raise Exit(code=code)


def _multi(flag: str, values: str | list[str] | None) -> list[str]:
    if not values:
        return []
    items = [values] if isinstance(values, str) else values
    return [a for v in items for a in (flag, v)]


def _path(flag: str, value: str | None) -> list[str]:
    """A path option, passed on whenever given: ``--workdir ''`` reaches the CLI, which
    refuses an empty path in one line instead of meaning "not given"."""
    return [] if value is None else [flag, value]


@task(
    help={
        "package": "package name(s), comma list",
        "rocm": "ROCm version(s), comma list",
        "python": "Python version(s), comma list",
        "format": "table | json | github | github-shards (matrices of at most 256 entries)",
        "trigger": "with --format github: pull_request | push | schedule | workflow_dispatch",
        "families": "with --format github: GPU families to build/test for, comma list",
        "explain": "a build id: print its facts with the upstream evidence of each; or a "
                   "known-failure id (toolkit/data/known_failures.toml): print the entry",
        "include_known_failures": "with --format github and --trigger workflow_dispatch or "
                                  "schedule: keep the builds known to fail",
        "changed_since": "with --format github: only builds whose identity changed since SOURCE, "
                         "a folder of manifests or an index URL with <wheel>.manifest.json "
                         "beside each wheel",
        "allow_insecure_index": "with --changed-since: allow a plain http:// index",
    }
)
def matrix(
    c: Context, package: str = "", rocm: str = "", python: str = "", format: str = "table",
    trigger: str = "", families: str = "", explain: str = "", include_known_failures: bool = False,
    changed_since: str = "", allow_insecure_index: bool = False,
) -> None:
    """Show the build matrix (seed-table shape), one JSON object per build, or CI's matrix;
    --explain ID: one build's facts with the upstream evidence of each, or a known failure."""
    if explain:
        _run(["matrix", "--explain", explain])
        return
    _run(["matrix", *_multi("--package", package), *_multi("--rocm", rocm),
          *_multi("--python", python), "--format", format, *_multi("--trigger", trigger),
          *_multi("--families", families),
          *(["--include-known-failures"] if include_known_failures else []),
          *_multi("--changed-since", changed_since),
          *(["--allow-insecure-index"] if allow_insecure_index else [])])


@task(
    help={"build_id": "a build id, e.g. apex-1.8.0-cp312-rocm7.0", "gfx": "gfx ids or families",
          "json": "print the plan as JSON",
          "channel": "TheRock channel: stable|prerelease|nightly|dev (default: the release's)",
          "include_known_failures": "plan a build known to fail (else: one line, exit 7)"},
    positional=["build_id"],
)
def plan(c: Context, build_id: str, gfx: str = "", json: bool = False, channel: str = "",
         include_known_failures: bool = False) -> None:
    """Print a build's plan (runs nothing)."""
    _run(["plan", build_id, *_multi("--gfx", gfx), *_multi("--channel", channel),
          *(["--json"] if json else []),
          *(["--include-known-failures"] if include_known_failures else [])])


@task(
    help={
        "paths": "wheels or folders of .so files, comma list",
        "gfx": "gfx ids or families every GPU library must carry",
        "policy": "manylinux policy the wheel must meet, e.g. manylinux_2_28",
        "with_": "extra library folders/wheels to resolve against, comma list",
        "require_symbol": "demangled symbol prefix a library must define (repeatable)",
        "json": "print the report as JSON",
    },
    positional=["paths"],
    iterable=["require_symbol"],
)
def check(
    c: Context,
    paths: str,
    gfx: str = "",
    policy: str = "",
    with_: str = "",
    require_symbol: list[str] | None = None,
    json: bool = False,
) -> None:
    """Symbol, GLIBCXX, GPU-code and hygiene checks of wheels or .so folders."""
    argv = ["check", *[p for p in paths.split(",") if p], *_multi("--gfx", gfx)]
    argv += _multi("--policy", policy)
    argv += [a for w in with_.split(",") if w for a in ("--with", w)]
    argv += _multi("--require-symbol", require_symbol)
    argv += ["--json"] if json else []
    _run(argv)


@task(
    help={
        "nox_report": "a `nox --report FILE` JSON file (repeatable)",
        "junit": "a JUnit XML file (repeatable)",
        "json": "print the summary as JSON",
        "markdown": "also write the markdown summary to this file",
        "strict": "exit 1 when a session or test failed",
        "manifests": "a build's manifest or a folder of them, artifacts/ (repeatable)",
    },
    iterable=["nox_report", "junit", "manifests"],
)
def report(
    c: Context,
    nox_report: list[str] | None = None,
    junit: list[str] | None = None,
    manifests: list[str] | None = None,
    json: bool = False,
    markdown: str | None = None,
    strict: bool = False,
) -> None:
    """One table of nox sessions and JUnit suites (and a GitHub step summary in Actions)."""
    argv = ["report", *_multi("--nox-report", nox_report), *_multi("--junit", junit),
            *_multi("--manifests", manifests)]
    argv += _path("--markdown", markdown)
    argv += (["--json"] if json else []) + (["--strict"] if strict else [])
    _run(argv)


@task(
    help={
        "gfx": "gfx ids or families to test for, comma list (default: the build's targets)",
        "build": "build id (default: the newest successful build, named)",
        "env": "the environment to test (default: the build's own)",
        "workdir": "work folder holding artifacts/ (default: the current folder)",
        "n": "pytest-xdist processes, e.g. auto",
        "junit": "write JUnit XML here (CI)",
        "require_gpu": "fail, not skip, GPU runtime tests without a GPU of the target",
        "test_timeout": "per-test time limit in seconds (0: none; past it: exit 9)",
        "timeout": "time limit of the whole run in seconds (0: none; past it: exit 9)",
    }
)
def smoke(
    c: Context,
    gfx: str = "",
    build: str = "",
    env: str = "",
    workdir: str | None = None,
    n: str = "",
    junit: str | None = None,
    require_gpu: bool = False,
    test_timeout: str = "",
    timeout: str = "",
) -> None:
    """Smoke-test a build in its environment: imports, torch/ROCm match, GPU code, GPU runs."""
    argv = ["smoke", *_multi("--gfx", gfx), *_multi("--build", build), *_multi("--env", env)]
    argv += _path("--workdir", workdir) + _multi("-n", n) + _path("--junit", junit)
    argv += ["--require-gpu"] if require_gpu else []
    argv += _multi("--test-timeout", test_timeout) + _multi("--timeout", timeout)
    _run(argv)


@task(
    help={"manifest": "artifacts/<build-id>/manifest.json", "step": "stop after this step",
          "dry_run": "print the steps, run nothing",
          "force": "run even where a host difference makes the comparison meaningless",
          "workdir": "where build/, artifacts/ go (default: the current folder)",
          "source": "a checkout of the recorded source, when the recorded path is not here"},
    positional=["manifest"],
)
def repro(c: Context, manifest: str, step: str = "", dry_run: bool = False,
          force: bool = False, workdir: str | None = None, source: str | None = None) -> None:
    """Rebuild a build from its manifest here and compare: `identical: <sha256>` or `differs`."""
    _run(["repro", manifest, *_multi("--step", step), *(["--dry-run"] if dry_run else []),
          *(["--force"] if force else []), *_path("--workdir", workdir),
          *_path("--source", source)])


@task(
    help={"folder": "folder holding the wheels, e.g. dist (searched recursively)",
          "strict": "fail, writing nothing, when a *.whl cannot be listed"},
    positional=["folder"],
)
def index(c: Context, folder: str, strict: bool = False) -> None:
    """Write FOLDER/index.html, a pip --find-links page of every wheel under FOLDER."""
    _run(["index", folder, *(["--strict"] if strict else [])])


@task(
    help={"dir": "folder of upstream repositories as OWNER+NAME/repo (default: partial clones "
                 "in the cache, fetched again)",
          "write": "update the data files where upstream states the value",
          "json": "print the facts as JSON",
          "pr_body": "also write the drift pull request's body (markdown) to this file"},
)
def upstream(c: Context, dir: str | None = None, write: bool = False, json: bool = False,
             pr_body: str | None = None) -> None:
    """Show (and --write) the drift between toolkit/data and the upstream repositories."""
    _run(["upstream", *([] if dir is None else [dir]), *(["--write"] if write else []),
          *(["--json"] if json else []), *_path("--pr-body", pr_body)])
