"""ROCm/apex: versions from the ``release/X.Y.Z`` branches, their torch pairs, their ops.

- Versions: every ``release/X.Y.Z`` branch whose ``version.txt`` says ``X.Y.Z``, from the
  data's oldest version on (older branches are outside the matrix). The data names the branch
  head it was read at in ``evidence`` (``ROCm/apex@<commit>``): a branch that moved since needs
  a recipe review of that commit range.
- Torch pairs: apex's README table ("APEX Version | APEX branch | Torch Version", newest
  default branch), then TheRock's statement of which apex branch each torch release builds
  with (``external-builds/pytorch/README.md``, every version of it: the newest word wins).
- ROCm releases: apex documents none. A version past the seed table takes those upstream
  PyTorch published its torch for (pytorch/test-infra, see ``pytorch.py``), plus TheRock's SDK
  releases that build it: a release whose TheRock torch source (rocm.toml) cites a
  ``ROCm/TheRock@<commit>`` at which a Linux PyTorch wheel workflow checks apex out
  (``pytorch_apex_repo.py``) and ``external-builds/pytorch/README.md`` names this apex branch
  for that torch. The seed table's versions (``seed_table = true``) keep theirs. The Pythons:
  those PyTorch published that torch for (TheRock's own list is its torch source's
  ``python`` in rocm.toml, which limits the builds there).
- Recipe facts (jit-prebuild versions): the ops ``op_builder/*.py`` declare (``NAME = ...``)
  must be the recipe's expected modules; a difference needs a recipe review.

A version the data lacks is never written: its build flags need a recipe review (the commit
range from the newest reviewed version's head). The facts derivable for it are printed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from toolkit.data.matrix import Package, PackageVersion
from toolkit.plan.recipes.apex import seed_table
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

SLUG = "ROCm/apex"
THEROCK = "ROCm/TheRock"
THEROCK_DOC = "external-builds/pytorch/README.md"
_README_ROW = re.compile(r"^\|\s*``([0-9.]+)``\s*\|\s*release/([0-9.]+)\s*\|\s*``([0-9.]+)``", re.M)
_THEROCK_ROW = re.compile(r"^\|\s*([0-9]+\.[0-9]+)\s*\|(.*)$", re.M)
_THEROCK_APEX = re.compile(r"ROCm/apex `release/([0-9.]+)`")
_CITED = re.compile(rf"{re.escape(THEROCK)}@([0-9a-f]{{7,40}})")
APEX_CHECKOUT = "pytorch_apex_repo.py"  # TheRock's apex checkout, run by the workflows that build it
_OP_NAME = re.compile(r'^\s+NAME\s*=\s*["\']([A-Za-z0-9_]+)["\']', re.M)
# ops op_builder builds only when the environment allows (RCCL >= 2.19): never expected
CONDITIONAL_OPS = ("_apex_nccl_allocator",)


def torch_pairs(ctx: Context) -> dict[str, tuple[str, str]]:
    """apex version -> (torch minor, evidence), README first, TheRock's newer word over it."""
    apex, therock = ctx.repos[SLUG], ctx.repos.get(THEROCK)
    pairs: dict[str, tuple[str, str]] = {}
    head = apex.commit("HEAD")
    readme = apex.show(head, "README.md") if head else None
    for version, branch, torch in _README_ROW.findall(readme or ""):
        if version == branch:
            pairs[version] = (minor(torch), apex.evidence(str(head), "README.md"))
    if therock is not None:
        commits = therock.log("HEAD", THEROCK_DOC)
        for commit, text in zip(commits, therock.read_many([(c, THEROCK_DOC) for c in commits]), strict=True):
            for torch, rest in _THEROCK_ROW.findall(text or ""):
                for version in _THEROCK_APEX.findall(rest):
                    pairs[version] = (torch, therock.evidence(commit, THEROCK_DOC))
    return pairs


def branches(repo: Repo) -> dict[str, str]:
    """X.Y.Z -> head commit of every ``release/X.Y.Z`` branch."""
    return {name.removeprefix("release/"): commit
            for name, commit in repo.refs("refs/heads/release/").items()
            if re.fullmatch(r"release/[0-9]+\.[0-9]+\.[0-9]+", name)}


def _reviewed_commit(v: PackageVersion) -> str | None:
    m = re.search(rf"{re.escape(SLUG)}@([0-9a-f]{{7,40}})", v.evidence)
    return m.group(1) if m else None


def _ops(repo: Repo, commit: str) -> set[str] | None:
    names = repo.git("ls-tree", "--name-only", commit, "op_builder/").split()
    if not names:
        return None
    files = [n for n in names if n.endswith(".py")]
    texts = repo.read_many([(commit, f) for f in files])
    return {op for t in texts for op in _OP_NAME.findall(t or "")} - set(CONDITIONAL_OPS)


def _rocm_for(ctx: Context, torch: str) -> tuple[tuple[str, ...], str] | None:
    rel = ctx.derived.get("pytorch", {}).get(torch)
    if rel is None:
        return None
    return tuple(r for r in rel.rocm if r in ctx.matrix.rocm), rel.evidence


