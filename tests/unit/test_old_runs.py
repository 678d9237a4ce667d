"""Which earlier runs' tmp folders the suite removes behind its tests
(``tests/fixtures/old_runs.py``): pytest's own rule, written out by hand here (the folders
numbered at most this run's number less the retention count), never one in use."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fixtures.old_runs import _remove, candidates


@pytest.fixture
def root(tmp_path: Path) -> Path:
    for n in range(1, 8):
        (tmp_path / f"pytest-{n}" / "popen-gw0").mkdir(parents=True)
    (tmp_path / "pytest-2" / ".lock").write_text("")  # a concurrent or killed run's
    (tmp_path / "pytest-7" / ".lock").write_text("")  # this run's
    (tmp_path / "pytest-current").symlink_to(tmp_path / "pytest-7")
    (tmp_path / "pytest-0").symlink_to(tmp_path / "pytest-1")
    (tmp_path / "garbage-x").mkdir()
    (tmp_path / "pytest-9x").mkdir()
    return tmp_path


def test_the_folders_pytest_removes_at_the_end_and_no_run_holds(root: Path) -> None:
    # this run is pytest-7; keep 3: pytest-5, -6 and -7 stay; pytest-2 is locked
    assert candidates(root / "pytest-7", 3) == [root / "pytest-1", root / "pytest-3",
                                                root / "pytest-4"]
    assert candidates(root / "pytest-7", 1) == [root / f"pytest-{n}" for n in (1, 3, 4, 5, 6)]
    assert candidates(root / "pytest-7", 7) == []


def test_nothing_for_a_given_basetemp_or_keep_0(root: Path) -> None:
    assert candidates(root / "mytemp", 3) == []
    assert candidates(root / "pytest-7", 0) == []  # keep 0: pytest removes this run's too


def test_removed_folders_are_gone_and_the_others_kept(root: Path) -> None:
    _remove(candidates(root / "pytest-7", 3))
    left = sorted(p.name for p in root.iterdir())
    assert left == ["garbage-x", "pytest-0", "pytest-2", "pytest-5", "pytest-6", "pytest-7",
                    "pytest-9x", "pytest-current"]
