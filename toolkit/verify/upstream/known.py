"""Known failures (``known_failures.toml``): is each entry's upstream evidence still there?

Each piece of an entry's evidence (``toolkit.data.known.upstream_refs``):

- ``owner/repo@<commit> <file>``: the commit must exist in the repository and ``<file>`` there
  must hold the entry's ``holds`` (a regular expression); else the data is wrong (drift). When
  the file at the newest commit of that commit's line no longer holds it, upstream changed
  what made the build fail: drift "evidence gone at <newest>: re-try with
  --include-known-failures" (a re-try that passes reads "known failure no longer fails: remove
  the entry"). A commit of a TheRock release (its ``version.json`` names X.Y) is read at that
  release's ref, the one rocm.toml's release is read at (``therock_lines``: the tag
  ``therock-X.Y[.Z]``, else ``release/therock-X.Y``, else the newest BKC branch, else main's
  last commit at X.Y); any other at the repository's HEAD when its history holds the commit,
  else the newest branch that does.
- ``owner/repo#N``: an issue cannot be read offline: a note naming the issue to check by hand,
  never a pass.

A repository the rules do not read (it is not mirrored) is a note to check by hand as well.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from toolkit.data.known import KnownFailure, upstream_refs
from toolkit.verify.upstream.model import Context, Fact
from toolkit.verify.upstream.repos import Repo
from toolkit.verify.upstream.therock_lines import Line, line_of, release_lines

RETRY = "re-try with --include-known-failures"


def newest(repo: Repo, commit: str, lines: Mapping[str, Line] | None = None) -> str | None:
    """The newest commit of the line ``commit`` is on. A commit whose ``version.json`` names a
    TheRock release is read where ``toolkit upstream`` reads that release in rocm.toml: its
    release line's ref (``therock_lines.line_of``: the tag, release or BKC branch, or main's
    last commit at that version). Any other: the repository's HEAD when it holds the commit,
    else the most recently committed branch that does."""
    line = line_of(repo, commit, lines)
    if line is not None:
        return line.commit
    head = repo.commit("HEAD")
    if head is not None and _ancestor(repo, commit, head):
        return head
    out = repo.git("for-each-ref", "--contains", commit, "--sort=-committerdate",
                   "--format=%(objectname)", "refs/heads/", check=False).split()
    return out[0] if out else head


def _ancestor(repo: Repo, commit: str, head: str) -> bool:
    """Is ``commit`` in ``head``'s history (nothing of it is outside)?"""
    return repo.git("rev-list", "-1", commit, f"^{head}", check=False).strip() == ""


def _lines(ctx: Context, repo: Repo) -> Mapping[str, Line]:
    """The release lines of ``repo``, read once per run."""
    cache: dict[str, Mapping[str, Line]] = ctx.derived.setdefault("release_lines", {})
    if repo.slug not in cache:
        cache[repo.slug] = release_lines(repo)
    return cache[repo.slug]


def _commit_facts(entry: KnownFailure, ctx: Context, slug: str, ref: str, path: str) -> list[Fact]:
    what = f"known failure {entry.id}"
    cited = f"{slug}@{ref} {path}"
    repo = ctx.repos.get(slug)
    if repo is None:
        return [Fact("note", what, cited, "not mirrored here: check by hand", cited)]
    full = repo.commit(ref)
    if full is None:
        return [Fact("drift", what, cited, f"no commit {ref} in {slug}: the evidence is wrong",
                     f"{slug} history")]
    holds = re.compile(entry.holds)
    if holds.search(repo.show(full, path) or "") is None:
        return [Fact("drift", what, f"`{entry.holds}` in {path}",
                     f"{path} at {repo.short(full)} does not say it: the evidence is wrong",
                     repo.evidence(full, path))]
    head = newest(repo, full, _lines(ctx, repo))
    if head is None or holds.search(repo.show(head, path) or "") is None:
        at = repo.short(head) if head else "HEAD"
        return [Fact("drift", what, f"`{entry.holds}` in {path} at {repo.short(full)}",
                     f"evidence gone at {at}: {RETRY} (remove the entry when it passes)",
                     f"{slug}@{at} {path}")]
    return []


def check(ctx: Context) -> list[Fact]:
    entries = {e.id: e for e in ctx.matrix.known_failures}
    facts: list[Fact] = []
    for entry_id, kind, slug, ref, path in upstream_refs(entries.values()):
        if kind == "issue":
            url = f"https://github.com/{slug}/issues/{ref}"
            facts.append(Fact("note", f"known failure {entry_id}", f"{slug}#{ref}",
                              "an issue cannot be read offline: check by hand whether it is "
                              "closed", url))
            continue
        facts.extend(_commit_facts(entries[entry_id], ctx, slug, ref, path))
    return facts