def therock_releases(ctx: Context, version: str, torch: str) -> tuple[tuple[str, ...], str]:
    """The matrix's TheRock releases whose torch ``torch`` TheRock builds with apex
    ``version`` (at the commit the torch source cites), and the evidence."""
    therock = ctx.repos.get(THEROCK)
    if therock is None:
        return (), ""
    found: list[str] = []
    cited: list[str] = []
    for rel in ctx.matrix.rocm.values():
        src = rel.torch.get(torch)
        m = _CITED.search(src.evidence) if src is not None and src.kind == "therock" else None
        if m is None:
            continue
        commit = m.group(1)
        named = {v for t, rest in _THEROCK_ROW.findall(therock.show(commit, THEROCK_DOC) or "")
                 if t == torch for v in _THEROCK_APEX.findall(rest)}
        workflows = therock.git("grep", "-l", APEX_CHECKOUT, commit, "--", ".github/workflows/",
                                check=False)
        if version in named and any(w.endswith("linux_pytorch_wheels.yml")
                                    for w in workflows.splitlines()):
            found.append(rel.version)
            cited.append(f"{therock.short(commit)} ({rel.version})")
    ev = (f"{THEROCK}@{', @'.join(cited)} {THEROCK_DOC}, .github/workflows/*linux_pytorch_wheels.yml"
          if cited else "")
    return tuple(found), ev


def _python_for(ctx: Context, torch: str) -> tuple[str, ...]:
    from toolkit.data.specs import PYTHONS

    rel = ctx.derived.get("pytorch", {}).get(torch)
    return tuple(p for p in rel.python if p in PYTHONS) if rel is not None else ()


_THEROCK_PART = "; TheRock: "


def _therock_part(evidence: str) -> str:
    """What an apex version's evidence says of the TheRock releases that build it."""
    return evidence.split(_THEROCK_PART, 1)[1] if _THEROCK_PART in evidence else ""


def _with_therock(evidence: str, rock_ev: str) -> str:
    """``evidence`` citing ``rock_ev`` (the commits each TheRock release is read at) for the
    TheRock releases; unchanged when no TheRock release builds the version."""
    sha = re.compile(r"@([0-9a-f]{7,40})")
    if not rock_ev or set(sha.findall(_therock_part(evidence))) == set(sha.findall(rock_ev)):
        return evidence  # the same commits, in other words: kept
    return evidence.split(_THEROCK_PART, 1)[0] + _THEROCK_PART + rock_ev


def _pair_facts(ctx: Context, i: int, v: PackageVersion, torch: str) -> list[Fact]:
    """The ROCm releases and Pythons of ``v`` (``versions[i]``) from the torch it pairs with;
    a waiting version (``rocm = []``) gets them once a ROCm release of the matrix has it."""
    derived = _rocm_for(ctx, torch)
    return [*_release_facts(ctx, i, v, torch, derived), *_python_facts(ctx, i, v, torch, derived)]


def _release_facts(ctx: Context, i: int, v: PackageVersion, torch: str,
                   derived: tuple[tuple[str, ...], str] | None) -> list[Fact]:
    """The ROCm releases upstream PyTorch and TheRock build ``v``'s torch for, against the
    data's; else whether the TheRock commits the evidence cites moved; else why it waits."""
    file, version = "apex.toml", v.version
    published, derived_ev = derived if derived else ((), "")
    rock, rock_ev = therock_releases(ctx, version, torch)
    wanted = published + tuple(r for r in rock if r not in published)
    cited = _with_therock(v.evidence, rock_ev)
    cite_edit = (Edit(file, ("versions", i, "evidence"), cited),) if cited != v.evidence else ()
    if _releases_differ(v, published, wanted):
        unwait = (Edit(file, ("versions", i, "waiting")),) if v.waiting else ()
        return [Fact("drift", f"apex {version} ROCm releases",
                     ", ".join(v.rocm) or f"none ({v.waiting})", ", ".join(wanted),
                     "; ".join(e for e in (derived_ev, rock_ev) if e),
                     (Edit(file, ("versions", i, "rocm"), list(wanted)), *unwait, *cite_edit))]
    if cite_edit:  # the releases agree; the commits the evidence names moved
        return [Fact("drift", f"apex {version} TheRock evidence",
                     _therock_part(v.evidence) or "none", rock_ev, rock_ev, cite_edit)]
    if v.waiting and not wanted:
        return [Fact("note", f"apex {version}", f"waiting ({v.waiting})",
                     f"no ROCm release of the matrix has torch {torch} for it",
                     derived[1] if derived else f"{SLUG} README.md; {THEROCK} {THEROCK_DOC}")]
    return []


def _releases_differ(v: PackageVersion, published: tuple[str, ...], wanted: tuple[str, ...]) -> bool:
    """The ROCm releases to write differ from the data's: upstream PyTorch published the torch
    for some, or a waiting version has some at last."""
    return bool(published or v.waiting and wanted) and set(wanted) != set(v.rocm)


