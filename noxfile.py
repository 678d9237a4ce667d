"""nox sessions: build-/smoke-/lock-<py>-rocm<rocm> for every matrix pair, plus tests, lint, demo.

Bodies live in ``toolkit.cli.sessions``; options after ``--`` are listed by
``nox -s build-3.12-rocm7.0 -- --help``.
"""

from __future__ import annotations

import sys

import nox

from toolkit.cli import sessions

nox.options.sessions = ["lint", "tests"]


_DOCS = {
    "build": "Build, name, check and smoke-test the wheels of Python {python} x ROCm {rocm}",
    "smoke": "Run the smoke tests against the built wheels of Python {python} x ROCm {rocm}",
    "lock": "Write locks/{python}-rocm{rocm}.txt (pip-compile --generate-hashes)",
}


def _register(kind: str, python: str, rocm: str) -> None:
    name = f"{kind}-{python}-rocm{rocm}"

    def session(s: nox.Session) -> None:
        getattr(sessions, kind)(s, python, rocm, s.posargs)

    session.__doc__ = _DOCS[kind].format(python=python, rocm=rocm)
    nox.session(session, name=name, python=False, tags=[kind, *sessions.tags(python, rocm)],
                default=False)


for _python, _rocm in sessions.pairs():
    for _kind in ("build", "smoke", "lock"):
        _register(_kind, _python, _rocm)


@nox.session(python=False)
def tests(session: nox.Session) -> None:
    """Run the toolkit's test suite (pytest -n auto)."""
    session.run(sys.executable, "-m", "pytest", "-n", "auto", *session.posargs)


@nox.session(python=False)
def lint(session: nox.Session) -> None:
    """ruff and mypy."""
    session.run(sys.executable, "-m", "ruff", "check", ".")
    session.run(sys.executable, "-m", "mypy")


@nox.session(python=False, default=False)
def demo(session: nox.Session) -> None:
    """Build, check and smoke-test the bundled sample extension."""
    sessions.demo(session, session.posargs)
