"""The rules and the one entry point: ``run(data_dir, folder=..., cache=...)``.

Each rule is ``(slugs it reads, function(Context) -> list[Fact])``; a rule whose repositories
are all present runs. Adding a rule is one more entry here and one module beside this one
(``known``: known failures whose evidence is gone upstream).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from toolkit.plan.recipes import load_matrix
from toolkit.verify.upstream import apex, fbgemm, known, pytorch, therock
from toolkit.verify.upstream.model import Context, Fact
from toolkit.verify.upstream.repos import from_cache, from_folder, require_git

Rule = Callable[[Context], list[Fact]]


@dataclass(frozen=True)
class RuleSpec:
    name: str
    slugs: tuple[str, ...]  # repositories it reads (the first ones are required)
    check: Rule


RULES: tuple[RuleSpec, ...] = (
    RuleSpec("pytorch", (pytorch.SLUG,), pytorch.check),
    RuleSpec("apex", (apex.SLUG, apex.THEROCK), apex.check),
    RuleSpec("fbgemm_gpu", (fbgemm.SLUG,), fbgemm.check),
    RuleSpec("therock", (therock.SLUG,), therock.check),
    # reads the repositories the entries cite among those above (another one: a note)
    RuleSpec("known_failures", (), known.check),
)


def slugs(rules: Sequence[RuleSpec] = RULES) -> list[str]:
    return list(dict.fromkeys(s for r in rules for s in r.slugs))


def run(data_dir: Path, *, folder: Path | None, cache: Path,
        rules: Sequence[RuleSpec] = RULES) -> list[Fact]:
    """Every fact the rules find (raises ``UsageError`` for a bad folder, exit 2;
    ``EnvironmentProblem`` without git, exit 4)."""
    require_git()
    matrix = load_matrix(data_dir)
    names = slugs(rules)
    repos = from_folder(folder, names) if folder is not None else from_cache(cache, names)
    ctx = Context(matrix, data_dir, repos)
    facts: list[Fact] = []
    for rule in rules:
        facts.extend(rule.check(ctx))
    return facts