def _python_facts(ctx: Context, i: int, v: PackageVersion, torch: str,
                  derived: tuple[tuple[str, ...], str] | None) -> list[Fact]:
    """The Pythons PyTorch published ``v``'s torch for, against the data's."""
    pythons = _python_for(ctx, torch)
    if not derived or not pythons or tuple(v.python) == pythons:
        return []
    return [Fact("drift", f"apex {v.version} Python", ", ".join(v.python), ", ".join(pythons), derived[1],
                 (Edit("apex.toml", ("versions", i, "python"), list(pythons)),))]


@dataclass(frozen=True)
class _Branches:
    """What upstream apex says of its release branches: heads, version.txt texts, torch pairs."""

    repo: Repo
    heads: dict[str, str]
    texts: dict[str, str | None]
    pairs: dict[str, tuple[str, str]]


def check(ctx: Context) -> list[Fact]:
    repo = ctx.repos[SLUG]
    package: Package = ctx.matrix.packages["apex"]
    heads = branches(repo)
    texts = dict(zip(heads, repo.read_many([(c, "version.txt") for c in heads.values()]), strict=True))
    up = _Branches(repo, heads, texts, torch_pairs(ctx))
    facts: list[Fact] = []
    listed = {v.version: (i, v) for i, v in enumerate(package.versions)}
    for version, (i, v) in listed.items():
        facts += _listed_facts(ctx, up, i, v) if version in heads else [
            Fact("drift", f"apex {version}", f"{v.ref}", "no such branch", f"{SLUG} refs/heads/release/*",
                 review="the data names a branch upstream lacks")]
    return facts + _unlisted_facts(ctx, up, listed)


def _listed_facts(ctx: Context, up: _Branches, i: int, v: PackageVersion) -> list[Fact]:
    """A version the data lists, against its branch: version.txt, the reviewed commit, the
    torch it pairs with, the ROCm releases and Pythons of that torch, the ops it builds."""
    version, repo = v.version, up.repo
    head = up.heads[version]
    ev = repo.evidence(head, "version.txt")
    facts: list[Fact] = []
    stated = (up.texts[version] or "").strip()
    if stated != version:
        facts.append(Fact("drift", f"apex {version} version.txt", version, stated or "none", ev))
    seen = _reviewed_commit(v)
    if seen is None or not head.startswith(seen):
        facts.append(source_review(f"apex {version} source", seen, repo.short(head), ev, bool(v.waiting),
                                   review_range(SLUG, seen, repo.short(head), "setup.py op_builder")))
    if version in up.pairs and up.pairs[version][0] != v.torch_minor:
        torch, tev = up.pairs[version]
        facts.append(Fact("drift", f"apex {version} torch", v.torch, torch, tev,
                          (Edit("apex.toml", ("versions", i, "torch"), torch),)))
    if not seed_table(v):  # from the torch upstream pairs it with
        facts += _pair_facts(ctx, i, v, up.pairs[version][0] if version in up.pairs else v.torch_minor)
    return facts + _ops_facts(repo, head, v)


def _ops_facts(repo: Repo, head: str, v: PackageVersion) -> list[Fact]:
    """A jit-prebuild version: the ops op_builder declares at ``head`` against the recipe's
    expected modules."""
    if v.build_style != "jit-prebuild":
        return []
    from toolkit.plan.recipes import recipe_for

    ops = _ops(repo, head)
    expected = {m.removeprefix("apex.") for m in recipe_for("apex").expected_modules(v)}
    if ops is None or ops == expected:
        return []
    return [Fact("review", f"apex {v.version} ops", ", ".join(sorted(expected - ops)) or "-",
                 ", ".join(sorted(ops - expected)) or "-", repo.evidence(head, "op_builder/"),
                 review="the recipe's expected modules (plan/recipes/apex.py) differ from "
                        "op_builder's NAMEs")]


def _unlisted_facts(ctx: Context, up: _Branches,
                    listed: dict[str, tuple[int, PackageVersion]]) -> list[Fact]:
    """Release branches from the data's oldest version on that it does not list: each needs a
    recipe review from the newest listed version's reviewed commit."""
    oldest = min(listed, key=versions_key)
    newest = max(listed, key=versions_key)
    since = _reviewed_commit(listed[newest][1]) or newest
    facts: list[Fact] = []
    for version in sorted(set(up.heads) - set(listed), key=versions_key):
        if versions_key(version) < versions_key(oldest):
            continue
        head = up.heads[version]
        torch, tev = up.pairs.get(version, ("unknown", f"{SLUG} README.md"))
        rocm = _rocm_for(ctx, torch) if torch != "unknown" else None
        what = f"torch {torch}" + (f", rocm {', '.join(rocm[0])}" if rocm else "")
        facts.append(Fact(
            "review", f"apex {version}", "none", f"release/{version} @{up.repo.short(head)} ({what})",
            f"{up.repo.evidence(head, 'version.txt')}; torch: {tev}",
            review=f"{SLUG}@{since}..{up.repo.short(head)} setup.py op_builder (build style, ops, "
                   "switches)"))
    return facts
