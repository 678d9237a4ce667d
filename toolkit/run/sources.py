"""Sources at the matrix ref: a shared mirror per package, a fresh worktree per build.

``git clone --mirror`` into the cache once (fetched again only when the ref is missing or
``TOOLKIT_FETCH=1``), then a fresh ``git worktree`` per build (apex 1.8 rewrites its own tree
while building). ``--source PATH`` builds from a contributor's checkout: it is copied, never
modified. The commit is learned into ``SHA``/``SHA8`` for naming and manifests.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from toolkit.core.errors import StepFailed, UsageError
from toolkit.plan.planner import Step
from toolkit.run import executor as execute

_IGNORE = shutil.ignore_patterns(".git", "build", "dist", "*.egg-info", "__pycache__", ".nox")


def git(*args: str, cwd: str | Path | None = None) -> str:
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}
    res = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env=env)
    if res.returncode != 0:
        from toolkit.core.urls import mask

        raise StepFailed(f"git {mask(' '.join(args))} failed (exit {res.returncode}): "
                         f"{mask(res.stderr.strip()[-2000:])}")
    return res.stdout.strip()


def _has_ref(mirror: Path, ref: str) -> bool:
    res = subprocess.run(["git", "-C", str(mirror), "rev-parse", "--verify", "--quiet",
                          f"{ref}^{{commit}}"], capture_output=True, text=True)
    return res.returncode == 0


def ensure_mirror(repo: str, mirror: Path, ref: str) -> None:
    if not (mirror / "HEAD").exists():
        mirror.parent.mkdir(parents=True, exist_ok=True)
        tmp = mirror.with_name(mirror.name + ".partial")
        shutil.rmtree(tmp, ignore_errors=True)
        git("clone", "--mirror", "--quiet", repo, str(tmp))
        os.replace(tmp, mirror)
    elif os.environ.get("TOOLKIT_FETCH") == "1" or not _has_ref(mirror, ref):
        git("-C", str(mirror), "fetch", "--quiet", "--prune", "origin")
    if not _has_ref(mirror, ref):
        raise UsageError(f"ref {ref!r} does not exist in {repo}")


def _before(step: Step, run: execute.Run) -> str | None:
    build = run.plan.build
    worktree = run.layout.worktree(build)
    if run.plan.source:
        src = Path(run.plan.source)
        if not src.is_dir():
            raise UsageError(f"--source {src} is not a folder")
        shutil.rmtree(worktree, ignore_errors=True)
        shutil.copytree(src, worktree, ignore=_IGNORE, symlinks=True)
        return None  # the step's argv (git rev-parse HEAD in the checkout) still runs
    mirror = run.layout.mirror(build.package.name)
    ensure_mirror(build.package.repo, mirror, build.pkg_version.ref)
    if worktree.exists():
        subprocess.run(["git", "-C", str(mirror), "worktree", "remove", "--force", str(worktree)],
                       capture_output=True)
        shutil.rmtree(worktree, ignore_errors=True)
    git("-C", str(mirror), "worktree", "prune")
    return None


def _after(step: Step, run: execute.Run) -> None:
    src = run.plan.source
    where = Path(src) if src else run.layout.worktree(run.plan.build)
    try:
        sha = git("-C", str(where), "rev-parse", "HEAD")
    except StepFailed:
        sha = "0" * 40  # a plain folder (e.g. the bundled example): no commit
    run.values["SHA"] = sha
    run.values["SHA8"] = sha[:8]


execute.register("get-sources", before=_before, after=_after)
