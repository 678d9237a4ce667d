"""The stamp an environment gets once provisioned (``toolkit.env.venvs.mark_ready``,
``<env>/.toolkit-env.json``) as a person reads it: JSON, two-space indented, keys sorted at
every level (two stamps compare line by line with diff), the credentials of a URL masked
(``toolkit.core.urls.mask``: the whole ``user:password`` part is ``***``), no temporary file
left beside it, also when it cannot be put in place (then no stamp either: the
environment is not ready). The expected text is written here by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolkit import __version__
from toolkit.env import venvs


def test_the_stamp_is_two_space_indented_sorted_json_with_credentials_masked(
        tmp_path: Path) -> None:
    env_dir = tmp_path / "env"
    env_dir.mkdir()
    written = venvs.mark_ready(
        env_dir, "d" * 8,
        values={"TORCH": "2.7.1", "INDEX": "https://me:s3cret@pkgs.example/simple"},
        described={"steps": [{"name": "create-env", "argv": ["uv", "venv"]}], "build": "b"})
    assert written == env_dir / ".toolkit-env.json"
    assert written.read_text(encoding="utf-8") == (
        "{\n"
        '  "described": {\n'
        '    "build": "b",\n'
        '    "steps": [\n'
        "      {\n"
        '        "argv": [\n'
        '          "uv",\n'
        '          "venv"\n'
        "        ],\n"
        '        "name": "create-env"\n'
        "      }\n"
        "    ]\n"
        "  },\n"
        '  "digest": "dddddddd",\n'
        '  "format": 1,\n'
        f'  "toolkit": "{__version__}",\n'
        '  "values": {\n'
        '    "INDEX": "https://***@pkgs.example/simple",\n'
        '    "TORCH": "2.7.1"\n'
        "  }\n"
        "}")
    assert [p.name for p in env_dir.iterdir()] == [".toolkit-env.json"]


def test_a_stamp_that_cannot_be_put_in_place_leaves_no_temporary_file(tmp_path: Path) -> None:
    env_dir = tmp_path / "env"
    (env_dir / ".toolkit-env.json").mkdir(parents=True)  # a folder in its place: no rename
    (env_dir / ".toolkit-env.json" / "x").write_text("")
    with pytest.raises(OSError):
        venvs.mark_ready(env_dir, "d" * 8, values={}, described={})
    assert [p.name for p in env_dir.iterdir()] == [".toolkit-env.json"]
    assert venvs.read_stamp(env_dir) is None  # not ready
