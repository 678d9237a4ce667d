"""``nox -s build-<python>-rocm<rocm> -- --package P`` for a package that pair does not
build: one line naming the package, the pair and every package the pair does build
(comma-separated, sorted), so the user can pick one. The third package (a test double, on
ROCm 6.4 only) is asked for on a pair of another ROCm release that builds two packages."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fixtures import third_recipe
from toolkit.core.errors import UsageError
from toolkit.data.matrix import DATA_DIR, load_matrix
from toolkit.plan import recipes


def test_the_pairs_packages_are_listed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(recipes._RECIPES, third_recipe.NAME, third_recipe.Abi3Recipe())
    m = load_matrix(third_recipe.data_folder(tmp_path / "data", DATA_DIR))
    pairs: dict[tuple[str, str], set[str]] = {}
    for b in m.builds:
        pairs.setdefault((b.python, b.rocm.version), set()).add(b.package.name)
    (python, rocm), names = next((k, v) for k, v in sorted(pairs.items())
                                 if len(v) >= 2 and third_recipe.NAME not in v and k[1] != "6.4")
    with pytest.raises(UsageError) as err:
        m.pair_builds(python, rocm, [third_recipe.NAME])
    assert err.value.message == (f"package {third_recipe.NAME} has no build for Python {python} "
                                 f"/ ROCm {rocm}; this pair builds: {', '.join(sorted(names))}")
