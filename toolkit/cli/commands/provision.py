"""`python -m toolkit provision ID`: provision one build's environment and print its path.

Runs only the provisioning steps of the build's plan (create-env, install-rocm-sdk,
[rocm-sdk-test], install-torch): the interpreter is found first (PATH, pyenv, /opt/python,
uv), an environment whose stamp matches is reused, the SDK is described through
``python -m rocm_sdk``, torch's HIP version is checked. Progress goes to stderr, the
environment folder to stdout (``--json``: also what was learned).
"""

from __future__ import annotations

import argparse
import json
import sys
from types import MappingProxyType
from typing import TYPE_CHECKING

from toolkit.core.text import clean

if TYPE_CHECKING:
    from toolkit.data.matrix import Build, Matrix
    from toolkit.plan.layout import Layout
    from toolkit.plan.model import Options, Plan
    from toolkit.run.context import Run


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from toolkit.cli.commands.plan import add_build_options

    p = sub.add_parser("provision", help="create or reuse the environment of one build")
    p.add_argument("build_id", metavar="ID", help="a build id, e.g. apex-1.8.0-cp312-rocm7.0")
    add_build_options(p)
    p.add_argument("--dry-run", action="store_true", help="print the provisioning steps only")
    p.add_argument("--json", action="store_true", help="print the environment and values as JSON")
    p.set_defaults(func=run)


def provisioning_plan(matrix: Matrix, build: Build, options: Options, layout: Layout, *,
                      find_interpreter: bool = True) -> Plan:
    """The build's plan cut down to its provisioning steps (interpreter resolved first; a
    system ROCm install required then, looked for only in a dry run)."""
    from toolkit.plan.model import Plan
    from toolkit.plan.request import Request, prepare

    interpreters: dict[str, str] = {}
    if find_interpreter:
        from toolkit.env.interpreters import find

        interpreters[build.python] = find(build.python).path
    full, _, _ = prepare(Request(matrix, (build,), options, layout,
                                 interpreters=MappingProxyType(interpreters),
                                 rocm="require" if find_interpreter else "find"))
    steps = tuple(s for s in full.steps if s.provisions)
    return Plan(full.build, full.targets, full.family, steps, options=full.options,
                channel=full.channel)


def provision(matrix: Matrix, build: Build, options: Options, layout: Layout) -> Run:
    """Provision (or reuse) the environment of ``build``; the executor's ``Run``."""
    from toolkit.cli.console import StreamReporter
    from toolkit.run.executor import execute

    return execute(provisioning_plan(matrix, build, options, layout), layout,
                   reporter=StreamReporter(sys.stderr))


def run(args: argparse.Namespace) -> int:
    from toolkit.cli.commands.plan import options_from
    from toolkit.core.urls import mask
    from toolkit.plan.layout import Layout
    from toolkit.plan.model import render

    matrix, opts = options_from(args, sources=False)
    build = matrix.build(args.build_id)
    layout = Layout.default(args.workdir)
    if args.dry_run:
        p = provisioning_plan(matrix, build, opts, layout, find_interpreter=False)
        print(mask(p.to_json()) if args.json else clean(mask(render(p))))
        return 0
    result = provision(matrix, build, opts, layout)
    env_dir = str(layout.env_dir(build))
    if args.json:
        values = {k: mask(v) for k, v in result.values.items() if not k.startswith("_")}
        print(json.dumps({"env": env_dir, "python": str(layout.env_python(build)),
                          "values": values,
                          "steps": [{"name": r.name, "skipped": r.skipped}
                                    for r in result.results]}, indent=2))
    else:
        print(env_dir)
    return 0
