"""The options CI's build job gives a matrix entry, as ``--changed-since`` plans it
(``toolkit.verify.changed.entry_options``): ``--gfx`` the entry's targets, and ``--family``
the SDK family only where ROCm's index is one per family (README: 7.0's legacy per-family
index), never for a multi-arch index or a system ROCm; the canonical host is the documented
``/work`` and ``/cache``."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolkit.data.ci import github_matrix, load_ci
from toolkit.plan.recipes import load_matrix
from toolkit.verify import changed


@pytest.mark.parametrize(("rocm", "family"), [
    ("7.0", "gfx94X-dcgpu"), ("7.13", None), ("6.4", None),
])
def test_only_a_per_family_index_gets_the_entrys_family(rocm: str, family: str | None) -> None:
    m = load_matrix()
    entries = github_matrix(m, load_ci(m), "workflow_dispatch",
                            builds=m.select(packages=["apex"], rocm=[rocm]))
    entry = entries[0]
    assert entry.family == "gfx94X-dcgpu" and entry.gfx == ("gfx942",)
    options = changed.entry_options(m, entry)
    assert (options.gfx, options.family) == (("gfx942",), family)


def test_the_canonical_host_is_nowhere() -> None:
    assert (changed.CANONICAL_LAYOUT.root, changed.CANONICAL_LAYOUT.cache) == \
        (Path("/work"), Path("/cache"))
