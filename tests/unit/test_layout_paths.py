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


@pytest.mark.parametrize(("what", "given", "shown"), [
    ("work folder", "w\x1bx", "w\\x1bx"),  # ESC: a terminal would act on it
    ("cache (TOOLKIT_CACHE_DIR)", "c\nd", "c\\nd"),
], ids=["work-folder", "cache"])
def test_a_folder_whose_path_holds_a_control_character_is_named_escaped(
        what: str, given: str, shown: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A work folder or cache path with a control character is refused before anything is
    written (exit 2): the message names which folder, its path escaped as Python writes the
    character (``\\x1b``, ``\\n``), and what is valid."""
    from toolkit.core.errors import UsageError

    root, cache = tmp_path / "w", tmp_path / "c"
    if what == "work folder":
        root = tmp_path / given
    else:
        cache = tmp_path / given
    monkeypatch.setenv("TOOLKIT_CACHE_DIR", str(cache))
    with pytest.raises(UsageError) as err:
        Layout.default(root)
    msg = err.value.message
    assert err.value.exit_code == 2
    assert msg.startswith(f"the {what} '{tmp_path}/{shown}' holds a control character; "), msg
    assert msg.endswith("; valid: a folder whose path has none"), msg
    assert not root.exists() and not cache.exists()
