"""The bodies of the nox sessions (noxfile.py only declares them).

Imported by ``noxfile.py`` at ``nox -l`` time: keep module-level imports light.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any

from toolkit.errors import ToolkitError
from toolkit.matrix import load_matrix


def pairs() -> list[tuple[str, str]]:
    return load_matrix().pairs()


def tags(python: str, rocm: str) -> list[str]:
    pkgs = sorted({b.package.name for b in load_matrix().builds
                   if b.python == python and b.rocm.version == rocm})
    return [*pkgs, f"rocm{rocm}", f"py{python}", f"python{python}"]


def session_parser(session_name: str) -> argparse.ArgumentParser:
    from toolkit.commands.plan import add_build_options

    p = argparse.ArgumentParser(prog=f"nox -s {session_name} --", exit_on_error=False)
    p.add_argument("--package", action="append", default=[], help="package name(s), comma list")
    p.add_argument("--dry-run", action="store_true", help="print the plan, run nothing")
    p.add_argument("--json", action="store_true", help="with --dry-run: the plan as JSON")
    add_build_options(p)
    return p


def _guard(session: Any, body: Callable[[], None]) -> None:
    """User errors: one line, the error's own exit code, no traceback."""
    try:
        body()
    except ToolkitError as err:
        print(f"error: {err}", file=sys.stderr)
        raise SystemExit(err.exit_code) from None
    except argparse.ArgumentError as err:
        print(f"error: {err}", file=sys.stderr)
        raise SystemExit(2) from None


def build(session: Any, python: str, rocm: str, posargs: Sequence[str]) -> None:
    def body() -> None:
        from toolkit.commands.plan import options_from
        from toolkit.execute import execute
        from toolkit.host import discover
        from toolkit.layout import Layout
        from toolkit.matrix import Matrix
        from toolkit.plan import Options, plan, render

        args = session_parser(f"build-{python}-rocm{rocm}").parse_args(list(posargs))
        matrix, opts = options_from(args)
        assert isinstance(matrix, Matrix) and isinstance(opts, Options)
        builds = matrix.pair_builds(python, rocm, args.package)
        host = discover()
        layout = Layout.default(args.workdir)
        plans = [plan(matrix, b, opts, host, layout, toolkit_python=sys.executable)
                 for b in builds]
        if args.dry_run:
            import json

            if args.json:
                print(json.dumps([p.as_json() for p in plans], indent=2))
            else:
                print("\n\n".join(render(p) for p in plans))
            return
        from toolkit.execute import ensure_implemented

        for p in plans:
            ensure_implemented(p)
        for p in plans:
            execute(p, layout)

    _guard(session, body)


def _pending(session: Any, what: str, issue: str) -> None:
    from toolkit.errors import NotImplementedStep

    def body() -> None:
        raise NotImplementedStep(f"{what} is not implemented yet ({issue})")

    _guard(session, body)


def smoke(session: Any, python: str, rocm: str, posargs: Sequence[str]) -> None:
    _pending(session, f"smoke-{python}-rocm{rocm}", "issue #6 (smoke tests)")


def lock(session: Any, python: str, rocm: str, posargs: Sequence[str]) -> None:
    _pending(session, f"lock-{python}-rocm{rocm}", "issue #4 (environments)")


def demo(session: Any, posargs: Sequence[str]) -> None:
    _pending(session, "the demo build", "issue #5 (build)")
