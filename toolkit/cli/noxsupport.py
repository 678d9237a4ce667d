"""Helpers for ``noxfile.py``: the matrix sessions, and what nox does when the data is broken.

``noxfile.py`` registers ``build-/smoke-/lock-<py>-rocm<rocm>`` for every matrix pair when nox
imports it (``nox -l`` lists them), so the matrix data is loaded at import time. When it does
not load (``DataError``), those sessions cannot exist, and nox would answer a traceback, an
incomplete list or "session not found". Instead, depending on what nox was asked:

- only sessions that need no data (``tests``, ``lint``): they are registered and run, after a
  one-line warning that names the problem;
- anything else (``nox -l``, a matrix session, ``-t``/``-k`` selection, the default sessions
  when they include one that needs data): the one-line error, its exit code (3), no traceback.

Imported by ``noxfile.py`` at ``nox -l`` time: keep module-level imports light.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

import nox

from toolkit.core.errors import ToolkitError
from toolkit.core.text import clean
from toolkit.core.versions import version_sort_key
from toolkit.data.matrix import python_sort_key
from toolkit.plan.recipes import load_matrix

KINDS = ("build", "smoke", "lock")
DOCS = {
    "build": "Build, name, check and smoke-test the wheels of Python {python} x ROCm {rocm}",
    "smoke": "Run the smoke tests against the built wheels of Python {python} x ROCm {rocm}",
    "lock": "Write locks/{python}-rocm{rocm}.txt (pip-compile --generate-hashes)",
}


def matrix_pairs() -> list[tuple[str, str, list[str]]]:
    """(Python, ROCm, tags) for every pair with a build, in matrix order."""
    packages: dict[tuple[str, str], set[str]] = {}
    for b in load_matrix().builds:
        packages.setdefault((b.python, b.rocm.version), set()).add(b.package.name)
    pairs = sorted(packages, key=lambda p: (version_sort_key(p[1]), python_sort_key(p[0])))
    return [(py, rocm, [*sorted(packages[py, rocm]), f"rocm{rocm}", f"py{py}", f"python{py}"])
            for py, rocm in pairs]


def _register(kind: str, python: str, rocm: str, tags: list[str]) -> None:
    def session(s: nox.Session) -> None:
        from toolkit.cli import sessions

        getattr(sessions, kind)(s, python, rocm, s.posargs)

    session.__doc__ = DOCS[kind].format(python=python, rocm=rocm)
    nox.session(name=f"{kind}-{python}-rocm{rocm}", python=False, tags=[kind, *tags],
                default=False)(session)


def register_matrix_sessions(data_free: Sequence[str]) -> None:
    """Register the matrix sessions; on a data error, go on only when nox was asked for
    ``data_free`` sessions alone (warn), else print the error and exit with its code."""
    try:
        pairs = matrix_pairs()
    except ToolkitError as err:
        requested = requested_sessions(sys.argv[1:], nox.options.sessions)
        if requested is None or not set(requested) <= set(data_free):
            print(f"error: {clean(err.line)}", file=sys.stderr)
            raise SystemExit(err.exit_code) from None
        print(f"warning: {clean(err.line)} (build/smoke/lock sessions are not registered until it is fixed)",
              file=sys.stderr)
        return
    for python, rocm, tags in pairs:
        for kind in KINDS:
            _register(kind, python, rocm, tags)


def requested_sessions(argv: Sequence[str], defaults: Sequence[str] | None) -> list[str] | None:
    """The session names this nox command runs or describes, or ``None`` when it lists
    sessions, selects by tag or keyword, or cannot be read (then every session may matter)."""
    try:
        from nox._options import options  # nox's own parser: its flags, NOXSESSION, aliases

        config = options.parse_args(list(argv))
    except (Exception, SystemExit):  # an unknown nox: assume the worst
        return None
    if getattr(config, "list_sessions", True) or getattr(config, "json", False) \
            or getattr(config, "tags", None) is not None or getattr(config, "keywords", None):
        return None
    usage = getattr(config, "usage", None)
    if usage:
        return list(usage)
    sessions = getattr(config, "sessions", None)
    if sessions is None:
        sessions = defaults
    return None if sessions is None else [str(s) for s in sessions]
