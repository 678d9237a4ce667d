"""``toolkit.data.schema`` pinned whole (issue 19, part 8): ``read_toml``'s refusals, and each
spec kind's message for every way a value can break it, worked out by hand from the TOML spec
(toml.io v1.0.0: a date is a value of its own type; arrays nest) and the schema's docstring."""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest

from toolkit.core.errors import DataError
from toolkit.data.schema import Array, Flag, Map, Ref, Table, Tagged, Text, Texts, check, describe, read_toml

F = Path("d.toml")


def _msg(spec: object, value: object, refs: dict[str, list[str]] | None = None) -> str:
    with pytest.raises(DataError) as err:
        check(spec, value, F, refs)  # type: ignore[arg-type]
    assert err.value.exit_code == 3
    return str(err.value)


# ----------------------------------------------------------------------------- read_toml
def test_read_toml_reads_a_document_and_refuses_what_is_not_one(tmp_path: Path) -> None:
    good = tmp_path / "good.toml"
    good.write_text('a = "b"\n[t]\nn = 1\n')
    assert read_toml(good) == {"a": "b", "t": {"n": 1}}
    gone = tmp_path / "gone.toml"
    with pytest.raises(DataError) as err:
        read_toml(gone)
    assert str(err.value) == f"{gone}: missing data file"
    latin = tmp_path / "latin.toml"
    # Latin-1; toml.io v1.0.0: "A TOML file must be a valid UTF-8 encoded Unicode document"
    latin.write_bytes(b'a = "caf\xe9"\n')
    with pytest.raises(DataError) as err:
        read_toml(latin)
    assert str(err.value) == f"{latin}: not valid TOML: not UTF-8 text"
    broken = tmp_path / "broken.toml"
    broken.write_text("a = \n")
    with pytest.raises(DataError) as err:
        read_toml(broken)
    assert str(err.value).startswith(f"{broken}: not valid TOML: ") and "line 1" in str(err.value)
    deep = tmp_path / "deep.toml"
    deep.write_text("a = " + "[" * 100_000 + "]" * 100_000 + "\n")
    with pytest.raises(DataError) as err:
        read_toml(deep)
    assert str(err.value) == f"{deep}: not valid TOML: nested too deeply"


# ----------------------------------------------------------------------------- describe
def test_describe_names_each_kind_of_value() -> None:
    assert describe(Text()) == "a non-empty string"
    assert describe(Flag()) == "true or false"
    assert describe(Texts()) == "a non-empty array of strings"
    assert describe(Array(Table({}))) == "a non-empty array of tables ([[...]])"
    for spec in (Table({}), Map(Text()), Tagged("kind")):
        assert describe(spec) == "a table"


# ----------------------------------------------------------------------------- values shown
def test_a_value_is_shown_with_its_toml_type_and_cut_past_sixty_characters() -> None:
    spec = Table({"v": Text()})
    assert _msg(spec, {"v": 1.5}) == "d.toml: v: must be a non-empty string, got float 1.5"
    assert _msg(spec, {"v": True}) == "d.toml: v: must be a non-empty string, got boolean True"
    assert _msg(spec, {"v": {"a": 1}}) == "d.toml: v: must be a non-empty string, got table {'a': 1}"
    # a TOML date has no entry in the table of names: Python's type name
    day = datetime.date(1979, 5, 27)
    assert _msg(spec, {"v": day}) == (
        "d.toml: v: must be a non-empty string, got date datetime.date(1979, 5, 27)")
    exact = "x" * 58  # its repr is 60 characters: shown whole
    assert _msg(Table({"v": Flag()}), {"v": exact}) == (
        f"d.toml: v: must be true or false, got string '{exact}'")
    longer = "x" * 59  # repr 61: cut to 57 characters and "..."
    assert _msg(Table({"v": Flag()}), {"v": longer}) == (
        f"d.toml: v: must be true or false, got string '{'x' * 56}...")


