"""pytorch/FBGEMM (fbgemm_gpu, ROCm variant): versions from release tags, pairs from its CI.

- Versions: every ``vX.Y.Z`` tag (release candidates ``-rcN`` are not releases), from the
  data's oldest version on. The data's ``evidence`` names the tag's commit. The matrix builds
  one release per minor (each pairs with one torch release): a patch tag of a minor the data
  builds is a note.
- Torch pairs: ``_fbgemm_torch_compat_table`` in ``fbgemm_gpu/fbgemm_gpu/__init__.py`` at the
  newest tag (each release's table lists the releases before it; the newest covers them all).
- Python x ROCm: the build job of ``.github/workflows/fbgemm_gpu_ci_rocm.yml`` at the tag (its
  first ``python-version`` and ``rocm-version`` lists). A ROCm version CI builds (against
  PyTorch's nightly) for which rocm.toml has no source of the paired torch cannot make a
  release wheel: a note, not a pair.

A version the data lacks whose torch has a ROCm release in the matrix is never written: its
build recipe (build style, default targets, submodules, tbb) needs a review of the commit range
from the newest reviewed tag. One whose torch (the table at its tag) no ROCm release its CI
builds has in the matrix is written as waiting (``rocm = []``, ``waiting``, toolkit.data.waiting): no build,
the newest version's recipe, and its evidence names that version's commit as the one reviewed,
so the review of the range is due (a note while it waits, a review once it builds). A waiting
version whose torch a ROCm release its CI builds now has is drift: ``--write`` fills ``rocm``.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Any

from toolkit.data.matrix import Package, PackageVersion
from toolkit.data.waiting import reason
from toolkit.plan.recipes.fbgemm_gpu import tbb_source
from toolkit.verify.upstream.model import (
    Context,
    Edit,
    Fact,
    minor,
    review_range,
    source_review,
    versions_key,
)
from toolkit.verify.upstream.repos import Repo

SLUG = "pytorch/FBGEMM"
INIT = "fbgemm_gpu/fbgemm_gpu/__init__.py"
CI = ".github/workflows/fbgemm_gpu_ci_rocm.yml"
FILE = "fbgemm_gpu.toml"
_LIST = r"\[([^\]]*)\]"
# the keys a waiting version takes over from the newest version (its recipe, not yet reviewed)
RECIPE_KEYS = ("build_style", "default_targets", "submodules", "tbb")


def tags(repo: Repo) -> dict[str, str]:
    """X.Y.Z -> commit of every ``vX.Y.Z`` tag."""
    return {name[1:]: commit for name, commit in repo.refs("refs/tags/").items()
            if re.fullmatch(r"v[0-9]+\.[0-9]+\.[0-9]+", name)}


def compat_table(text: str) -> dict[str, str]:
    target: ast.expr
    value: ast.expr | None
    for node in ast.parse(text).body:
        if isinstance(node, ast.AnnAssign):
            target, value = node.target, node.value
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        else:
            continue
        if isinstance(target, ast.Name) and target.id == "_fbgemm_torch_compat_table" \
                and value is not None:
            table = ast.literal_eval(value)
            return {str(k): str(v) for k, v in table.items()}
    return {}


def ci_matrix(text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(python versions, ROCm versions) of the workflow's first (build) job."""
    def first(key: str) -> tuple[str, ...]:
        m = re.search(rf"^\s*{key}:\s*{_LIST}", text, re.M)
        return tuple(re.findall(r'"([^"]+)"', m.group(1))) if m else ()
    return first("python-version"), first("rocm-version")


def _reviewed_commit(v: PackageVersion) -> str | None:
    m = re.search(rf"{re.escape(SLUG)}@([0-9a-f]{{7,40}})", v.evidence)
    return m.group(1) if m else None


def _recipe(v: PackageVersion) -> dict[str, Any]:
    """``v``'s recipe keys as its data file writes them."""
    out: dict[str, Any] = {"build_style": v.build_style}
    if v.default_targets:
        out["default_targets"] = {k: list(t) for k, t in v.default_targets.items()}
    if v.submodules:
        out["submodules"] = dict(v.submodules)
    tbb = tbb_source(v)
    if tbb is not None:
        out["tbb"] = {"provider": tbb.provider} | ({"spec": tbb.spec} if tbb.spec else {})
    return out


@dataclass
class _Rule:
    """What one run of the rule reads: the tags, the newest table, each tag's CI."""

    ctx: Context
    repo: Repo
    package: Package
    found: dict[str, str]
    table: dict[str, str]
    table_ev: str
    cis: dict[str, str | None]

    def derive(self, version: str) -> tuple[str | None, tuple[str, ...], tuple[str, ...],
                                             list[str]]:
        """(torch, CI Pythons, CI ROCm releases the matrix has that torch on, the others)."""
        rocm = self.ctx.matrix.rocm
        torch = self.table.get(minor(version))
        pythons, rocms = ci_matrix(self.cis.get(version) or "")
        usable = [r for r in rocms if r in rocm and torch in rocm[r].torch]
        return torch, pythons, tuple(usable), [r for r in rocms if r not in usable]



def check(ctx: Context) -> list[Fact]:
    repo = ctx.repos[SLUG]
    package: Package = ctx.matrix.packages["fbgemm_gpu"]
    found = tags(repo)
    if not found:
        return [Fact("drift", "fbgemm_gpu versions", ", ".join(v.version for v in package.versions),
                     "no release tag", f"{SLUG} refs/tags/v*")]
    newest_tag = max(found, key=versions_key)
    rule = _Rule(ctx, repo, package, found, compat_table(repo.show(found[newest_tag], INIT) or ""),
                 repo.evidence(found[newest_tag], INIT),
                 dict(zip(found, repo.read_many([(c, CI) for c in found.values()]), strict=True)))
    facts: list[Fact] = []
    for i, v in enumerate(package.versions):
        facts.extend(_listed(rule, i, v))
    facts.extend(_new(rule))
    return facts


