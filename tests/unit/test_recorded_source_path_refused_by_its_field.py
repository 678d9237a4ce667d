"""The source path a manifest records (``source.path``: the contributor's checkout a build was
made from) follows the rule of its folders (README: "A manifest's ids, folders and source path
follow rules ...; a violation is a tampered manifest"): absolute, without ``..`` or control
characters, else one line naming the file, the field ``source.path`` and the value, exit 2;
a manifest that records none (null) is read. The words are written here by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolkit.core.errors import UsageError
from toolkit.run import manifest

BUILD = {"id": "apex-1.8.0-cp312-rocm7.0", "package": "apex", "version": "1.8.0",
         "python": "3.12", "rocm": "7.0"}


def written(tmp_path: Path, source_path: str | None) -> Path:
    path = tmp_path / "m.json"
    path.write_text(json.dumps({"build": BUILD, "source": {"path": source_path}}))
    return path


@pytest.mark.parametrize(("value", "shown"), [("/src/../etc", "'/src/../etc'"),
                                              ("src/demo", "'src/demo'")])
def test_a_source_path_that_breaks_the_rule_is_named_by_its_field(
        tmp_path: Path, value: str, shown: str) -> None:
    path = written(tmp_path, value)
    with pytest.raises(UsageError) as caught:
        manifest.read(path)
    assert caught.value.exit_code == 2
    assert caught.value.message == (
        f"{path}: manifest field source.path: {shown} is not an absolute path without '..' "
        "or control characters (a tampered manifest?)")


def test_a_recorded_or_absent_source_path_is_read(tmp_path: Path) -> None:
    assert manifest.read(written(tmp_path, "/home/me/demo"))["source"] == {"path": "/home/me/demo"}
    assert manifest.read(written(tmp_path, None))["source"] == {"path": None}
