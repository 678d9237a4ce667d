"""Read-only access to the upstream git repositories (every git call through ``core.proc``).

Two sources:

- a folder the user names (``DIR``), holding one repository per upstream in the
  ``OWNER+NAME/repo`` layout of ``TOOLKIT_UPSTREAM_DIR`` (``ROCm+apex/repo``, bare or with a
  work tree); ``OWNER+NAME`` itself may be the repository. A missing repository or a folder
  that is not a git repository is bad input (exit 2);
- without ``DIR``, bare partial clones (``--filter=blob:none``) in the cache
  (``<cache>/upstream/OWNER+NAME.git``), cloned on first use and fetched again on each run.
  ``TOOLKIT_UPSTREAM_REMOTE`` replaces ``https://github.com/`` as the base URL (tests, mirrors).

Blobs a partial clone lacks are fetched in one batch (``prefetch``) before they are read.
Nothing here writes to a repository the user named.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from toolkit.core.errors import CommandFailed, EnvironmentProblem, SourceUnreachable, UsageError
from toolkit.core.proc import run

DEFAULT_REMOTE = "https://github.com/"
GIT_TIMEOUT_S = 900.0


def require_git() -> str:
    git = shutil.which("git")
    if git is None:
        raise EnvironmentProblem("git is not installed: `upstream` reads the upstream "
                                 "repositories with git", hint="apt-get install git")
    return git


@dataclass
class Repo:
    """One upstream repository (``slug`` is ``owner/name``), read through its git dir."""

    slug: str
    git_dir: Path
    partial: bool = False  # a cache clone: blobs may be missing until prefetched
    _blobs: dict[tuple[str, str], str | None] = field(default_factory=dict, repr=False)
    _local: set[str] | None = field(default=None, repr=False)  # object names held locally

    def git(self, *args: str, check: bool = True, input: str | None = None) -> str:
        res = run(["git", "--git-dir", str(self.git_dir), *args], check=check, input=input,
                  timeout=GIT_TIMEOUT_S)
        return res.stdout if res.ok else ""

    def refs(self, prefix: str) -> dict[str, str]:
        """``refs/heads/release/`` -> {short name: commit} of every ref under ``prefix``."""
        out = self.git("for-each-ref", "--format=%(refname)%00%(objectname)%00%(*objectname)",
                       prefix)
        refs: dict[str, str] = {}
        for line in out.splitlines():
            name, obj, peeled = line.split("\0")
            refs[name.removeprefix("refs/heads/").removeprefix("refs/tags/")] = peeled or obj
        return refs

    def commit(self, ref: str) -> str | None:
        out = self.git("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", check=False)
        return out.strip() or None

    def log(self, ref: str, path: str) -> list[str]:
        """Commits of ``ref``'s history that touch ``path``, oldest first."""
        return self.git("log", "--format=%H", "--reverse", ref, "--", path).split()

    def short(self, commit: str) -> str:
        return commit[:9]

    def evidence(self, commit: str, *paths: str) -> str:
        return f"{self.slug}@{self.short(commit)} {', '.join(paths)}"

    def prefetch(self, pairs: Iterable[tuple[str, str]]) -> None:
        """Fetch, in one request, the blobs of ``(commit, path)`` a partial clone lacks.

        Neither step reads a blob (which would make git fetch each one on its own): the
        object names come from the trees (``rev-parse``, or ``ls-tree`` when some path does
        not exist), what is local from ``--batch-all-objects``."""
        if not self.partial:
            return
        todo = [(c, p) for c, p in dict.fromkeys(pairs) if (c, p) not in self._blobs]
        if not todo:
            return
        oids = set(self._names(todo))
        if self._local is None:
            self._local = set(self.git("cat-file", "--batch-all-objects",
                                       "--batch-check=%(objectname)").split())
        want = sorted(oids - self._local)
        if want:  # what git's own lazy fetch does, for all of them at once
            self.git("-c", "fetch.negotiationAlgorithm=noop", "fetch", "--no-tags",
                     "--no-write-fetch-head", "--recurse-submodules=no",
                     "--filter=blob:none", "--stdin", "origin", input="\n".join(want) + "\n")
            self._local.update(want)

    def _names(self, pairs: Sequence[tuple[str, str]]) -> list[str]:
        """The blob names of ``pairs``, read in trees only (paths that do not exist: none)."""
        out = self.git("rev-parse", *(f"{c}:{p}" for c, p in pairs), check=False).split()
        if len(out) == len(pairs):
            return out
        names: list[str] = []
        by_commit: dict[str, list[str]] = {}
        for c, p in pairs:
            by_commit.setdefault(c, []).append(p)
        for commit, paths in by_commit.items():
            for line in self.git("ls-tree", commit, "--", *paths, check=False).splitlines():
                meta = line.split("\t", 1)[0].split()
                if len(meta) == 3 and meta[1] == "blob":
                    names.append(meta[2])
        return names

    def show(self, commit: str, path: str) -> str | None:
        """``path`` at ``commit`` (None when the commit has no such file)."""
        key = (commit, path)
        if key not in self._blobs:
            self.read_many([key])
        return self._blobs[key]

    def read_many(self, pairs: Sequence[tuple[str, str]]) -> list[str | None]:
        """Many files in one ``git cat-file --batch`` (None for each that does not exist)."""
        todo = [p for p in dict.fromkeys(pairs) if p not in self._blobs]
        if todo:
            self.prefetch(todo)
            res = run(["git", "--git-dir", str(self.git_dir), "cat-file", "--batch"],
                      input="".join(f"{c}:{p}\n" for c, p in todo), timeout=GIT_TIMEOUT_S)
            try:
                self._blobs.update(_parse_batch(res.stdout, todo))
            except (ValueError, IndexError):  # a file that is not UTF-8 text: one at a time
                for commit, path in todo:
                    out = run(["git", "--git-dir", str(self.git_dir), "show",
                               f"{commit}:{path}"], check=False, timeout=GIT_TIMEOUT_S)
                    self._blobs[(commit, path)] = out.stdout if out.ok else None
        return [self._blobs[p] for p in pairs]


