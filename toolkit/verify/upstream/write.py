"""``--write``: apply the edits of the drift found, in place, keeping comments and layout.

The data files are round-tripped with tomlkit: only the values an edit names change; every
comment, every other entry and its evidence stay as they were. New tables are written inline
(``{ kind = "pytorch", ... }``), as the data files write them; an index past an array's end
appends to it (a new ``[[versions]]`` entry, its table values inline). ``settle`` writes, reads
upstream against the new data and writes again until nothing more is written (at most
``ROUNDS`` rounds). Each file is written whole to a temporary file beside it and renamed over
it (atomic), and the result must load and validate (``load_matrix``) before it replaces
anything: a write never leaves invalid data behind.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.items import Table

from toolkit.core.errors import DataError
from toolkit.verify.upstream.model import Edit, Fact

ROUNDS = 3  # a write may make more drift writable (a new torch pair, then a version using it)


def _inline(value: dict[str, Any]) -> Any:
    body = ", ".join(f"{_key(k)} = "
                     f"{_inline(v).as_string() if isinstance(v, dict) else tomlkit.item(v).as_string()}"
                     for k, v in value.items())
    return tomlkit.parse(f"x = {{ {body} }}\n")["x"]


def _key(name: str) -> str:
    """A key as the data files write it: bare where TOML allows, quoted digits ("7")."""
    return tomlkit.item(name).as_string() if name.isdigit() else tomlkit.key(name).as_string()


def _entry(value: dict[str, Any]) -> Table:
    """A new ``[[versions]]`` entry: its keys in order, a table value inline."""
    table = tomlkit.table()
    for key, item in value.items():
        table[key] = _inline(item) if isinstance(item, dict) else item
    return table


def _apply(doc: Any, edit: Edit) -> None:
    node = doc
    for key in edit.path[:-1]:
        if isinstance(key, str) and key not in node:
            node[key] = tomlkit.table(is_super_table=True) if isinstance(node, Table) \
                else tomlkit.table()
        node = node[key]
    last = edit.path[-1]
    if isinstance(last, int) and last >= len(node):  # one more [[entry]] at the end
        if len(node):
            node[-1].add(tomlkit.nl())  # a blank line between entries, as the files have
        node.append(_entry(edit.value))
    elif edit.value is None:
        del node[last]
    elif isinstance(edit.value, dict):
        node[last] = _inline(edit.value)
    else:
        node[last] = edit.value


def apply(data_dir: Path, edits: Iterable[Edit]) -> list[str]:
    """Apply ``edits`` to the files in ``data_dir``; return the names of the files changed."""
    from toolkit.plan.recipes import load_matrix

    by_file: dict[str, list[Edit]] = {}
    for edit in edits:
        by_file.setdefault(edit.file, []).append(edit)
    if not by_file:
        return []
    with tempfile.TemporaryDirectory(prefix="upstream-write-") as tmp:
        staged = Path(tmp) / "data"
        shutil.copytree(data_dir, staged)
        for name, file_edits in by_file.items():
            path = staged / name
            doc = tomlkit.parse(path.read_text(encoding="utf-8"))
            for edit in file_edits:
                _apply(doc, edit)
            path.write_text(tomlkit.dumps(doc), encoding="utf-8")
        try:
            load_matrix(staged)
        except DataError as exc:
            raise DataError(f"--write would leave invalid data, nothing written: {exc}") from None
        _replace(data_dir, staged, sorted(by_file))
    from toolkit.data.matrix import forget_loaded

    forget_loaded()
    return sorted(by_file)


def _replace(data_dir: Path, staged: Path, names: Sequence[str]) -> None:
    for name in names:
        fd, tmp = tempfile.mkstemp(prefix=f".{name}.", dir=data_dir)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write((staged / name).read_text(encoding="utf-8"))
        os.replace(tmp, data_dir / name)


@dataclass(frozen=True)
class Settled:
    written: list[str]  # the data files changed
    settled: list[Fact]  # the drift written, over every round, in order
    facts: list[Fact]  # what the last reading found (none of it written)


def settle(data_dir: Path, find: Callable[[], list[Fact]], rounds: int = ROUNDS) -> Settled:
    """Write the drift ``find()`` reports, read again, until a reading has nothing to write
    (or ``rounds`` writes were made: what is left stays drift)."""
    facts = find()
    files: set[str] = set()
    settled: list[Fact] = []
    for _ in range(rounds):
        todo = [f for f in facts if f.kind == "drift" and f.edits]
        if not todo:
            break
        files.update(apply(data_dir, [e for f in todo for e in f.edits]))
        settled.extend(todo)
        facts = find()
    return Settled(sorted(files), settled, facts)
