"""TheRock's releases against rocm.toml: each release line read at its own ref.

Part of the ``therock`` rule (``therock.check``). From the data's oldest TheRock multi-arch
release on, every line of ``therock_lines.release_lines``:

- a version the data lacks: drift ``new ROCm release X.Y`` whose edits add its whole
  ``[releases."X.Y"]`` table (``gpus``: an era whose targets equal the ref's list, else a new
  era ``therock-X.Y`` in gpus.toml; ``hip = "X.Y"``; ``default_family``: the previous
  release's; ``line``, ``sdk``, ``channels`` and each torch it builds, with evidence);
- a version the data has: its ``line`` (status, ref, version), its TheRock torch sources
  (the list, their Pythons, and evidence on the line stating them), its GPU era's targets and
  its channels must be what the ref states; each difference is drift with its edit.

A file the ref holds in a shape the reader does not know is a review naming it: the release
is not compared (fails closed). Older lines are TheRock's legacy per-family releases: a note.
"""

from __future__ import annotations

import re
from typing import Any

from toolkit.data.matrix import RocmRelease
from toolkit.verify.upstream.model import Context, Edit, Fact, versions_key
from toolkit.verify.upstream.repos import Repo
from toolkit.verify.upstream.therock_lines import (
    VERSION_FILE,
    Line,
    Stated,
    Unreadable,
    channels,
    gpu_targets,
    release_lines,
    torch_builds,
)

SLUG = "ROCm/TheRock"
ROCM = "rocm.toml"
GPUS = "gpus.toml"
_CITED = re.compile(rf"{re.escape(SLUG)}@([0-9a-f]{{7,40}}) ([^\s;,(]+)")


def _multi_arch(rel: RocmRelease) -> bool:
    return rel.sdk.provider == "pip" and rel.sdk.layout == "multi-arch"


def _next_minor(torch: str) -> str:
    major, low = torch.split(".")
    return f"{major}.{int(low) + 1}"


def _torch_entry(torch: str, pythons: tuple[str, ...], builds: Stated) -> dict[str, Any]:
    return {"kind": "therock", "spec": f"torch>={torch},<{_next_minor(torch)}",
            "python": list(pythons), "evidence": f"{builds.evidence} ({builds.detail})"}


def _line_entry(line: Line) -> dict[str, str]:
    return {"status": line.status, "ref": line.ref, "version": line.version or "",
            "evidence": line.evidence}


def _channel_entry(chans: Stated) -> dict[str, str]:
    return {**chans.value, "evidence": chans.evidence}


def _read(repo: Repo, line: Line) -> tuple[Stated, Stated, Stated] | Fact:
    """The torch builds, GPU targets and channels the line's ref states, or the review fact
    saying which file cannot be read."""
    read: list[Stated] = []
    for what, reader in (("torch builds", torch_builds), ("GPU targets", gpu_targets),
                         ("channels", channels)):
        try:
            read.append(reader(repo, line.commit))
        except Unreadable as exc:
            return Fact("review", f"ROCm {line.minor} {what}", "-", f"cannot be read: {exc}",
                        repo.evidence(line.commit, line.ref),
                        review=f"{SLUG} {line.ref} states its {what} in a shape the reader "
                               "(toolkit/verify/upstream/therock_lines.py) does not know")
    return read[0], read[1], read[2]


def _era_edits(ctx: Context, xy: str, listed: Stated, like: RocmRelease | None
               ) -> tuple[str, list[Edit]]:
    """The era for ``listed`` targets: an existing one with those targets, else a new one."""
    for name, era in ctx.matrix.eras.items():
        if set(era.targets) == set(listed.value):
            return name, []
    name = f"therock-{xy}"
    edits = [Edit(GPUS, ("eras", name, "evidence"), listed.evidence),
             Edit(GPUS, ("eras", name, "targets"), list(listed.value))]
    extra = like.era.extra_targets if like is not None and like.era is not None else ()
    if extra:  # ids the compilers accept that no family lists: not TheRock's to state
        edits.append(Edit(GPUS, ("eras", name, "extra_targets"), list(extra)))
    return name, edits


