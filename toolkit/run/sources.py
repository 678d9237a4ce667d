"""Executing get-sources: a shared mirror per package, a fresh worktree per build, or a
contributor's checkout copied (never modified). The commit is learned into SHA/SHA8.

The mirror is cloned once into the cache (``git clone --mirror``, into ``X.partial`` then
renamed) and fetched again only when the ref is missing; one writer at a time (a lock next
to it). Git never prompts (``GIT_TERMINAL_PROMPT=0``).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
from pathlib import Path

from toolkit.core.errors import CommandFailed, StepFailed, UsageError, status
from toolkit.core.files import Ignore, hash_tree
from toolkit.core.proc import run as run_proc
from toolkit.core.steps import CopySources, FetchSources, FetchSubmodules, Step, Submodule
from toolkit.core.steps.sources import mirror_name
from toolkit.core.urls import mask
from toolkit.run.context import Run, StepResult
from toolkit.run.locking import hold

IGNORED = shutil.ignore_patterns(".git", "build", "dist", "*.egg-info", "__pycache__", ".nox")
GIT_TIMEOUT_S = 3600.0
MIRROR_WAIT_S = 3600.0
NO_COMMIT = "0" * 40  # SHA of a source that is no git checkout


def git(*args: str, cwd: str | Path | None = None, check: bool = True) -> str:
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}
    try:
        res = run_proc(["git", *args], cwd=cwd, env=env, timeout=GIT_TIMEOUT_S, check=check)
    except CommandFailed as exc:
        detail = exc.reason or status(exc.returncode)
        tail = "; ".join(exc.tail[-3:])
        raise StepFailed(f"git {mask(' '.join(args))} failed ({detail}): {mask(tail)}") from None
    return res.stdout.strip() if res.ok else ""


def _has_ref(mirror: Path, ref: str) -> bool:
    res = run_proc(["git", "-C", str(mirror), "rev-parse", "--verify", "--quiet",
                    f"{ref}^{{commit}}"], timeout=120, check=False)
    return res.ok


def _mirror_lock(mirror: Path, run: Run) -> contextlib.AbstractContextManager[None]:
    """One writer per source mirror; others wait."""
    return hold(mirror.with_name(mirror.name + ".lock"), f"source mirror {mirror}",
                wait=MIRROR_WAIT_S, on_wait=run.reporter.info)


def ensure_mirror(repo: str, mirror: Path, ref: str, run: Run) -> None:
    if not (mirror / "HEAD").exists():
        mirror.parent.mkdir(parents=True, exist_ok=True)
        tmp = mirror.with_name(mirror.name + ".partial")
        shutil.rmtree(tmp, ignore_errors=True)
        run.note(f"$ git clone --mirror --quiet {repo} {tmp}")
        git("clone", "--mirror", "--quiet", repo, str(tmp))
        os.replace(tmp, mirror)
    elif not _has_ref(mirror, ref):
        run.note(f"$ git -C {mirror} fetch --quiet --prune origin")
        git("-C", str(mirror), "fetch", "--quiet", "--prune", "origin")
    if not _has_ref(mirror, ref):
        raise UsageError(f"ref {ref!r} does not exist in {repo}")


def _learn_sha(run: Run, where: Path) -> None:
    """SHA/SHA8 and SOURCE_DATE_EPOCH (the commit's time; 0 outside git)."""
    try:
        sha = git("-C", str(where), "rev-parse", "HEAD", check=False) or NO_COMMIT
        epoch = git("-C", str(where), "log", "-1", "--format=%ct", "HEAD", "--", check=False)
    except StepFailed:  # no git at all: a plain folder has no commit either
        sha, epoch = NO_COMMIT, ""
    run.values["SHA"] = sha
    run.values["SHA8"] = sha[:8]
    run.values["SOURCE_DATE_EPOCH"] = epoch if epoch.isdigit() else "0"


def _learn_changes(run: Run, src: Path) -> None:
    """DIFF: the sha256 of the checkout's uncommitted changes (``toolkit.env.project``), when
    it has some and the plan allows them (--allow-dirty); else ``DirtySource`` (exit 12)."""
    from toolkit.env.project import refuse_dirty

    options = run.plan.options
    changes = refuse_dirty(src, options is not None and options.allow_dirty)
    if changes is not None:
        run.values["DIFF"] = changes.diff_sha256
        run.warn(f"building uncommitted changes of {src} (--allow-dirty; "
                 f"{changes.summary()}): the wheel is named +...dirty")


def tree_hash(root: Path, ignore: Ignore | None = None) -> str:
    """sha256 over the relative paths and bytes of every file under ``root`` (sorted),
    leaving out what ``ignore`` (a ``shutil.ignore_patterns``) names."""
    h = hashlib.sha256()
    hash_tree(h, root, ignore)
    return h.hexdigest()


def fetch_sources(step: Step, run: Run) -> StepResult | str:
    action = step.action
    assert isinstance(action, FetchSources)
    mirror, worktree = Path(action.mirror), Path(action.worktree)
    with _mirror_lock(mirror, run):
        ensure_mirror(action.repo, mirror, action.ref, run)
        if worktree.exists():
            git("-C", str(mirror), "worktree", "remove", "--force", str(worktree), check=False)
            shutil.rmtree(worktree, ignore_errors=True)
        git("-C", str(mirror), "worktree", "prune")
        run.note(f"$ {' '.join(action.command().argv)}")
        git(*action.command().argv[1:])
    _learn_sha(run, worktree)
    return StepResult(step.name, step.kind, list(action.command().argv), {}, returncode=0)


def copy_sources(step: Step, run: Run) -> StepResult | str:
    action = step.action
    assert isinstance(action, CopySources)
    src, worktree = Path(action.source), Path(action.worktree)
    if not src.is_dir():
        raise UsageError(f"--source {src} is not a folder")
    shutil.rmtree(worktree, ignore_errors=True)
    try:
        shutil.copytree(src, worktree, ignore=IGNORED, symlinks=True)
    except (OSError, shutil.Error) as exc:
        raise StepFailed(f"cannot copy {src} to {worktree}: {exc}") from None
    run.note(f"# copied {src} to {worktree}")
    _learn_sha(run, src)
    _learn_changes(run, src)
    run.values["TREE"] = tree_hash(worktree)
    if run.values["SHA"] == NO_COMMIT:  # not a git checkout: the tree names the source
        run.values["SHA8"] = run.values["TREE"][:8]
    return StepResult(step.name, step.kind, [], {}, returncode=0)


# ----------------------------------------------------------------------------- submodules
def gitmodules(repo: Path) -> dict[str, tuple[str, str]]:
    """``repo``'s .gitmodules: path -> (name, url)."""
    if not (repo / ".gitmodules").is_file():
        return {}
    text = git("-C", str(repo), "config", "-f", ".gitmodules", "--get-regexp",
               r"^submodule\..*\.(path|url)$", check=False)
    paths: dict[str, str] = {}
    urls: dict[str, str] = {}
    for line in text.splitlines():
        key, _, value = line.partition(" ")
        name, _, field = key.removeprefix("submodule.").rpartition(".")
        (paths if field == "path" else urls)[name] = value.strip()
    return {path: (name, urls.get(name, "")) for name, path in paths.items()}


def recorded_commit(repo: Path, path: str) -> str | None:
    """The commit ``repo``'s HEAD records for the submodule at ``path`` (a gitlink)."""
    line = git("-C", str(repo), "ls-tree", "HEAD", "--", path, check=False)
    parts = line.split()
    return parts[2] if len(parts) >= 3 and parts[0] == "160000" else None


def _resolve_url(url: str, parent_url: str) -> str:
    if url.startswith(("../", "./")):
        from urllib.parse import urljoin

        return urljoin(parent_url.rstrip("/") + "/", url)
    return url


def _checkout(repo: Path, sub: Submodule, run: Run) -> None:
    sha = recorded_commit(repo, sub.path)
    if sha is None:
        raise StepFailed(f"{repo}: {sub.path} is not a submodule at HEAD (no gitlink); "
                         "the matrix names a submodule this ref lacks")
    mirror, dest = Path(sub.mirror), repo / sub.path
    with _mirror_lock(mirror, run):
        ensure_mirror(sub.url, mirror, sha, run)
        shutil.rmtree(dest, ignore_errors=True)
        run.note(f"$ git clone --no-checkout {mirror} {dest}; git checkout --detach {sha}")
        git("clone", "--quiet", "--no-checkout", str(mirror), str(dest))
    git("-C", str(dest), "checkout", "--quiet", "--detach", sha)


def _nested(repo: Path, url: str, mirrors: Path, run: Run, depth: int) -> None:
    if depth > 8:
        raise StepFailed(f"{repo}: submodules nested deeper than 8 levels")
    for path, (_name, sub_url) in sorted(gitmodules(repo).items()):
        if recorded_commit(repo, path) is None:
            continue  # listed in .gitmodules but not recorded at HEAD
        full = _resolve_url(sub_url, url)
        _checkout(repo, Submodule(path, full, str(mirrors / mirror_name(full))), run)
        _nested(repo / path, full, mirrors, run, depth + 1)


def fetch_submodules(step: Step, run: Run) -> StepResult | str:
    action = step.action
    assert isinstance(action, FetchSubmodules)
    worktree = Path(action.worktree)
    declared = gitmodules(worktree)
    for sub in action.submodules:
        name_url = declared.get(sub.path)
        if name_url is None:
            raise StepFailed(f"{worktree}/.gitmodules has no submodule {sub.path}; it lists: "
                             f"{', '.join(sorted(declared)) or 'none'}")
        if name_url[1] != sub.url:
            raise StepFailed(f"{worktree}/.gitmodules gives {sub.path} the URL {name_url[1]}, "
                             f"the matrix {sub.url}: update the matrix data")
        _checkout(worktree, sub, run)
        _nested(worktree / sub.path, sub.url, Path(action.mirrors), run, 1)
    return StepResult(step.name, step.kind, [], {}, returncode=0)
