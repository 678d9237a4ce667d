"""The bodies of the nox sessions (noxfile.py only declares them).

Imported by ``noxfile.py`` at ``nox -l`` time: keep module-level imports light.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any

from toolkit.cli.commands.plan import path_value
from toolkit.core.errors import ToolkitError
from toolkit.core.text import clean


def session_parser(session_name: str) -> argparse.ArgumentParser:
    from toolkit.cli.commands.plan import add_build_options
    from toolkit.cli.main import COMMAND_HELP, Parser, exit_codes

    p = Parser(prog=f"nox -s {session_name} --", exit_on_error=False,
               description="The session's options after --: those of python -m toolkit "
                           "plan, with --package and --version to narrow the pair's builds; "
                           "a failure ends the session with 'error: WHAT (exit N)'.",
               epilog=exit_codes(COMMAND_HELP["demo"][1]))
    p.add_argument("--package", action="append", default=[], help="package name(s), comma list")
    p.add_argument("--version", action="append", default=[], dest="versions",
                   help="package version(s), comma list (e.g. 1.8.0)")
    p.add_argument("--dry-run", action="store_true", help="print the plan, run nothing")
    p.add_argument("--json", action="store_true", help="with --dry-run: the plan as JSON")
    p.add_argument("--junit", default=None, type=path_value, metavar="FILE",
                   help="write one JUnit test case per build here (known failures: xfail)")
    add_build_options(p)
    return p


def session_builds(matrix: Any, python: str, rocm: str, args: argparse.Namespace) -> list[Any]:
    """The pair's builds, narrowed by --package and --version (an empty result is an error)."""
    from toolkit.core.errors import UsageError

    builds: list[Any] = matrix.pair_builds(python, rocm, args.package)
    if args.versions:
        wanted = matrix.select(packages=args.package, versions=args.versions)
        builds = [b for b in builds if b in wanted]
        if not builds:
            ids = sorted({b.id for b in matrix.pair_builds(python, rocm)})
            raise UsageError(f"no build of version {','.join(args.versions)} for Python {python} "
                             f"/ ROCm {rocm}; this pair builds: {', '.join(ids)}")
    return builds


def _guard(session: Any, body: Callable[[], None], fault_code: int = 5) -> None:
    """Run a session's body; a failure ends the session through nox's own failure model,
    ``session.error``: nox records it (``aborted``, with the reason, in ``--report FILE``),
    goes on with the next session and exits non-zero at the end. The reason is the toolkit's
    one line with its exit code: ``error: <what was wrong> (exit N)``, nox's last line of the
    session. A user error: its own exit code, no traceback; a fault no step turned into a
    ``ToolkitError`` (an ``OSError``): one line naming path and cause, exit ``fault_code``;
    a body that ended with ``Finished`` (the table is shown): its reason and code; Ctrl-C
    (130) stays an interrupt, which stops nox."""
    failure = _failure(body, fault_code)
    if failure is not None:
        from toolkit.verify.report import session_reason  # what `toolkit report` reads back

        session.error(session_reason(*failure))


def _failure(body: Callable[[], None], fault_code: int) -> tuple[str, int] | None:
    from toolkit.cli.running import Finished
    from toolkit.core.errors import describe_os_error
    from toolkit.core.text import escape
    from toolkit.core.urls import mask

    try:
        body()
    except ToolkitError as err:
        return clean(mask(err.line)), err.exit_code
    except argparse.ArgumentError as err:
        return escape(mask(str(err)), 1000), 2
    except OSError as err:
        return describe_os_error(err), fault_code
    except Finished as done:
        if done.code == Finished.INTERRUPTED:
            raise KeyboardInterrupt from None
        return clean(mask(done.reason)), done.code
    except SystemExit as exc:  # argparse: --help (0), or a usage error it printed (2)
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
        if code:
            return "the options after -- were refused (the usage is above)", code
    return None


