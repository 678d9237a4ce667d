"""Where the toolkit keeps its files: the cache follows the XDG base directory spec, and
artifacts are shown relative to the current folder when inside it."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolkit.plan.layout import Layout


def test_the_cache_follows_the_xdg_base_directory_spec(monkeypatch: pytest.MonkeyPatch) -> None:
    from toolkit.plan.layout import default_cache

    monkeypatch.delenv("TOOLKIT_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", "/x/cache")
    assert default_cache() == Path("/x/cache/rocm-wheel-toolkit")
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", "/home/u")
    assert default_cache() == Path("/home/u/.cache/rocm-wheel-toolkit")  # $HOME/.cache when unset


def test_artifacts_are_shown_relative_inside_the_current_folder(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    layout = Layout(tmp_path / "w", tmp_path / "c")
    monkeypatch.chdir(tmp_path)
    assert layout.artifacts_rel("apex-1") == "w/artifacts/apex-1"
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    assert layout.artifacts_rel("apex-1") == str(tmp_path / "w" / "artifacts" / "apex-1")
