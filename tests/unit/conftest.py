"""Fixtures shared by the unit tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.upstream_fakes import World


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    """Hand-made upstream repositories and the data folder agreeing with them, which the
    loader reads (``TOOLKIT_DATA_DIR``)."""
    w = World(tmp_path)
    monkeypatch.setenv("TOOLKIT_DATA_DIR", str(w.data))
    return w