def _listed(rule: _Rule, i: int, v: PackageVersion) -> list[Fact]:
    """The facts of version ``v`` (``versions[i]`` of the data)."""
    repo, version = rule.repo, v.version
    if version not in rule.found:
        return [Fact("drift", f"fbgemm_gpu {version}", v.ref, "no such tag", f"{SLUG} refs/tags/v*",
                     review="the data names a tag upstream lacks")]
    facts: list[Fact] = []
    commit = rule.found[version]
    ci_ev = repo.evidence(commit, CI)
    seen = _reviewed_commit(v)
    if seen is None or not commit.startswith(seen):
        facts.append(source_review(f"fbgemm_gpu {version} source", seen, repo.short(commit),
                                   ci_ev, bool(v.waiting),
                                   review_range(SLUG, seen, repo.short(commit), "fbgemm_gpu/")))
    torch, pythons, rocms, unusable = rule.derive(version)
    if torch and torch != v.torch_minor:
        edits = (Edit(FILE, ("versions", i, "torch"), torch),) + (
            (Edit(FILE, ("versions", i, "waiting"), reason(torch, unusable)),) if v.waiting else ())
        facts.append(Fact("drift", f"fbgemm_gpu {version} torch", v.torch, torch, rule.table_ev,
                          edits))
    if pythons and tuple(v.python) != pythons:
        facts.append(Fact("drift", f"fbgemm_gpu {version} Python", ", ".join(v.python),
                          ", ".join(pythons), ci_ev,
                          (Edit(FILE, ("versions", i, "python"), list(pythons)),)))
    return facts + _rocm_facts(i, v, torch, rocms, unusable, ci_ev)


def _rocm_facts(i: int, v: PackageVersion, torch: str | None, rocms: tuple[str, ...],
                unusable: list[str], ci_ev: str) -> list[Fact]:
    """The ROCm releases CI builds ``v`` for and the matrix has its torch for, against the
    data's; a waiting version with none says why; each release CI builds whose torch the
    matrix lacks is a note."""
    version = v.version
    if rocms and set(v.rocm) != set(rocms):
        edits = (Edit(FILE, ("versions", i, "rocm"), list(rocms)),) + (
            (Edit(FILE, ("versions", i, "waiting")),) if v.waiting else ())
        facts = [Fact("drift", f"fbgemm_gpu {version} ROCm releases",
                      ", ".join(v.rocm) or f"none ({v.waiting})", ", ".join(rocms), ci_ev, edits)]
    elif v.waiting:
        return [Fact("note", f"fbgemm_gpu {version}", f"waiting ({v.waiting})",
                     f"no ROCm release of the matrix that its CI builds "
                     f"({', '.join(unusable) or 'none'}) has torch {torch or v.torch_minor}", ci_ev)]
    else:
        facts = []
    return facts + [Fact("note", f"fbgemm_gpu {version} on ROCm {rocm}", "none",
                         f"CI builds it, but rocm.toml has no torch {torch} for ROCm {rocm}", ci_ev)
                    for rocm in unusable]


def _new(rule: _Rule) -> list[Fact]:
    """The tags the data lacks: a patch release (a note), a version to record as waiting
    (drift, written) or one to review."""
    repo, package = rule.repo, rule.package
    listed = {v.version: v for v in package.versions}
    oldest = min(listed, key=versions_key)
    newest = listed[max(listed, key=versions_key)]
    since = _reviewed_commit(newest) or f"v{newest.version}"
    minors = {minor(v): v for v in listed}
    facts: list[Fact] = []
    added = 0
    for version in sorted(set(rule.found) - set(listed), key=versions_key):
        commit = rule.found[version]
        ci_ev = repo.evidence(commit, CI)
        if versions_key(version) < versions_key(oldest):
            continue
        if minor(version) in minors:  # the matrix builds one release per torch release
            facts.append(Fact("note", f"fbgemm_gpu {version}", f"v{minors[minor(version)]}",
                              f"patch release v{version} of {minor(version)}", ci_ev))
            continue
        torch, pythons, rocms, unusable = rule.derive(version)
        ranged = f"{SLUG}@{since}..{repo.short(commit)}"
        if torch is not None and pythons and not rocms:  # no ROCm its CI builds has its torch
            why = reason(torch, unusable)
            entry = {"version": version, "ref": f"v{version}", "torch": torch, "rocm": [],
                     "waiting": why, "python": list(pythons),
                     "evidence": f"recipe as reviewed at {SLUG}@{since} (v{newest.version}), "
                                 f"{ranged} not yet; v{version}: {ci_ev}; torch pair: "
                                 f"{rule.table_ev}"} | _recipe(newest)
            facts.append(Fact(
                "drift", f"fbgemm_gpu {version}", "none",
                f"v{version} @{repo.short(commit)} (torch {torch}: {why}; python "
                f"{', '.join(pythons)})", f"{ci_ev}; torch: {rule.table_ev}",
                (Edit(FILE, ("versions", len(listed) + added), entry),)))
            added += 1
            continue
        facts.append(Fact(
            "review", f"fbgemm_gpu {version}", "none",
            f"v{version} @{repo.short(commit)} (torch {torch}, python "
            f"{', '.join(pythons)}, rocm {', '.join(rocms) or 'none usable'})",
            f"{ci_ev}; torch: {rule.table_ev}",
            review=f"{ranged} fbgemm_gpu/setup.py, .github/scripts/fbgemm_gpu_build.bash, "
                   ".gitmodules (build style, default targets, submodules, tbb)"))
    return facts