def _parse_batch(text: str, keys: Sequence[tuple[str, str]]) -> dict[tuple[str, str], str | None]:
    """``git cat-file --batch`` output (sizes in bytes) -> each key's text or None."""
    data = text.encode("utf-8")
    out: dict[tuple[str, str], str | None] = {}
    pos = 0
    for key in keys:
        end = data.index(b"\n", pos)
        header = data[pos:end].decode()
        pos = end + 1
        if header.endswith((" missing", " ambiguous")):
            out[key] = None
            continue
        size = int(header.split()[2])
        if data[pos + size:pos + size + 1] != b"\n":
            raise ValueError("misaligned batch output")
        out[key] = data[pos:pos + size].decode("utf-8")
        pos += size + 1
    return out


def _git_dir(path: Path) -> Path | None:
    for candidate in (path / ".git", path):
        if (candidate / "HEAD").is_file() and (candidate / "objects").is_dir():
            return candidate
    return None


def from_folder(root: Path, slugs: Sequence[str]) -> dict[str, Repo]:
    """The repositories of ``slugs`` under ``root`` (``OWNER+NAME/repo`` or ``OWNER+NAME``)."""
    if not root.is_dir():
        raise UsageError(f"{root}: no such folder; valid: a folder holding the upstream "
                         f"repositories as OWNER+NAME/repo ({', '.join(slugs)})")
    repos: dict[str, Repo] = {}
    for slug in slugs:
        base = root / slug.replace("/", "+")
        found = [d for d in (base / "repo", base) if d.exists()]
        if not found:
            raise UsageError(f"{root} lacks the repository {slug}; valid: a folder holding "
                             f"{', '.join(s.replace('/', '+') + '/repo' for s in slugs)}")
        git_dir = _git_dir(found[0])
        if git_dir is None:
            raise UsageError(f"{found[0]} is not a git repository (no HEAD and objects/); "
                             f"valid: a clone or mirror of {slug}")
        repos[slug] = Repo(slug, git_dir)
    return repos


def remote_url(slug: str) -> str:
    base = os.environ.get("TOOLKIT_UPSTREAM_REMOTE") or DEFAULT_REMOTE
    if base == DEFAULT_REMOTE:
        return f"{base}{slug}.git"
    return f"{base.rstrip('/')}/{slug.replace('/', '+')}/repo"


def from_cache(cache: Path, slugs: Sequence[str]) -> dict[str, Repo]:
    """Bare partial clones in ``cache``: cloned when missing, fetched otherwise."""
    repos: dict[str, Repo] = {}
    for slug in slugs:
        dest = cache / "upstream" / f"{slug.replace('/', '+')}.git"
        url = remote_url(slug)
        try:
            if _git_dir(dest) is None:
                dest.parent.mkdir(parents=True, exist_ok=True)
                part = dest.with_name(dest.name + ".part")
                shutil.rmtree(part, ignore_errors=True)
                run(["git", "clone", "--bare", "--filter=blob:none", "--quiet", url, str(part)],
                    timeout=GIT_TIMEOUT_S)
                part.rename(dest)
            else:
                run(["git", "--git-dir", str(dest), "fetch", "--quiet", "--prune",
                     "--filter=blob:none", url, "+refs/heads/*:refs/heads/*",
                     "+refs/tags/*:refs/tags/*"], timeout=GIT_TIMEOUT_S)
        except CommandFailed as exc:
            raise SourceUnreachable(
                f"cannot fetch {slug} from {url}: {exc.message.splitlines()[0]}",
                hint="give a folder of mirrors: invoke upstream --dir DIR") from None
        repos[slug] = Repo(slug, dest, partial=True)
    return repos