def _previous(ctx: Context, xy: str) -> RocmRelease | None:
    older = [v for v in ctx.matrix.rocm if versions_key(v) < versions_key(xy)]
    return ctx.matrix.rocm[max(older, key=versions_key)] if older else None


def _new_release(ctx: Context, repo: Repo, line: Line) -> list[Fact]:
    read = _read(repo, line)
    if isinstance(read, Fact):
        return [read]
    builds, listed, chans = read
    prev = _previous(ctx, line.minor)
    era, edits = _era_edits(ctx, line.minor, listed, prev)
    base = ("releases", line.minor)
    edits += [Edit(ROCM, (*base, "gpus"), era), Edit(ROCM, (*base, "hip"), line.minor),
              Edit(ROCM, (*base, "default_family"),
                   prev.default_family if prev is not None else "gfx94X-dcgpu"),
              Edit(ROCM, (*base, "line"), _line_entry(line)),
              Edit(ROCM, (*base, "sdk"), {"provider": "pip", "layout": "multi-arch",
                                         "evidence": f"{line.evidence}; {chans.evidence}"}),
              Edit(ROCM, (*base, "channels"), _channel_entry(chans))]
    edits += [Edit(ROCM, (*base, "torch", t), _torch_entry(t, p, builds))
              for t, p in builds.value.items()]
    return [Fact("drift", f"new ROCm release {line.minor}", "none",
                 f"{line.status} {line.ref} ({line.version}; torch {', '.join(builds.value)})",
                 line.evidence, tuple(edits))]


def _on_line(repo: Repo, evidence: str, path: str, line: Line) -> bool:
    """Does ``evidence`` cite ``path`` at a commit of the line that holds the same file?"""
    cited = next((c for c, p in _CITED.findall(evidence) if p == path), None)
    full = repo.commit(cited) if cited else None
    if full is None:
        return False
    if full == line.commit:
        return True
    outside = repo.git("rev-list", "-1", full, f"^{line.commit}", check=False).strip()
    return outside == "" and repo.show(full, path) == repo.show(line.commit, path)


def _line_fact(repo: Repo, xy: str, rel: RocmRelease, line: Line) -> list[Fact]:
    have = rel.line
    now = (line.status, line.ref, line.version or "")
    was = (have.status, have.ref, have.version) if have is not None else None
    if have is not None and _on_line(repo, have.evidence, VERSION_FILE, line) and (
            was == now or (line.status == have.status == "nightly-only"
                           and line.version == have.version)):
        # a nightly-only line's ref is main's last commit at its version: while main is at
        # that version it moves with every commit, and the data's commit still states it
        return []
    return [Fact("drift", f"ROCm {xy} release line", " ".join(was) if was else "none",
                 " ".join(now), line.evidence,
                 (Edit(ROCM, ("releases", xy, "line"), _line_entry(line)),))]


def _unpair(ctx: Context, xy: str, torch: str) -> list[Edit]:
    """Drop ROCm ``xy`` from the package versions that pair it with ``torch`` (the source
    removed, they would name a torch the release no longer has: the data would not load)."""
    return [Edit(f"{name}.toml", ("versions", i, "rocm"), [r for r in v.rocm if r != xy])
            for name, package in ctx.matrix.packages.items()
            for i, v in enumerate(package.versions) if v.torch_minor == torch and xy in v.rocm]


