"""Known failures (``known_failures.toml``): is each entry's upstream evidence still there?

Each piece of an entry's evidence (``toolkit.data.known.upstream_refs``):

- ``owner/repo@<commit> <file>``: the commit must exist in the repository and ``<file>`` there
  must hold the entry's ``holds`` (a regular expression); else the data is wrong (drift). When
  the file at the repository's newest commit no longer holds it, upstream changed what made
  the build fail: drift "evidence gone at <newest>: re-try with --include-known-failures" (a
  re-try that passes reads "known failure no longer fails: remove the entry").
- ``owner/repo#N``: an issue cannot be read offline: a note naming the issue to check by hand,
  never a pass.

A repository the rules do not read (it is not mirrored) is a note to check by hand as well.
"""

from __future__ import annotations

import re

from toolkit.data.known import KnownFailure, upstream_refs
from toolkit.verify.upstream.model import Context, Fact

RETRY = "re-try with --include-known-failures"


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
    head = repo.commit("HEAD")
    if head is None or holds.search(repo.show(head, path) or "") is None:
        newest = repo.short(head) if head else "HEAD"
        return [Fact("drift", what, f"`{entry.holds}` in {path} at {repo.short(full)}",
                     f"evidence gone at {newest}: {RETRY} (remove the entry when it passes)",
                     f"{slug}@{newest} {path}")]
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
