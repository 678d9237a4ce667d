"""The body of ``nox -s mutants``: mutation testing of ``toolkit/inspect`` with mutmut.

    nox -s mutants                          # every module of toolkit/inspect
    nox -s mutants -- toolkit.inspect.readers.policy  # one module
    nox -s mutants -- --score-only          # the score of the last run, nothing run

mutmut's configuration (what is mutated, which tests run) is ``[tool.mutmut]`` in
pyproject.toml; it works in ``mutants/`` (git-ignored). The score counts a mutant as killed
when a test failed or timed out on it; survivors and mutants no test covers are listed, each
to become a test or a line in ``docs/equivalent-mutants.md``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolkit.core.errors import EnvironmentProblem, UsageError

MODULE = re.compile(r"^toolkit\.inspect(\.[a-z_][a-z0-9_]*){0,2}$")
SURVIVED, NO_TESTS = 0, 33
NOT_RUN = (None, 34)  # not checked yet, skipped


@dataclass
class Score:
    killed: int = 0
    survived: list[str] = field(default_factory=list)
    no_tests: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return self.killed + len(self.survived) + len(self.no_tests)

    def line(self) -> str:
        pct = 100.0 * self.killed / self.total if self.total else 0.0
        return (f"mutants: {self.killed} killed of {self.total} ({pct:.1f}%), {len(self.survived)} survived, "
                f"{len(self.no_tests)} not covered by any test")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="nox -s mutants --", exit_on_error=False,
                                description="mutation testing of toolkit/inspect (mutmut)")
    p.add_argument("module", nargs="?", help="one module, e.g. toolkit.inspect.readers.policy (default: all)")
    p.add_argument("--score-only", action="store_true", help="report the last run's score, run nothing")
    p.add_argument("--max-children", type=int, default=None, help="parallel workers (mutmut's default: CPUs)")
    return p


def _metas(root: Path, module: str | None) -> Iterator[tuple[str, dict[str, Any]]]:
    base = root / "mutants"
    for meta in sorted(base.glob("toolkit/inspect/**/*.py.meta")):
        name = ".".join(meta.relative_to(base).with_suffix("").with_suffix("").parts)
        if module and name != module and not name.startswith(module + "."):
            continue
        try:
            yield name, json.loads(meta.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue


def score(root: Path, module: str | None = None) -> Score:
    """The score of the mutants of ``module`` (or of all of toolkit/inspect) in ``mutants/``."""
    out = Score()
    for _, data in _metas(root, module):
        for key, code in (data.get("exit_code_by_key") or {}).items():
            if code in NOT_RUN:
                continue
            if code == SURVIVED:
                out.survived.append(key)
            elif code == NO_TESTS:
                out.no_tests.append(key)
            else:
                out.killed += 1
    return out


def mutants(session: Any, posargs: Sequence[str]) -> None:
    """Run mutmut over toolkit/inspect (or one module) and print the score and survivors."""
    try:
        args = parser().parse_args(list(posargs))
        if args.module and not MODULE.match(args.module):
            raise UsageError(f"bad module {args.module!r}: give a dotted name under toolkit.inspect, "
                             "e.g. toolkit.inspect.readers.policy")
        root = Path.cwd()
        if not args.score_only:
            exe = Path(sys.executable).with_name("mutmut")
            if not exe.exists():
                raise EnvironmentProblem("mutmut is not installed", hint="pip install -e '.[dev]'")
            extra = [f"--max-children={args.max_children}"] if args.max_children else []
            names = [f"{args.module}.*"] if args.module else []
            session.run(str(exe), "run", *extra, *names, success_codes=[0, 1])
        result = score(root, args.module)
    except (UsageError, EnvironmentProblem) as err:
        session.error(str(err))
    except argparse.ArgumentError as err:
        session.error(str(err))
    for key in result.survived:
        session.log(f"survived: {key}")
    for key in result.no_tests:
        session.log(f"no test covers: {key}")
    session.log(result.line())
