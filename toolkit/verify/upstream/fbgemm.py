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

A version the data lacks is never written: its build recipe (build style, default targets,
submodules, tbb) needs a review of the commit range from the newest reviewed tag.
"""

from __future__ import annotations

import ast
import re

from toolkit.data.matrix import Package, PackageVersion
from toolkit.verify.upstream.model import Context, Edit, Fact, minor, versions_key
from toolkit.verify.upstream.repos import Repo

SLUG = "pytorch/FBGEMM"
INIT = "fbgemm_gpu/fbgemm_gpu/__init__.py"
CI = ".github/workflows/fbgemm_gpu_ci_rocm.yml"
_LIST = r"\[([^\]]*)\]"


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


def check(ctx: Context) -> list[Fact]:
    repo = ctx.repos[SLUG]
    package: Package = ctx.matrix.packages["fbgemm_gpu"]
    file = "fbgemm_gpu.toml"
    found = tags(repo)
    if not found:
        return [Fact("drift", "fbgemm_gpu versions", ", ".join(v.version for v in package.versions),
                     "no release tag", f"{SLUG} refs/tags/v*")]
    newest_tag = max(found, key=versions_key)
    table = compat_table(repo.show(found[newest_tag], INIT) or "")
    table_ev = repo.evidence(found[newest_tag], INIT)
    cis = dict(zip(found, repo.read_many([(c, CI) for c in found.values()]), strict=True))
    oldest = min((v.version for v in package.versions), key=versions_key)
    listed = {v.version: (i, v) for i, v in enumerate(package.versions)}
    facts: list[Fact] = []

    def derive(version: str) -> tuple[str | None, tuple[str, ...], tuple[str, ...], list[str]]:
        torch = table.get(minor(version))
        pythons, rocms = ci_matrix(cis.get(version) or "")
        usable = [r for r in rocms if r in ctx.matrix.rocm and torch in ctx.matrix.rocm[r].torch]
        unusable = [r for r in rocms if r not in usable]
        return torch, pythons, tuple(usable), unusable

    for version, (i, v) in listed.items():
        if version not in found:
            facts.append(Fact("drift", f"fbgemm_gpu {version}", v.ref, "no such tag",
                              f"{SLUG} refs/tags/v*", review="the data names a tag upstream lacks"))
            continue
        commit = found[version]
        ci_ev = repo.evidence(commit, CI)
        seen = _reviewed_commit(v)
        if seen is None or not commit.startswith(seen):
            facts.append(Fact("review", f"fbgemm_gpu {version} source", f"@{seen}",
                              f"@{repo.short(commit)}", ci_ev,
                              review=f"{SLUG}@{seen}..{repo.short(commit)} fbgemm_gpu/"))
        torch, pythons, rocms, unusable = derive(version)
        if torch and torch != v.torch_minor:
            facts.append(Fact("drift", f"fbgemm_gpu {version} torch", v.torch, torch, table_ev,
                              (Edit(file, ("versions", i, "torch"), torch),)))
        if pythons and tuple(v.python) != pythons:
            facts.append(Fact("drift", f"fbgemm_gpu {version} Python", ", ".join(v.python),
                              ", ".join(pythons), ci_ev,
                              (Edit(file, ("versions", i, "python"), list(pythons)),)))
        if rocms and set(v.rocm) != set(rocms):
            facts.append(Fact("drift", f"fbgemm_gpu {version} ROCm releases", ", ".join(v.rocm),
                              ", ".join(rocms), ci_ev,
                              (Edit(file, ("versions", i, "rocm"), list(rocms)),)))
        for rocm in unusable:
            facts.append(Fact("note", f"fbgemm_gpu {version} on ROCm {rocm}", "none",
                              f"CI builds it, but rocm.toml has no torch {torch} for ROCm {rocm}",
                              ci_ev))
    newest = max(listed, key=versions_key)
    since = _reviewed_commit(listed[newest][1]) or f"v{newest}"
    minors = {minor(v): v for v in listed}
    for version in sorted(set(found) - set(listed), key=versions_key):
        if versions_key(version) < versions_key(oldest):
            continue
        if minor(version) in minors:  # the matrix builds one release per torch release
            facts.append(Fact("note", f"fbgemm_gpu {version}", f"v{minors[minor(version)]}",
                              f"patch release v{version} of {minor(version)}",
                              repo.evidence(found[version], CI)))
            continue
        torch, pythons, rocms, _ = derive(version)
        facts.append(Fact(
            "review", f"fbgemm_gpu {version}", "none",
            f"v{version} @{repo.short(found[version])} (torch {torch}, python "
            f"{', '.join(pythons)}, rocm {', '.join(rocms) or 'none usable'})",
            f"{repo.evidence(found[version], CI)}; torch: {table_ev}",
            review=f"{SLUG}@{since}..{repo.short(found[version])} fbgemm_gpu/setup.py, "
                   ".github/scripts/fbgemm_gpu_build.bash, .gitmodules (build style, default "
                   "targets, submodules, tbb)"))
    return facts
