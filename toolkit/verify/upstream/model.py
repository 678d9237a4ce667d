"""What a rule reports: one ``Fact`` per disagreement, and the edit that would settle it.

A fact is ``drift`` (the data and upstream disagree, and ``--write`` can settle it from what
upstream states), ``review`` (they disagree and settling it needs judgement, e.g. a new
version's build flags: the fact names the upstream commit range to read) or ``note`` (worth
knowing, never a failure: a candidate release, a pair upstream's CI builds that no published
torch can serve). Rules are functions ``(Context) -> list[Fact]``: another rule (e.g. known
failures whose upstream issue closed) is one more function in ``rules.RULES``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolkit.data.matrix import Matrix
from toolkit.verify.upstream.repos import Repo

KINDS = ("drift", "review", "note")


@dataclass(frozen=True)
class Edit:
    """Set (or, with ``value=None``, remove) ``path`` in the data file ``file`` (a name in
    the data folder); a path item is a table key or an array index."""

    file: str
    path: tuple[str | int, ...]
    value: Any = None


@dataclass(frozen=True)
class Fact:
    kind: str  # one of KINDS
    what: str  # "apex 1.9.0 torch pair"
    data: str  # the data's value ("none" when the data lacks it)
    upstream: str  # upstream's value ("none" when upstream lacks it)
    evidence: str  # "owner/repo@commit path"
    edits: tuple[Edit, ...] = ()
    review: str = ""  # what needs judgement, with the upstream commit range

    @property
    def fails(self) -> bool:
        return self.kind != "note"

    def line(self) -> str:
        text = (f"{self.kind}: {self.what}: data {self.data}; upstream {self.upstream} "
                f"[{self.evidence}]")
        if self.review:
            text += f"; needs a recipe review: {self.review}"
        return text

    def as_json(self) -> dict[str, str]:
        return {"kind": self.kind, "what": self.what, "data": self.data,
                "upstream": self.upstream, "evidence": self.evidence, "review": self.review}


@dataclass
class Context:
    """What every rule reads: the matrix data, its folder, the repositories, and what other
    rules derived (``derived``: e.g. the torch -> ROCm pairs of upstream PyTorch)."""

    matrix: Matrix
    data_dir: Path
    repos: Mapping[str, Repo]
    derived: dict[str, Any] = field(default_factory=dict)


def versions_key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split("."))


def minor(version: str) -> str:
    return ".".join(version.split(".")[:2])


def source_review(what: str, seen: str | None, head: str, evidence: str, waiting: bool,
                  commits: str) -> Fact:
    """The data read ``what``'s source at ``seen``, upstream's head is ``head`` (short): the
    range needs a recipe review (``commits``: ``owner/repo@seen..head paths``); a version
    that waits for its torch owes it before it builds, so it is a note until then."""
    return Fact("note" if waiting else "review", what, f"@{seen}" if seen else "none",
                f"@{head}" + (" (due before it builds: it waits)" if waiting else ""), evidence,
                review=commits)


def review_range(slug: str, seen: str | None, head: str, paths: str) -> str:
    """What a source review reads: ``owner/repo@seen..head paths``; the whole source at
    ``head`` when the data names no reviewed commit (``seen`` None)."""
    return f"{slug}@{seen}..{head} {paths}" if seen else f"{slug}@{head} {paths}"
