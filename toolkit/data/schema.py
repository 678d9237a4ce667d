"""Declarative, strict schemas for the TOML data files: one small spec per table.

A spec describes one TOML value:

- ``Text``: a non-empty string; optionally one of a closed set (``choices``, fixed or a ``Ref``
  resolved per file), matching a pattern, or passing a ``check``;
- ``Flag``: a boolean (``true`` / ``false``);
- ``Texts``: a non-empty array of distinct strings, each a ``Text`` (``may_be_empty``: an
  empty array is allowed too);
- ``Table``: a table with a fixed set of keys (every other key is an error), each required
  unless listed in ``optional``; a ``one_of`` group needs exactly one of its keys, an
  ``any_of`` group at least one;
- ``Map``: a table whose keys are names (a ``Text`` checks them) and whose values share a spec;
- ``Array``: a non-empty array of tables (``[[name]]``);
- ``Tagged``: a table whose ``tag`` key picks the ``Table`` spec of the whole table.

``check(spec, value, file, refs)`` raises ``DataError`` (exit 3) with one line naming the file,
the key path and what is allowed: ``apex.toml: versions[2].build_style: 'x' is not allowed;
valid: ext-flags, jit-prebuild``. Tables are checked in the order their keys are declared, so
a ``Ref`` may depend on a key declared earlier (a package's recipe picks its build styles).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn, TypeAlias

from toolkit.core.errors import DataError, suggestion
from toolkit.core.text import escape

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


@dataclass(frozen=True)
class Ref:
    """A closed set known only per file (ROCm releases, GPU families): ``refs[name]``.
    ``given_by_caller``: a set the caller may leave out (then the value is not checked
    against one): recipe names and build styles, known to the plan layer's registry."""

    name: str
    given_by_caller: bool = False


@dataclass(frozen=True)
class Text:
    choices: tuple[str, ...] | Ref | None = None
    pattern: str | None = None  # a regex the whole string must match
    like: str = ""  # what the pattern means, for the message: "X.Y[.Z]"
    check: Callable[[str], str | None] | None = None  # returns what is wrong, or None
    note: str = ""  # why the choices are these, appended to "valid: ..."


@dataclass(frozen=True)
class Flag:
    """A TOML boolean."""


@dataclass(frozen=True)
class Texts:
    item: Text = Text()
    may_be_empty: bool = False  # `[]` allowed (a rule across keys may still refuse it)


@dataclass(frozen=True)
class Table:
    fields: Mapping[str, Spec]
    optional: tuple[str, ...] = ()
    one_of: tuple[tuple[str, ...], ...] = ()  # each group: exactly one of these keys
    any_of: tuple[tuple[str, ...], ...] = ()  # each group: at least one of these keys


@dataclass(frozen=True)
class Map:
    value: Spec
    key: Text = Text()
    non_empty: bool = False
    what: str = "entry"  # "GPU family", for "needs at least one GPU family"


@dataclass(frozen=True)
class Array:
    item: Table


@dataclass(frozen=True)
class Tagged:
    tag: str
    variants: Mapping[str, Table] = field(default_factory=dict)


Spec: TypeAlias = "Text | Flag | Texts | Table | Map | Array | Tagged"
Refs: TypeAlias = Mapping[str, Sequence[str]]

_TOML_TYPES = {bool: "boolean", int: "integer", float: "float", str: "string", list: "array",
               dict: "table"}


def read_toml(path: Path) -> dict[str, Any]:
    """A TOML file's document; a missing or unparsable file is a ``DataError``."""
    from toolkit.core.files import missing, read_bytes

    if missing(path):
        raise DataError(f"{escape(path)}: missing data file")
    raw = read_bytes(path, "data file", DataError)
    try:
        doc: dict[str, Any] = tomllib.loads(raw.decode("utf-8"))
        return doc
    except tomllib.TOMLDecodeError as exc:
        raise DataError(f"{path}: not valid TOML: {exc}") from None
    except UnicodeDecodeError:
        raise DataError(f"{path}: not valid TOML: not UTF-8 text") from None
    except RecursionError:
        raise DataError(f"{escape(path)}: not valid TOML: nested too deeply") from None


def fail(file: Path, path: str, what: str, nearest: str | None = None) -> NoReturn:
    """Raise the one-line ``DataError``: ``<file>: <key path>: <what>`` (``nearest``: the
    allowed values nearest to a mistyped one, ``suggestion``)."""
    raise DataError(f"{file}: {path or '(top level)'}: {what}", nearest=nearest)


def describe(spec: Spec) -> str:
    """What a value of ``spec`` is, for "missing (... is required)" and "must be ..."."""
    if isinstance(spec, Text):
        return "a non-empty string"
    if isinstance(spec, Flag):
        return "true or false"
    if isinstance(spec, Texts):
        return "an array of strings" if spec.may_be_empty else "a non-empty array of strings"
    if isinstance(spec, Array):
        return "a non-empty array of tables ([[...]])"
    return "a table"


def _got(value: object) -> str:
    kind = _TOML_TYPES.get(type(value), type(value).__name__)
    shown = repr(value)
    return f"{kind} {shown if len(shown) <= 60 else shown[:57] + '...'}"