# ----------------------------------------------------------------------------- Text
def test_text_refusals() -> None:
    spec = Table({"v": Text(pattern=r"[0-9]+")})
    assert _msg(spec, {"v": "12a"}) == "d.toml: v: '12a' does not look like [0-9]+"  # no `like`: the pattern
    assert _msg(spec, {"v": ""}) == "d.toml: v: must be a non-empty string, got string ''"
    check(spec, {"v": "12"}, F)
    closed = Table({"v": Text(choices=("a", "b"), note="why these")})
    assert _msg(closed, {"v": "c"}) == "d.toml: v: 'c' is not allowed; valid: a, b (why these)"
    checked = Table({"v": Text(check=lambda s: "is odd" if len(s) % 2 else None)})
    assert _msg(checked, {"v": "abc"}) == "d.toml: v: 'abc' is odd"
    check(checked, {"v": "ab"}, F)
    # a choice is judged before the pattern, the pattern before the check
    both = Table({"v": Text(choices=("zz",), pattern="a+", like="a's", check=lambda s: "never")})
    assert _msg(both, {"v": "b"}) == "d.toml: v: 'b' is not allowed; valid: zz"
    both = Table({"v": Text(pattern="a+", like="a's", check=lambda s: "fails its check")})
    assert _msg(both, {"v": "b"}) == "d.toml: v: 'b' does not look like a's"
    assert _msg(both, {"v": "a"}) == "d.toml: v: 'a' fails its check"


def test_a_callers_closed_set_is_checked_only_when_the_caller_gives_it() -> None:
    spec = Table({"v": Text(choices=Ref("styles", given_by_caller=True))})
    check(spec, {"v": "anything"}, F, {})
    assert _msg(spec, {"v": "x"}, {"styles": ["a", "b"]}) == "d.toml: v: 'x' is not allowed; valid: a, b"
    own = Table({"v": Text(choices=Ref("rocm"))})
    assert _msg(own, {"v": "x"}, {"rocm": []}) == "d.toml: v: 'x' is not allowed; valid: (none)"


# ----------------------------------------------------------------------------- Texts
def test_texts_refusals() -> None:
    spec = Table({"v": Texts(Text(choices=("a", "b")))})
    check(spec, {"v": ["a", "b"]}, F)
    assert _msg(spec, {"v": []}) == "d.toml: v: must be a non-empty array of strings, got array []"
    assert _msg(spec, {"v": "a"}) == "d.toml: v: must be a non-empty array of strings, got string 'a'"
    assert _msg(spec, {"v": ["a", 1]}) == (
        "d.toml: v: must be a non-empty array of strings, got array ['a', 1]")
    assert _msg(spec, {"v": ["a", "c"]}) == "d.toml: v: 'c' is not allowed; valid: a, b"
    assert _msg(spec, {"v": ["b", "a", "b"]}) == "d.toml: v: duplicate entries in ['b', 'a', 'b']"


# ----------------------------------------------------------------------------- Table
def test_table_groups_and_keys() -> None:
    spec = Table({"a": Text(), "b": Text(), "c": Text(), "d": Text(), "e": Text()},
                 optional=("e",), one_of=(("a", "b"),), any_of=(("c", "d"),))
    check(spec, {"a": "1", "c": "1"}, F)
    check(spec, {"b": "1", "c": "1", "d": "1", "e": "1"}, F)
    assert _msg(spec, {"a": "1", "b": "1", "c": "1"}) == (
        "d.toml: (top level): needs exactly one of a, b (a and b given)")
    assert _msg(spec, {"c": "1"}) == "d.toml: (top level): needs exactly one of a, b (none given)"
    assert _msg(spec, {"a": "1"}) == "d.toml: (top level): needs at least one of c, d (none given)"
    assert _msg(spec, {"a": "1", "c": "1", "f": "1"}) == "d.toml: f: unknown key; valid: a, b, c, d, e"
    assert _msg(spec, {"a": "1", "c": 2}) == "d.toml: c: must be a non-empty string, got integer 2"
    assert _msg(spec, "x") == "d.toml: (top level): must be a table, got string 'x'"
    nested = Table({"t": Table({"k": Text()})})
    assert _msg(nested, {"t": {}}) == "d.toml: t.k: missing (a non-empty string is required)"
    assert _msg(nested, {"t": {"k": "v", "z": 1}}) == "d.toml: t.z: unknown key; valid: k"
    assert _msg(nested, {"t": []}) == "d.toml: t: must be a table, got array []"


