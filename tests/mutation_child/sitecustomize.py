"""Start-up hook of every Python process a test starts while ``nox -s mutants`` runs.

tests/conftest.py puts this folder, then ``mutants/`` (mutmut's copy of the tree, whose
toolkit is mutated), first on ``PYTHONPATH`` when mutmut runs the tests, and Python imports
``sitecustomize`` at start-up from the first folder of ``sys.path`` that has one. So a toolkit
subprocess (``python -m toolkit``, nox, invoke) runs the mutated toolkit too:

- while mutmut collects its stats (``MUTANT_UNDER_TEST=stats``), the functions the child calls
  are written, at its exit, to a file in ``TOOLKIT_MUTMUT_HITS``; the conftest hands them to
  mutmut as calls of the test that started the child, so that test judges their mutants;
- while a mutant runs, the child inherits its name and runs it;
- an interpreter without mutmut (a session's own venv) could not import the mutated sources:
  it looks for modules everywhere but in ``mutants/`` and runs the toolkit it has.

Python 3.8 syntax (annotations postponed): every interpreter a test starts loads this file.
"""

from __future__ import annotations

import os
import sys
from importlib.machinery import ModuleSpec, PathFinder
from typing import Any


class _Unmutated:
    """First on ``sys.meta_path`` of an interpreter without mutmut: a top-level module is looked
    for everywhere but in ``mutants/`` (also when that is the working folder, which Python puts
    on the path only after this file ran); one found only there is not found at all."""

    root = ""

    @classmethod
    def find_spec(cls, name: str, path: Any = None, target: Any = None) -> ModuleSpec | None:
        if path is not None:  # a submodule follows its package
            return None
        here = os.getcwd()
        entries = [p for p in sys.path if os.path.realpath(p or here) != cls.root]
        spec = PathFinder.find_spec(name, entries)
        for finder in sys.meta_path:  # e.g. an editable install's finder
            if spec is not None:
                return spec
            if finder not in (cls, PathFinder) and hasattr(finder, "find_spec"):
                spec = finder.find_spec(name, None, target)
        if spec is None and PathFinder.find_spec(name, [cls.root]) is not None:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return spec


def _record_hits(trampoline: Any, folder: str) -> None:
    hits: set[str] = set()

    def record(name: str, caller: str | None = None) -> None:
        hits.add(name)

    def dump() -> None:
        if not hits:
            return
        import uuid

        path = os.path.join(folder, f"{os.getpid()}-{uuid.uuid4().hex}")
        with open(path + ".part", "w", encoding="utf-8") as out:
            out.write("\n".join(sorted(hits)))
        os.replace(path + ".part", path + ".hits")

    import atexit

    trampoline.record_trampoline_hit = record
    atexit.register(dump)


def _install() -> None:
    root = os.environ.get("TOOLKIT_MUTANTS_ROOT")
    if not root:
        return
    root = os.path.realpath(root)
    try:
        import mutmut.mutation.trampoline as trampoline
    except ImportError:
        _Unmutated.root = root
        sys.meta_path.insert(0, _Unmutated)
        return
    folder = os.environ.get("TOOLKIT_MUTMUT_HITS")
    if os.environ.get("MUTANT_UNDER_TEST") == "stats" and folder and os.path.isdir(folder):
        _record_hits(trampoline, folder)


_install()
