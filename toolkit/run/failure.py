"""What identifies a failed build: the manifest's ``failure`` object.

``{step, exit_code, signature, log}``: the step that failed, the toolkit's exit code, the lines
of that step's output that identify the failure (``toolkit.run.signature``: compiler errors
with file:line relative to the source tree, the last exception line of a traceback, pip/uv
resolution errors, CMake errors, failing smoke tests; host paths as tokens, credentials
masked, control bytes escaped; at most 20 lines) and the log they were read from.

The step's output is read back from the build log, from where the step began
(``Run.step_start``): the log is what the user has, already masked; only its last
``READ_LIMIT`` bytes are read, so a step that printed gigabytes costs nothing here.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from toolkit.run.context import Run
from toolkit.run.identity import host_paths, tokenize
from toolkit.run.manifest_schema import SIGNATURE_LINES
from toolkit.run.signature import signature

READ_LIMIT = 8 << 20


def step_output(log: Path, start: int, limit: int = READ_LIMIT) -> list[str]:
    """The lines the log holds from byte ``start`` on (at most the last ``limit`` bytes; a
    first line cut by the limit is dropped). Unreadable: no lines."""
    try:
        with log.open("rb") as fh:
            end = fh.seek(0, 2)
            begin = max(start, end - limit)
            fh.seek(begin)
            data = fh.read(end - begin)
    except OSError:
        return []
    lines = data.decode("utf-8", errors="replace").splitlines()
    if begin > start and lines:
        lines = lines[1:]
    return lines


def _prefixes(run: Run) -> list[str]:
    """The prefixes of the build's interpreter (its venv, its base install), learned by
    build-wheel: compilers and setuptools print them (``-I`` flags, headers)."""
    try:  # quoted as POSIX sh reads it (env.buildenv.quote_flag)
        learned = shlex.split(run.values.get("PYTHON_PREFIX_MAP", ""))
    except ValueError:
        return []
    return sorted((m.split("=", 1)[1].rsplit("=/python", 1)[0] for m in learned
                   if m.startswith("-ffile-prefix-map=")), key=len, reverse=True)


def _unprefixed(line: str, prefixes: list[str]) -> str:
    """``line`` with every interpreter prefix as one token, ``<python_prefix>``: which of
    them is longer differs from host to host, so they are not numbered."""
    for prefix in prefixes:
        line = tokenize(line, {"python_prefix": prefix})
    return line


def record(run: Run, step: str, exit_code: int, error: str | None) -> dict[str, Any]:
    """The ``failure`` object of a build that failed at ``step`` with ``exit_code``; the
    error's first line stands in for the output of a step that printed nothing."""
    log = Path(run.log.name) if isinstance(getattr(run.log, "name", None), str) else None
    lines = step_output(log, run.step_start) if log is not None else []
    if error and not any(line.strip() for line in lines):  # a step that printed nothing
        lines.append(error.strip().splitlines()[0])
    prefixes = _prefixes(run)
    lines = [_unprefixed(line, prefixes) for line in lines]
    return {
        "step": step,
        "exit_code": exit_code,
        "signature": signature(lines, paths=host_paths(run.plan, run.layout),
                               source=str(run.layout.worktree(run.plan.build)),
                               limit=SIGNATURE_LINES),
        "log": str(log) if log is not None else None,
    }
