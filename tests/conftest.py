"""Shared pytest configuration."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "toolkit" / "data"


@pytest.fixture
def data_copy(tmp_path: Path) -> Path:
    """A writable copy of the matrix data, for malformed-data tests."""
    dest = tmp_path / "data"
    shutil.copytree(DATA, dest)
    return dest


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Never touch the user's cache from tests unless a test points it somewhere on purpose."""
    if "TOOLKIT_CACHE_DIR" not in os.environ:
        monkeypatch.setenv("TOOLKIT_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "toolkit-cache"))


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--run-network", action="store_true", default=False,
                     help="also run tests marked `network` (they download real wheels from PyPI)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--run-network"):
        return
    skip = pytest.mark.skip(reason="needs PyPI: run with --run-network")
    for item in items:
        if "network" in item.keywords:
            item.add_marker(skip)
