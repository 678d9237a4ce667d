"""Fixtures shared by the unit tests."""

from __future__ import annotations

import locale
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.unit.upstream_fakes import World


@pytest.fixture(scope="session")
def world_template(tmp_path_factory: pytest.TempPathFactory) -> World:
    """The hand-made world made once per process (git init, commits, tags); tests get copies."""
    return World(tmp_path_factory.mktemp("world-template"))


@pytest.fixture
def world(world_template: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    """Hand-made upstream repositories and the data folder agreeing with them, which the
    loader reads (``TOOLKIT_DATA_DIR``); this test's own copy of ``world_template``."""
    w = World.copy_of(world_template, tmp_path)
    monkeypatch.setenv("TOOLKIT_DATA_DIR", str(w.data))
    return w


@pytest.fixture
def ascii_locale() -> Iterator[None]:
    """The C locale, whose character set is ASCII (what a bare container or cron job runs)."""
    old = locale.setlocale(locale.LC_CTYPE)
    locale.setlocale(locale.LC_CTYPE, "C")
    try:
        yield
    finally:
        locale.setlocale(locale.LC_CTYPE, old)
