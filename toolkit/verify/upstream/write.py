"""``--write``: apply the edits of the drift found, in place, keeping comments and layout.

The data files are round-tripped with tomlkit: only the values an edit names change; every
comment, every other entry and its evidence stay as they were. New tables are written inline
(``{ kind = "pytorch", ... }``), as the data files write them. Each file is written whole to a
temporary file beside it and renamed over it (atomic), and the result must load and validate
(``load_matrix``) before it replaces anything: a write never leaves invalid data behind.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.items import Table

from toolkit.core.errors import DataError
from toolkit.verify.upstream.model import Edit


def _inline(value: dict[str, Any]) -> Any:
    body = ", ".join(f"{k} = {tomlkit.item(v).as_string()}" for k, v in value.items())
    return tomlkit.parse(f"x = {{ {body} }}\n")["x"]


def _apply(doc: Any, edit: Edit) -> None:
    node = doc
    for key in edit.path[:-1]:
        if isinstance(key, str) and key not in node:
            node[key] = tomlkit.table(is_super_table=True) if isinstance(node, Table) \
                else tomlkit.table()
        node = node[key]
    last = edit.path[-1]
    if edit.value is None:
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
