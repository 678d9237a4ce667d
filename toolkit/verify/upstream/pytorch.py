"""Upstream PyTorch's torch -> ROCm pairs, read in pytorch/test-infra.

``tools/scripts/generate_binary_build_matrix.py`` names the stable torch release
(``CURRENT_STABLE_VERSION``) and the ROCm versions of each channel (``ROCM_ARCHES_DICT``).
A release's pairs are ``ROCM_ARCHES_DICT["release"]`` (its Pythons
``PYTHON_ARCHES_DICT["release"]``) at its *stable commit*: the first
commit whose ``CURRENT_STABLE_VERSION`` is ``X.Y.0`` (later edits within a release, e.g. a
ROCm added then reverted, are not what was published). A newer ``CURRENT_CANDIDATE_VERSION``
is a candidate: a note, never a pair. The wheels live at
``https://download.pytorch.org/whl/rocmX.Y/`` as ``torch==X.Y.0+rocmX.Y``.

Compared with rocm.toml: a pair upstream published that the data lacks, or points elsewhere,
is drift (``--write`` adds it); a ``kind = "pytorch"`` pair upstream never published is drift
too (never written: where that torch comes from needs a review); a ROCm release the data
lacks needs a review (its SDK and default family are not upstream PyTorch's word).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from toolkit.core.versions import version_sort_key
from toolkit.verify.upstream.model import Context, Edit, Fact, minor
from toolkit.verify.upstream.repos import Repo

if TYPE_CHECKING:
    from toolkit.data.releases import TorchSource

SLUG = "pytorch/test-infra"
SCRIPT = "tools/scripts/generate_binary_build_matrix.py"
INDEX = "https://download.pytorch.org/whl/rocm{rocm}/"
_STABLE = re.compile(r'^CURRENT_STABLE_VERSION\s*=\s*"([0-9.]+)"', re.M)


@dataclass(frozen=True)
class Release:
    torch: str  # "2.13"
    rocm: tuple[str, ...]
    python: tuple[str, ...]  # PYTHON_ARCHES_DICT["release"]: the Pythons it was published for
    commit: str
    evidence: str

    def source(self, rocm: str) -> dict[str, str]:
        """The rocm.toml torch entry upstream states for ``rocm``."""
        return {"kind": "pytorch", "index_url": INDEX.format(rocm=rocm),
                "spec": f"torch=={self.torch}.0+rocm{rocm}", "evidence": self.evidence}


def _assignments(text: str) -> dict[str, object]:
    values: dict[str, object] = {}
    for node in ast.parse(text).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 \
                and isinstance(node.targets[0], ast.Name):
            try:
                values[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                continue
    return values


def _rocm(values: dict[str, object], channel: str) -> tuple[str, ...]:
    arches = values.get("ROCM_ARCHES_DICT")
    if isinstance(arches, dict) and isinstance(arches.get(channel), list):
        return tuple(str(v) for v in arches[channel])
    return ()


def releases(repo: Repo, oldest: str) -> tuple[list[Release], Fact | None]:
    """Every stable release from torch ``oldest`` on, and a note on the candidate."""
    commits = repo.log("HEAD", SCRIPT)
    texts = repo.read_many([(c, SCRIPT) for c in commits])
    seen: set[str] = set()
    out: list[Release] = []
    for commit, text in zip(commits, texts, strict=True):
        m = _STABLE.search(text or "")
        if not m or not m.group(1).endswith(".0") or minor(m.group(1)) in seen:
            continue
        torch = minor(m.group(1))
        seen.add(torch)
        if version_sort_key(torch) < version_sort_key(oldest):
            continue
        values = _assignments(text or "")
        rocm = _rocm(values, "release")
        pythons = values.get("PYTHON_ARCHES_DICT")
        python = tuple(pythons.get("release", ())) if isinstance(pythons, dict) else ()
        if rocm:
            ev = (f"{repo.evidence(commit, SCRIPT)} ({torch}.0: rocm {', '.join(rocm)})")
            out.append(Release(torch, rocm, python, commit, ev))
    note = None
    head = texts[-1] if texts else None
    if head:
        values = _assignments(head)
        cand = str(values.get("CURRENT_CANDIDATE_VERSION", ""))
        if cand and minor(cand) not in seen:
            note = Fact("note", f"torch {minor(cand)} (candidate)", "none",
                        f"test channel: rocm {', '.join(_rocm(values, 'test'))}",
                        repo.evidence(commits[-1], SCRIPT))
    return out, note


def check(ctx: Context) -> list[Fact]:
    repo = ctx.repos[SLUG]
    data = ctx.matrix.rocm
    pairs_in_data = [(r.version, t) for r in data.values() for t in r.torch]
    oldest = min((t for _, t in pairs_in_data), key=version_sort_key)
    found, note = releases(repo, oldest)
    ctx.derived["pytorch"] = {rel.torch: rel for rel in found}
    facts: list[Fact] = [note] if note else []
    published = {(rocm, rel.torch): rel for rel in found for rocm in rel.rocm}
    missing: dict[str, list[Release]] = {}  # the ROCm releases the data lacks, with their torch
    for (rocm, torch), rel in published.items():
        if rocm in data:
            facts += _pair_facts(rocm, torch, rel, data[rocm].torch.get(torch))
        else:
            missing.setdefault(rocm, []).append(rel)
    by_torch = {rel.torch: rel for rel in found}
    facts += [_unpublished_fact(repo, rocm, torch, data[rocm].torch[torch].spec, by_torch.get(torch))
              for rocm, torch in pairs_in_data
              if data[rocm].torch[torch].kind == "pytorch" and (rocm, torch) not in published]
    return facts + [_missing_release_fact(rocm, rels)
                    for rocm, rels in sorted(missing.items(), key=lambda kv: version_sort_key(kv[0]))]


def _pair_facts(rocm: str, torch: str, rel: Release, have: TorchSource | None) -> list[Fact]:
    """A torch upstream PyTorch published for a ROCm release of the data, against the data's
    torch source of that pair: missing, another build, or evidence read at another commit."""
    where = f"ROCm {rocm} torch {torch}"
    want = rel.source(rocm)
    edit = Edit("rocm.toml", ("releases", rocm, "torch", torch), want)
    if have is None:
        return [Fact("drift", where, "none", f"{want['spec']} from {want['index_url']}", rel.evidence,
                     (edit,))]
    if (have.kind, have.index_url, have.spec) != (want["kind"], want["index_url"], want["spec"]):
        return [Fact("drift", where, f"{have.kind} {have.spec}",
                     f"pytorch {want['spec']} from {want['index_url']}", rel.evidence, (edit,))]
    if not _cites(have.evidence, rel.commit):
        return [Fact("drift", f"{where} evidence", have.evidence, rel.evidence, rel.evidence,
                     (Edit("rocm.toml", edit.path + ("evidence",), rel.evidence),))]
    return []


def _cites(evidence: str, commit: str) -> bool:
    """Does ``evidence`` cite pytorch/test-infra at (a prefix of) ``commit``?"""
    return evidence.startswith(f"{SLUG}@") and commit.startswith(evidence.split("@")[1].split()[0])


def _unpublished_fact(repo: Repo, rocm: str, torch: str, spec: str, known: Release | None) -> Fact:
    """A pair the data takes from upstream PyTorch that it never published: a review."""
    return Fact(
        "review", f"ROCm {rocm} torch {torch}", f"pytorch {spec}",
        f"no such pair (torch {torch}: rocm {', '.join(known.rocm)})" if known
        else f"no stable torch {torch}",
        known.evidence if known else repo.evidence(repo.commit("HEAD") or "", SCRIPT),
        review="upstream PyTorch never published it: point it at AMD's or TheRock's "
               "build (with evidence) or drop it")


def _missing_release_fact(rocm: str, rels: list[Release]) -> Fact:
    """A ROCm release upstream PyTorch publishes torch for that the data lacks: a review."""
    torches = ", ".join(r.torch for r in rels)
    return Fact(
        "review", f"ROCm {rocm}", "none", f"torch {torches} published for it",
        rels[-1].evidence,
        review=f'add [releases."{rocm}"] (hip, default_family, sdk: not upstream '
               f"PyTorch's word) and an empty [releases.\"{rocm}\".torch]; `--write` then "
               "adds its torch entries")