def build(session: Any, python: str, rocm: str, posargs: Sequence[str]) -> None:
    def body() -> None:
        import dataclasses

        from toolkit.cli.commands.plan import options_from
        from toolkit.cli.own_project import session_project
        from toolkit.cli.running import run_and_summarise
        from toolkit.plan.layout import Layout
        from toolkit.plan.model import render
        from toolkit.plan.request import Request, prepare_all

        args = session_parser(f"build-{python}-rocm{rocm}").parse_args(list(posargs))
        matrix, opts = options_from(args)
        layout = Layout.default(args.workdir)
        own = session_project(matrix, python, rocm, args, layout)  # --source: your project
        builds = [own] if own else session_builds(matrix, python, rocm, args)
        if own:
            opts = dataclasses.replace(opts, source=own.package.repo)
        planned, _, _ = prepare_all(Request(matrix, tuple(builds), opts, layout))
        from toolkit.cli.known import HINT, plan_header, split
        from toolkit.core.errors import KnownFailureRefused

        # known failures: said up front, one line each; run only with --include-known-failures
        plans, refused = split(list(planned), args.include_known_failures)
        if not plans:  # one line (per build) naming the reason and evidence, exit 7
            raise KnownFailureRefused("; ".join(refused), hint=HINT)
        for line in refused:
            print(f"warning: {line} ({HINT})", file=sys.stderr)
        if args.dry_run:
            import json

            if args.json:
                from toolkit.core.urls import mask

                print(mask(json.dumps([p.as_json() for p in plans], indent=2)))
            else:
                print(clean("\n\n".join("\n".join([*plan_header(p), render(p)])
                                          for p in plans)))
            if refused:
                from toolkit.cli.running import Finished, refused_reason

                raise Finished(KnownFailureRefused.exit_code, refused_reason(len(refused)))
            return
        run_and_summarise(plans, layout, refused=len(refused), junit=args.junit,
                          known_failures=True)

    _guard(session, body)


def smoke(session: Any, python: str, rocm: str, posargs: Sequence[str]) -> None:
    """Smoke-test every build of the pair that has a manifest (options: ``-- --help``)."""

    def body() -> None:
        from toolkit.cli.commands.smoke import run_pair

        run_pair(python, rocm, list(posargs))

    _guard(session, body)


def lock(session: Any, python: str, rocm: str, posargs: Sequence[str]) -> None:
    """pip-compile --generate-hashes one lock per environment of the pair (``--check``:
    report missing/stale locks and exit 1 when any is not current)."""

    def body() -> None:
        from toolkit.cli.commands.plan import options_from
        from toolkit.env.interpreters import find
        from toolkit.plan.layout import Layout
        from toolkit.run.lockfiles import lock_status, write_locks

        parser = session_parser(f"lock-{python}-rocm{rocm}")
        parser.add_argument("--check", action="store_true",
                            help="only report missing or stale locks (exit 1 if any)")
        args = parser.parse_args(list(posargs))
        args.no_lock = True  # never plan against the locks being (re)written
        matrix, opts = options_from(args)
        builds = session_builds(matrix, python, rocm, args)
        layout = Layout.default(args.workdir)
        if args.check:
            states = lock_status(matrix, builds, opts, layout)
            for st in states:
                print(clean(f"{st.state:<9} {st.path}"))
            stale = [st for st in states if st.state != "current"]
            if stale:
                from toolkit.cli.running import Finished

                raise Finished(1, f"{len(stale)} of {len(states)} locks are not current "
                                  f"({', '.join(sorted({st.state for st in stale}))})")
            return
        for path in write_locks(matrix, builds, opts, layout, interpreter=find(python).path):
            print(clean(f"wrote {path}"))

    _guard(session, body)


def demo(session: Any, posargs: Sequence[str]) -> None:
    """Build, check and smoke-test the bundled sample for gfx90a and gfx908."""
    from toolkit.cli.commands.demo import demo_main

    _guard(session, lambda: demo_main(posargs, "nox -s demo --"))
