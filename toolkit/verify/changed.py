"""Rebuild what changed: the CI entries whose identity no published build has.

A build's identity digest (``toolkit.run.identity``: the planned identity, host paths as
tokens, and the upstream commit the data read its source at) is known before it runs. The
entry of a CI matrix is planned as the CI job plans it (``nox -s <session> -- --gfx GFX
--family SDK_FAMILY``: its targets, the per-family SDK's family, smoke on, no lock) on a
canonical host: the host is no part of the identity, so any host gives the same digest.

``changed`` keeps the entries whose digest is not among those of the published manifests
(``toolkit.verify.published``: a folder of manifests, or an index with a manifest beside each
wheel).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from types import MappingProxyType

from toolkit.data.ci import CiEntry
from toolkit.data.matrix import Build, Matrix
from toolkit.env.host import HostFacts
from toolkit.plan.layout import Layout
from toolkit.plan.model import Options, Plan
from toolkit.plan.planner import plan
from toolkit.run.identity import plan_digest

# where nothing is: every host path of a plan becomes a token in the identity
CANONICAL_LAYOUT = Layout(Path("/work"), Path("/cache"))
CANONICAL_PYTHON = "/canonical/python"
CANONICAL_UV = "/canonical/uv"


def entry_options(matrix: Matrix, entry: CiEntry) -> Options:
    """The options CI's build job gives this entry (``--gfx`` its targets; ``--family`` the
    SDK family on a per-family index, else none)."""
    gfx = matrix.expand_gfx([",".join(entry.gfx)]) if entry.gfx else ()
    per_family = entry.build.rocm.sdk.layout == "per-family"
    return Options(gfx=gfx, family=entry.family if per_family else None)


def build_plan(matrix: Matrix, build: Build, options: Options) -> Plan:
    """``build`` planned with ``options`` on the canonical host."""
    host = HostFacts(interpreters=MappingProxyType({build.python: CANONICAL_PYTHON}),
                     uv=CANONICAL_UV)
    return plan(matrix, build, options, host, CANONICAL_LAYOUT, toolkit_python=CANONICAL_PYTHON)


def entry_digest(matrix: Matrix, entry: CiEntry) -> str:
    """The identity digest the manifest of this entry's build will record."""
    return plan_digest(build_plan(matrix, entry.build, entry_options(matrix, entry)),
                       CANONICAL_LAYOUT)


def changed(matrix: Matrix, entries: Sequence[CiEntry], published: Iterable[str]) -> list[CiEntry]:
    """The entries (in order) whose identity digest is not in ``published``."""
    have = frozenset(published)
    return [e for e in entries if entry_digest(matrix, e) not in have]