# ----------------------------------------------------------------------------- Map
def test_map_keys_values_and_emptiness() -> None:
    spec = Table({"m": Map(Texts(), key=Text(pattern="[a-z]+", like="a word"), non_empty=True, what="thing")})
    check(spec, {"m": {"ab": ["x"], "cd": ["y"]}}, F)
    assert _msg(spec, {"m": {}}) == "d.toml: m: needs at least one thing"
    assert _msg(spec, {"m": {"ab": ["x"], "A": ["y"]}}) == "d.toml: m.\"A\": 'A' does not look like a word"
    assert _msg(spec, {"m": {"ab": "x"}}) == (
        "d.toml: m.\"ab\": must be a non-empty array of strings, got string 'x'")
    assert _msg(spec, {"m": ["ab"]}) == "d.toml: m: must be a table, got array ['ab']"
    check(Table({"m": Map(Text())}), {"m": {}}, F)  # may be empty unless non_empty
    assert _msg(Table({"m": Map(Text())}), {"m": {"k": ""}}) == (
        "d.toml: m.\"k\": must be a non-empty string, got string ''")
    top = Map(Text(), non_empty=True)
    assert _msg(top, {}) == "d.toml: (top level): needs at least one entry"
    assert _msg(top, {"k": 1}) == "d.toml: \"k\": must be a non-empty string, got integer 1"


# ----------------------------------------------------------------------------- Array
def test_array_of_tables() -> None:
    spec = Table({"v": Array(Table({"id": Text()}))})
    check(spec, {"v": [{"id": "1"}, {"id": "2"}]}, F)
    assert _msg(spec, {"v": {"id": "1"}}) == (
        "d.toml: v: must be a non-empty array of tables ([[...]]), got table {'id': '1'}")
    assert _msg(spec, {"v": [{"id": "1"}, {}]}) == "d.toml: v[1].id: missing (a non-empty string is required)"
    assert _msg(spec, {"v": [{"id": "1"}, "x"]}) == "d.toml: v[1]: must be a table, got string 'x'"


# ----------------------------------------------------------------------------- Tagged
def test_tagged_picks_the_variant_by_its_tag() -> None:
    spec = Table({"s": Tagged("kind", {"git": Table({"url": Text(), "ref": Text()}, optional=("ref",)),
                                       "dir": Table({"path": Text(), "a": Text(), "b": Text()},
                                                    one_of=(("a", "b"),))})})
    check(spec, {"s": {"kind": "git", "url": "u"}}, F)
    check(spec, {"s": {"kind": "dir", "path": "p", "b": "1"}}, F)
    assert _msg(spec, {"s": {"kind": "git"}}) == "d.toml: s.url: missing (a non-empty string is required)"
    assert _msg(spec, {"s": {"url": "u"}}) == "d.toml: s.kind: missing (one of git, dir is required)"
    assert _msg(spec, {"s": {"kind": 1}}) == "d.toml: s.kind: must be a non-empty string, got integer 1"
    assert _msg(spec, {"s": {"kind": "svn"}}) == "d.toml: s.kind: 'svn' is not allowed; valid: git, dir"
    assert _msg(spec, {"s": {"kind": "git", "url": "u", "path": "p"}}) == (
        "d.toml: s.path: unknown key; valid: kind, url, ref")
    assert _msg(spec, {"s": {"kind": "dir", "path": "p"}}) == (
        "d.toml: s: needs exactly one of a, b (none given)")
    assert _msg(spec, {"s": "git"}) == "d.toml: s: must be a table, got string 'git'"
