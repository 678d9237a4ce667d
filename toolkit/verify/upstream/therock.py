"""ROCm/TheRock: SDK versions, index URLs, release eras and GPU families.

- SDK versions: ``version.json`` (``rocm-version``) over its history. A pip SDK release in
  rocm.toml must be a version TheRock's stream had, and the ``ROCm/TheRock@<commit>
  version.json`` its evidence cites must say that version.
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

import json
import re

from toolkit.verify.upstream.model import Context, Edit, Fact, minor
from toolkit.verify.upstream.repos import Repo

SLUG = "ROCm/TheRock"
VERSION_FILE = "version.json"
TARGETS_FILE = "cmake/therock_amdgpu_targets.cmake"
_TARGET = re.compile(r"^\s*therock_add_amdgpu_target\(\s*(gfx[0-9a-z]+)(.*?)\)", re.M | re.S)
_FAMILY = re.compile(r"\bFAMILY\b(.*?)(?:\b[A-Z_]{4,}\b|$)", re.S)


def _version(text: str | None) -> str | None:
    try:
        value = json.loads(text or "").get("rocm-version")
    except (ValueError, AttributeError):
        return None
    return str(value) if value else None


def sdk_stream(repo: Repo) -> dict[str, str]:
    """X.Y -> the first commit whose version.json says X.Y.*"""
    commits = repo.log("HEAD", VERSION_FILE)
    stream: dict[str, str] = {}
    for commit, text in zip(commits, repo.read_many([(c, VERSION_FILE) for c in commits]), strict=True):
        version = _version(text)
        if version:
            stream.setdefault(minor(version), commit)
    return stream


def targets(text: str) -> dict[str, tuple[str, ...]]:
    """gfx target -> the family names its FAMILY list gives, in file order."""
    out: dict[str, tuple[str, ...]] = {}
    for gfx, rest in _TARGET.findall(text):
        m = _FAMILY.search(rest)
        names = re.findall(r"[A-Za-z0-9_-]+", m.group(1)) if m else []
        out[gfx] = tuple(n for n in names if n.startswith("gfx"))
    return out


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
        commit = _cited(rel.sdk.evidence, VERSION_FILE)
        said = _version(repo.show(commit, VERSION_FILE)) if commit else None
        if said is None or minor(said) != want:
            facts.append(Fact("drift", f"ROCm {rel.version} SDK evidence", rel.sdk.evidence,
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
    return [*_sdk_facts(ctx, repo), *_index_facts(ctx, repo), *_era_facts(ctx, repo),
            *_family_facts(ctx, repo)]
