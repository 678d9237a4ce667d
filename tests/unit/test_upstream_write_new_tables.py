"""``--write`` adding tables a data file lacks (toolkit/verify/upstream/write.py ``_apply``): a
table made only to hold a deeper one is written as the deeper one's header alone, as the data
files write them (``[releases."7.2".torch]``, no empty ``[releases."7.2"]`` above it); a key
set in a new table is written under that table's header. Expected texts are written by hand
and read back with Python's own TOML reader (tomllib)."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
import tomlkit
import tomllib

from tests.unit.upstream_fakes import World
from toolkit.plan.recipes import load_matrix
from toolkit.verify.upstream import write
from toolkit.verify.upstream.model import Edit

DOC = '[releases."7.0"]\nhip = "7.0"\n'


def _edited(*edits: Edit) -> str:
    doc = tomlkit.parse(DOC)
    for e in edits:
        write._apply(doc, e)
    return tomlkit.dumps(doc)


def test_a_deeper_table_is_written_under_its_own_header_only() -> None:
    text = _edited(Edit("rocm.toml", ("releases", "7.2", "torch", "2.5"), {"kind": "therock"}))
    headers = [line for line in text.splitlines() if line.startswith("[")]
    assert headers == ['[releases."7.0"]', '[releases."7.2".torch]']
    assert tomllib.loads(text)["releases"]["7.2"] == {"torch": {"2.5": {"kind": "therock"}}}


def test_a_key_of_a_new_table_is_written_under_its_header() -> None:
    text = _edited(Edit("rocm.toml", ("releases", "7.2", "hip"), "7.2"))
    assert text == '[releases."7.0"]\nhip = "7.0"\n\n[releases."7.2"]\nhip = "7.2"\n'


def test_a_new_top_level_table() -> None:
    text = _edited(Edit("gpus.toml", ("eras", "therock-7.2", "targets"), ["gfx942"]))
    assert tomllib.loads(text)["eras"] == {"therock-7.2": {"targets": ["gfx942"]}}
    assert '[eras."therock-7.2"]\ntargets = ["gfx942"]' in text


def test_the_next_load_reads_what_apply_wrote(world_template: World, tmp_path: Path) -> None:
    """``settle`` reads upstream against the data it just wrote: the loader's cache of the
    folder is dropped, the written files read back (else the same drift would be written
    again)."""
    data = tmp_path / "data"
    shutil.copytree(world_template.data, data)
    assert load_matrix(data).rocm["6.1"].hip == "6.1"
    names = write.apply(data, [Edit("rocm.toml", ("releases", "6.1", "hip"), "6.2"),
                               Edit("apex.toml", ("versions", 0, "python"), ["3.11"])])
    assert names == ["apex.toml", "rocm.toml"]
    assert load_matrix(data).rocm["6.1"].hip == "6.2"
    assert not [p.name for p in data.iterdir() if p.name.startswith(".")]


def test_each_file_is_replaced_from_a_temporary_file_beside_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The new text is written beside the data file and renamed over it (atomic on one file
    system): the system's temporary folder is never used, here one that does not exist."""
    data, staged = tmp_path / "data", tmp_path / "staged"
    data.mkdir()
    staged.mkdir()
    (data / "a.toml").write_text("old\n", encoding="utf-8")
    (staged / "a.toml").write_text("néw = 1\n", encoding="utf-8")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "no-such-tmp"))
    write._replace(data, staged, ["a.toml"])
    assert (data / "a.toml").read_bytes() == "néw = 1\n".encode()
    assert [p.name for p in data.iterdir()] == ["a.toml"]
