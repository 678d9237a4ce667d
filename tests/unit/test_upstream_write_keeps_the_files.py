"""`toolkit upstream --write`: each edit changes only the value it names, as Python's own TOML
reader (tomllib) reads the result, and keeps the comments around it; a write that would leave
invalid data writes nothing (README: a malformed data file is exit 3); ``settle`` writes the
drift, reads again and stops when nothing is left to write or after ``rounds`` writes."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import tomlkit
import tomllib

from toolkit.core.errors import DataError
from toolkit.verify.upstream import write
from toolkit.verify.upstream.model import Edit, Fact

DATA = Path(__file__).resolve().parents[2] / "toolkit" / "data"

DOC = """# a comment that stays
[package]
name = "p"  # why p

[[versions]]
version = "1.0"
torch = "2.5"
"""


@pytest.mark.parametrize(("name", "key"), [("7", '"7"'), ("kind", "kind"), ("a b", '"a b"'),
                                          ("x-y_z", "x-y_z")])
def test_keys_are_bare_where_toml_allows_and_digits_quoted(name: str, key: str) -> None:
    assert write._key(name) == key
    assert tomllib.loads(f"{key} = 1") == {name: 1}


def test_a_table_value_is_written_inline_and_reads_back_the_same() -> None:
    value = {"kind": "pytorch", "n": 3, "ok": True, "7": {"python": ["3.12", "3.13"]}}
    text = f"x = {write._inline(value).as_string()}\n"
    assert tomllib.loads(text) == {"x": value}
    assert "\n" not in text.strip()


def _edited(*edits: Edit) -> tuple[str, dict[str, object]]:
    doc = tomlkit.parse(DOC)
    for e in edits:
        write._apply(doc, e)
    text = tomlkit.dumps(doc)
    return text, tomllib.loads(text)


def test_an_edit_changes_only_its_value_and_keeps_the_comments() -> None:
    text, data = _edited(Edit("p.toml", ("versions", 0, "torch"), "2.6"))
    assert data == {"package": {"name": "p"}, "versions": [{"version": "1.0", "torch": "2.6"}]}
    assert "# a comment that stays" in text and "# why p" in text


def test_a_value_of_none_removes_the_key() -> None:
    _, data = _edited(Edit("p.toml", ("versions", 0, "torch"), None))
    assert data["versions"] == [{"version": "1.0"}]


def test_a_table_value_and_missing_tables_are_made() -> None:
    _, data = _edited(Edit("p.toml", ("package", "source"), {"kind": "git", "ref": "main"}),
                      Edit("p.toml", ("extra", "deep", "value"), 5))
    assert data["package"] == {"name": "p", "source": {"kind": "git", "ref": "main"}}
    assert data["extra"] == {"deep": {"value": 5}}


def test_an_index_past_the_end_appends_an_entry() -> None:
    text, data = _edited(Edit("p.toml", ("versions", 1), {"version": "1.1", "torch": "2.6",
                                                          "pairs": {"7": "x"}}))
    assert data["versions"] == [{"version": "1.0", "torch": "2.5"},
                                {"version": "1.1", "torch": "2.6", "pairs": {"7": "x"}}]
    assert '\n\n[[versions]]\nversion = "1.1"' in text  # a blank line between entries


def test_no_edits_write_nothing_and_invalid_data_is_never_written(tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(DATA, data, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    before = {p.name: p.read_bytes() for p in data.iterdir()}
    assert write.apply(data, []) == []
    with pytest.raises(DataError) as err:
        write.apply(data, [Edit("apex.toml", ("package", "recipe"), 12)])
    assert err.value.exit_code == 3
    assert err.value.message.startswith("--write would leave invalid data, nothing written: ")
    assert {p.name: p.read_bytes() for p in data.iterdir()} == before
    assert not list(data.glob(".*"))  # no temporary file left beside the data


def test_settle_writes_until_nothing_is_left_or_the_rounds_run_out(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    written: list[list[Edit]] = []

    def apply(data_dir: Path, edits: list[Edit]) -> list[str]:
        written.append(list(edits))
        return sorted({e.file for e in edits})

    monkeypatch.setattr(write, "apply", apply)
    drift = Fact("drift", "a", "1", "2", "ev", (Edit("a.toml", ("k",), 2),))
    more = Fact("drift", "b", "1", "2", "ev", (Edit("b.toml", ("k",), 2),))
    review = Fact("review", "r", "1", "2", "ev", (Edit("c.toml", ("k",), 2),))
    note = Fact("note", "n", "1", "2", "ev")
    unwritable = Fact("drift", "u", "1", "2", "ev")
    readings = iter([[drift, review, note, unwritable], [more, note], [note]])
    done = write.settle(tmp_path, lambda: next(readings))
    assert done.written == ["a.toml", "b.toml"]
    assert done.settled == [drift, more] and done.facts == [note]
    assert [[e.file for e in w] for w in written] == [["a.toml"], ["b.toml"]]
    always = write.settle(tmp_path, lambda: [drift], rounds=2)
    assert always.settled == [drift, drift] and always.facts == [drift]
    assert write.settle(tmp_path, lambda: [note, review]).written == []


def test_a_valid_edit_is_written_in_place_keeping_everything_else(tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(DATA, data, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    before = {p.name: p.read_bytes() for p in data.iterdir()}
    url = "https://github.com/ROCm/apex-fork.git"
    edits = [Edit("apex.toml", ("package", "repo"), url), Edit("apex.toml", ("package", "dist"), "apex")]
    assert write.apply(data, edits) == ["apex.toml"]
    after = tomllib.loads((data / "apex.toml").read_text(encoding="utf-8"))
    old = tomllib.loads(before["apex.toml"].decode())
    assert after["package"] == {**old["package"], "repo": url}
    assert {k: v for k, v in after.items() if k != "package"} == \
        {k: v for k, v in old.items() if k != "package"}
    text = (data / "apex.toml").read_text(encoding="utf-8")
    assert text.startswith(before["apex.toml"].decode().split("\n", 1)[0])  # the leading comment stays
    assert {p.name: p.read_bytes() for p in data.iterdir() if p.name != "apex.toml"} == \
        {k: v for k, v in before.items() if k != "apex.toml"}


def test_a_written_file_stays_utf8_whatever_the_locale(tmp_path: Path, ascii_locale: None) -> None:
    data = tmp_path / "data"
    shutil.copytree(DATA, data, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    apex = data / "apex.toml"
    note = "# kept by Zoë \u2014 ROCm \u00b5-arch notes\n"
    apex.write_text(note + apex.read_text(encoding="utf-8"), encoding="utf-8")
    url = "https://github.com/ROCm/apex-fork.git"
    assert write.apply(data, [Edit("apex.toml", ("package", "repo"), url)]) == ["apex.toml"]
    # TOML 1.0: a TOML file must be a valid UTF-8 encoded Unicode document, so the comment's
    # characters are written as UTF-8 even where the locale's character set is ASCII
    text = apex.read_bytes().decode("utf-8")
    assert text.startswith(note)
    assert tomllib.loads(text)["package"]["repo"] == url
    assert not list(data.glob(".*"))  # no temporary file left beside the data