def _join(path: str, key: str, *, quote: bool = False) -> str:
    name = f'"{key}"' if quote else key
    return f"{path}.{name}" if path else name


class _Checker:
    def __init__(self, file: Path, refs: Refs) -> None:
        self.file, self.refs = file, refs

    def choices(self, spec: Text) -> tuple[str, ...] | None:
        if isinstance(spec.choices, Ref):
            if spec.choices.given_by_caller and spec.choices.name not in self.refs:
                return None
            return tuple(self.refs[spec.choices.name])
        return spec.choices

    def value(self, spec: Spec, value: Any, path: str) -> None:
        if isinstance(spec, Text):
            self.text(spec, value, path)
        elif isinstance(spec, Flag):
            if not isinstance(value, bool):
                fail(self.file, path, f"must be {describe(spec)}, got {_got(value)}")
        elif isinstance(spec, Texts):
            self.texts(spec, value, path)
        elif isinstance(spec, Table):
            self.table(spec, value, path)
        elif isinstance(spec, Map):
            self.map(spec, value, path)
        elif isinstance(spec, Array):
            self.array(spec, value, path)
        else:
            self.tagged(spec, value, path)

    def text(self, spec: Text, value: Any, path: str) -> None:
        if not isinstance(value, str) or not value:
            fail(self.file, path, f"must be {describe(spec)}, got {_got(value)}")
        choices = self.choices(spec)
        if choices is not None and value not in choices:
            note = f" ({spec.note})" if spec.note else ""
            fail(self.file, path,
                 f"{value!r} is not allowed; valid: {', '.join(choices) or '(none)'}{note}",
                 suggestion(value, choices))
        if spec.pattern is not None and not re.fullmatch(spec.pattern, value):
            fail(self.file, path, f"{value!r} does not look like {spec.like or spec.pattern}")
        problem = spec.check(value) if spec.check is not None else None
        if problem:
            fail(self.file, path, f"{value!r} {problem}")

    def texts(self, spec: Texts, value: Any, path: str) -> None:
        if not isinstance(value, list) or not (value or spec.may_be_empty) \
                or not all(isinstance(v, str) for v in value):
            fail(self.file, path, f"must be {describe(spec)}, got {_got(value)}")
        for item in value:
            self.text(spec.item, item, path)
        if len(set(value)) != len(value):
            fail(self.file, path, f"duplicate entries in {value!r}")

    def keys(self, value: Any, path: str, spec: Spec) -> dict[str, Any]:
        if not isinstance(value, dict):
            fail(self.file, path, f"must be {describe(spec)}, got {_got(value)}")
        return value

    def table(self, spec: Table, value: Any, path: str) -> None:
        data = self.keys(value, path, spec)
        for key in data:
            if key not in spec.fields:
                fail(self.file, _join(path, key), f"unknown key; valid: {', '.join(spec.fields)}")
        self.groups(spec, data, path)
        grouped = {k for group in (*spec.one_of, *spec.any_of) for k in group}
        for key, sub in spec.fields.items():
            if key in data:
                self.value(sub, data[key], _join(path, key))
            elif key not in spec.optional and key not in grouped:
                fail(self.file, _join(path, key), f"missing ({describe(sub)} is required)")

    def groups(self, spec: Table, data: dict[str, Any], path: str) -> None:
        """Exactly one key of each ``one_of`` group, at least one of each ``any_of`` group."""
        for group in spec.one_of:
            given = [k for k in group if k in data]
            if len(given) != 1:
                what = f"{' and '.join(given)} given" if given else "none given"
                fail(self.file, path, f"needs exactly one of {', '.join(group)} ({what})")
        for group in spec.any_of:
            if not any(k in data for k in group):
                fail(self.file, path, f"needs at least one of {', '.join(group)} (none given)")

    def map(self, spec: Map, value: Any, path: str) -> None:
        data = self.keys(value, path, spec)
        if spec.non_empty and not data:
            fail(self.file, path, f"needs at least one {spec.what}")
        for key, item in data.items():
            where = _join(path, key, quote=True)
            self.text(spec.key, key, where)
            self.value(spec.value, item, where)

    def array(self, spec: Array, value: Any, path: str) -> None:
        if not isinstance(value, list) or not value:
            fail(self.file, path, f"must be {describe(spec)}, got {_got(value)}")
        for i, item in enumerate(value):
            self.table(spec.item, item, f"{path}[{i}]")

    def tagged(self, spec: Tagged, value: Any, path: str) -> None:
        data = self.keys(value, path, spec)
        tag = Text(choices=tuple(spec.variants))
        if spec.tag not in data:
            fail(self.file, _join(path, spec.tag),
                 f"missing (one of {', '.join(spec.variants)} is required)")
        self.text(tag, data[spec.tag], _join(path, spec.tag))
        variant = spec.variants[data[spec.tag]]
        self.table(Table({spec.tag: tag, **variant.fields}, variant.optional, variant.one_of,
                         variant.any_of), data, path)


def check(spec: Spec, value: Any, file: Path, refs: Refs | None = None) -> None:
    """Raise ``DataError`` at the first place ``value`` (a parsed TOML document) breaks ``spec``."""
    _Checker(file, refs or {}).value(spec, value, "")
