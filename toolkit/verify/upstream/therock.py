"""ROCm/TheRock: SDK versions, release lines, index URLs, release eras and GPU families.

- SDK versions: ``version.json`` (``rocm-version``) over its history. A pip SDK release in
  rocm.toml must be a version TheRock's stream had, and the ``ROCm/TheRock@<commit>
  version.json`` its evidence cites must say that version.
- Release lines (``therock_lines``): every TheRock version from the data's oldest multi-arch
  release on is read at its own ref (tag, release branch, BKC branch, or main's last commit at
  that version): a version the data lacks is drift ``new ROCm release X.Y`` whose edits add
  its whole table (and a GPU era when no era has its targets); a release whose line (status,
  ref, version), torch builds and Pythons, GPU targets or channels differ from what its ref
  states is drift with the edits that settle it. A file the ref holds in a shape the reader
  does not know is a review (never an empty list). Older versions are TheRock's legacy
  per-family releases: one note.
- Indexes: every TheRock index URL an SDK source in rocm.toml uses must appear in TheRock's
  documentation (``*.md``) or its install tools (``build_tools/*.py``: setup_venv.py maps its
  channels to indexes) at its newest commit; a URL neither names is drift.
- Eras (gpus.toml): an era's ``targets`` are the ``therock_add_amdgpu_target(gfxNNN ...)``
  of ``cmake/therock_amdgpu_targets.cmake`` at the commit its evidence cites (plus those the
  evidence credits to another source by name, ``gfx950: pytorch/FBGEMM@...``).
- Families (gpus.toml): a family's members are the targets whose ``FAMILY`` list names it in
  that file at the newest commit (each target is a family of its own); an alias must have the
  same members. A family the newest file no longer names is a note (older eras use it).
"""

from __future__ import annotations

import re

from toolkit.verify.upstream.model import Context, Edit, Fact, minor
from toolkit.verify.upstream.repos import Repo
from toolkit.verify.upstream.therock_lines import TARGETS_FILE, VERSION_FILE, targets
from toolkit.verify.upstream.therock_lines import version_of as _version
from toolkit.verify.upstream.therock_releases import release_facts

SLUG = "ROCm/TheRock"
__all__ = ["SLUG", "TARGETS_FILE", "VERSION_FILE", "check", "sdk_stream", "targets"]


def sdk_stream(repo: Repo) -> dict[str, str]:
    """X.Y -> the first commit whose version.json says X.Y.*"""
    commits = repo.log("HEAD", VERSION_FILE)
    stream: dict[str, str] = {}
    for commit, text in zip(commits, repo.read_many([(c, VERSION_FILE) for c in commits]), strict=True):
        version = _version(text)
        if version:
            stream.setdefault(minor(version), commit)
    return stream


def _cited(evidence: str, path: str) -> str | None:
    m = re.search(rf"{re.escape(SLUG)}@([0-9a-f]{{7,40}}) [^;]*{re.escape(path)}", evidence)
    return m.group(1) if m else None


def _sdk_facts(ctx: Context, repo: Repo) -> list[Fact]:
    stream = sdk_stream(repo)
    facts: list[Fact] = []
    for rel in ctx.matrix.rocm.values():
        if rel.sdk.provider != "pip":
            continue
        want = minor(rel.version)
        if want not in stream:
            facts.append(Fact("drift", f"ROCm {rel.version} pip SDK", rel.version,
                              f"no such version (stream: {', '.join(stream)})",
                              f"{SLUG} {VERSION_FILE} history",
                              review="the data names an SDK TheRock never published"))
            continue
        # the version.json the release line cites (its tag or branch), else the SDK's own
        cites = rel.line.evidence if rel.line is not None else rel.sdk.evidence
        commit = _cited(cites, VERSION_FILE)
        said = _version(repo.show(commit, VERSION_FILE)) if commit else None
        if said is None or minor(said) != want:
            facts.append(Fact("drift", f"ROCm {rel.version} SDK evidence", cites,
                              f"version.json {want} from {repo.short(stream[want])}",
                              repo.evidence(stream[want], VERSION_FILE)))
    return facts


def _index_facts(ctx: Context, repo: Repo) -> list[Fact]:
    facts: list[Fact] = []
    head = repo.commit("HEAD") or "HEAD"
    urls = {rel.sdk.index_url for rel in ctx.matrix.rocm.values() if rel.sdk.index_url}
    docs = [p for p in repo.git("ls-tree", "-r", "--name-only", head).splitlines()
            if p.endswith(".md") or re.fullmatch(r"build_tools/[^/]+\.py", p)]
    text = "\n".join(t or "" for t in repo.read_many([(head, p) for p in docs]))
    for url in sorted(u for u in urls if "amd.com" in u):
        if url.rstrip("/") not in text:
            facts.append(Fact("drift", f"SDK index {url}", url, "not named anywhere",
                              f"{SLUG}@{repo.short(head)} *.md, build_tools/*.py",
                              review="neither TheRock's documentation nor its install tools "
                                     "(build_tools/setup_venv.py ...) name this index"))
    return facts


def _era_facts(ctx: Context, repo: Repo) -> list[Fact]:
    facts: list[Fact] = []
    for era in getattr(ctx.matrix, "eras", {}).values():
        commit = _cited(era.evidence, TARGETS_FILE)
        if commit is None:
            continue
        listed = tuple(targets(repo.show(commit, TARGETS_FILE) or ""))
        # a target the evidence credits to another source ("gfx950: pytorch/FBGEMM@...")
        other = {t for t in era.targets if f"{t}: " in era.evidence and t not in listed}
        if set(listed) != set(era.targets) - other:
            facts.append(Fact("drift", f"era {era.name} targets", ", ".join(era.targets),
                              ", ".join(listed) or "none", repo.evidence(commit, TARGETS_FILE),
                              (Edit("gpus.toml", ("eras", era.name, "targets"), list(listed)),)))
    return facts


def _family_facts(ctx: Context, repo: Repo) -> list[Fact]:
    head = repo.commit("HEAD") or "HEAD"
    listed = targets(repo.show(head, TARGETS_FILE) or "")
    members: dict[str, set[str]] = {gfx: {gfx} for gfx in listed}
    for gfx, names in listed.items():
        for name in names:
            members.setdefault(name, set()).add(gfx)
    ev = repo.evidence(head, TARGETS_FILE)
    facts: list[Fact] = []
    for fam in ctx.matrix.families.values():
        for name in (fam.name, *fam.aliases):
            if name not in members:
                facts.append(Fact("note", f"family {name}", ", ".join(fam.targets),
                                  "not in the newest target list", ev))
            elif members[name] != set(fam.targets):
                order = sorted(members[name], key=list(listed).index)
                edit = (Edit("gpus.toml", ("families", fam.name, "targets"), order),) \
                    if name == fam.name else ()
                facts.append(Fact("drift", f"family {name}", ", ".join(fam.targets),
                                  ", ".join(order), ev, edit))
    return facts


def check(ctx: Context) -> list[Fact]:
    repo = ctx.repos[SLUG]
    return [*_sdk_facts(ctx, repo), *release_facts(ctx, repo), *_index_facts(ctx, repo),
            *_era_facts(ctx, repo), *_family_facts(ctx, repo)]
