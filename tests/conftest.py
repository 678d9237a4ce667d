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
