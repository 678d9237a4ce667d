"""nox sessions: build-/smoke-/lock-<py>-rocm<rocm> for every matrix pair, plus tests, lint, demo,
fuzz and flakes.

Bodies live in ``toolkit.cli.sessions`` (fuzz, flakes: ``toolkit.cli.devsessions``); options
after ``--`` are listed by ``nox -s build-3.12-rocm7.0 -- --help``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nox

from toolkit.cli import noxsupport

nox.options.sessions = ["lint", "tests"]

# From the matrix data. Broken data: `tests` and `lint` still run; `nox -l` and anything else
# print the data error in one line and exit 3.
noxsupport.register_matrix_sessions(data_free=("tests", "lint", "fuzz", "flakes"))


@nox.session(python=False)
def tests(session: nox.Session) -> None:
    """Run the toolkit's test suite (pytest -n auto)."""
    session.run(sys.executable, "-m", "pytest", "-n", "auto", *session.posargs)


@nox.session(python=False)
def lint(session: nox.Session) -> None:
    """ruff, mypy --strict, the import contracts (layers, no cycles), the module size and function
    limits (complexity 15, 60 lines) and zizmor on the workflows."""
    session.run(sys.executable, "-m", "ruff", "check", ".")
    session.run(sys.executable, "-m", "mypy")
    session.run(str(Path(sys.executable).with_name("lint-imports")))
    session.run(str(Path(sys.executable).with_name("zizmor")), "--offline", "--min-severity", "medium",
                ".github/workflows/")
    session.run(sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                "tests/unit/test_architecture.py")


@nox.session(python=False, default=False)
def mutants(session: nox.Session) -> None:
    """Mutation testing of all of toolkit/, package by package (mutmut); `-- toolkit.run --sample 100`."""
    from toolkit.cli.mutants import mutants as body

    body(session, session.posargs)


@nox.session(python=False, default=False)
def demo(session: nox.Session) -> None:
    """Build, check and smoke-test the bundled sample extension."""
    from toolkit.cli import sessions

    sessions.demo(session, session.posargs)


@nox.session(python=False, default=False)
def fuzz(session: nox.Session) -> None:
    """Property tests at random with many examples; failing ones printed as @example lines."""
    from toolkit.cli import devsessions

    devsessions.fuzz(session, session.posargs)


@nox.session(python=False, default=False)
def flakes(session: nox.Session) -> None:
    """The integration tests 5 times in a row (cold and warm ccache); tests that changed outcome."""
    from toolkit.cli import devsessions

    devsessions.flakes(session, session.posargs)