def _torch_facts(ctx: Context, repo: Repo, xy: str, rel: RocmRelease, line: Line,
                 builds: Stated) -> list[Fact]:
    have = {t: s for t, s in rel.torch.items() if s.kind == "therock"}
    path = builds.evidence.split(" ", 1)[1]
    facts: list[Fact] = []
    for torch in sorted(set(have) | set(builds.value), key=versions_key):
        key = ("releases", xy, "torch", torch)
        src, pys = have.get(torch), builds.value.get(torch)
        what = f"ROCm {xy} torch {torch}"
        if src is None:
            facts.append(Fact("drift", what, "none", f"built for {', '.join(pys)}",
                              builds.evidence, (Edit(ROCM, key, _torch_entry(torch, pys, builds)),)))
        elif pys is None:
            facts.append(Fact("drift", what, src.spec, f"not built ({builds.detail})",
                              builds.evidence, (Edit(ROCM, key, None),
                                                *_unpair(ctx, xy, torch))))
        elif tuple(src.python) != pys:
            facts.append(Fact("drift", f"{what} Python", ", ".join(src.python), ", ".join(pys),
                              builds.evidence, (Edit(ROCM, (*key, "python"), list(pys)),
                                                Edit(ROCM, (*key, "evidence"),
                                                     f"{builds.evidence} ({builds.detail})"))))
        elif not _on_line(repo, src.evidence, path, line):
            facts.append(Fact("drift", f"{what} evidence", src.evidence,
                              f"{builds.evidence} ({builds.detail})", builds.evidence,
                              (Edit(ROCM, (*key, "evidence"),
                                    f"{builds.evidence} ({builds.detail})"),)))
    return facts


def _era_fact(ctx: Context, xy: str, rel: RocmRelease, listed: Stated) -> list[Fact]:
    era = rel.era
    have = set(era.targets) if era is not None else set()
    # a target the era's evidence credits to another source ("gfx950: pytorch/FBGEMM@...")
    other = {t for t in have if era is not None and f"{t}: " in era.evidence
             and t not in listed.value}
    if have - other == set(listed.value):
        return []
    name, edits = _era_edits(ctx, xy, listed, rel)
    return [Fact("drift", f"ROCm {xy} GPU targets",
                 f"{era.name if era else 'none'}: {', '.join(era.targets) if era else '-'}",
                 f"{name}: {', '.join(listed.value)}", listed.evidence,
                 (*edits, Edit(ROCM, ("releases", xy, "gpus"), name)))]


def _urls(urls: dict[str, str]) -> str:
    return ", ".join(f"{k} {v}" for k, v in urls.items()) or "none"


def _channel_fact(xy: str, rel: RocmRelease, chans: Stated) -> list[Fact]:
    have = dict(rel.sdk.channels)
    if ({k: v.rstrip("/") for k, v in have.items()}
            == {k: v.rstrip("/") for k, v in chans.value.items()}):
        return []
    return [Fact("drift", f"ROCm {xy} channels", _urls(have), _urls(chans.value), chans.evidence,
                 (Edit(ROCM, ("releases", xy, "channels"), _channel_entry(chans)),))]


def _release(ctx: Context, repo: Repo, rel: RocmRelease, line: Line) -> list[Fact]:
    facts = _line_fact(repo, line.minor, rel, line)
    read = _read(repo, line)
    if isinstance(read, Fact):
        return [*facts, read]
    builds, listed, chans = read
    return [*facts, *_torch_facts(ctx, repo, line.minor, rel, line, builds),
            *_era_fact(ctx, line.minor, rel, listed), *_channel_fact(line.minor, rel, chans)]


def release_facts(ctx: Context, repo: Repo) -> list[Fact]:
    multi = [v for v, r in ctx.matrix.rocm.items() if _multi_arch(r)]
    if not multi:
        return []
    oldest = versions_key(min(multi, key=versions_key))
    lines = release_lines(repo)
    legacy = [xy for xy in lines if versions_key(xy) < oldest]
    facts: list[Fact] = []
    if legacy:
        facts.append(Fact("note", "TheRock legacy releases", "-",
                          f"{', '.join(legacy)}: per-family releases before the oldest "
                          f"multi-arch one of the data ({min(multi, key=versions_key)}), "
                          "not compared", f"{SLUG} tags, release branches, version.json"))
    for xy, line in lines.items():
        if versions_key(xy) < oldest:
            continue
        rel = ctx.matrix.rocm.get(xy)
        facts.extend(_new_release(ctx, repo, line) if rel is None
                     else _release(ctx, repo, rel, line))
    return facts
