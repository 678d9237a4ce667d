"""One way in: the options a build is planned with, resolved once, and ``prepare``, the one
entry point from a request to its plans, layout and host (cibuildwheel: ``options.py``,
``__main__.py``).

Every front end gives its options to ``given_options`` (the CLI's subcommands, nox posargs
and invoke tasks all parse them with the same argparse definitions) or reads them from a
manifest (``toolkit.plan.model.options_from_json``); ``resolve`` then checks and completes
them the same way for all (the CI overrides, gfx families expanded, lock files read, a
``--source`` checkout's uncommitted changes refused or noted). ``prepare`` is what build
sessions, demo, plan, provision and repro call to plan their builds on this host.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

from toolkit.core.errors import UsageError, suggestion
from toolkit.data.matrix import Build, Matrix
from toolkit.env.host import HostFacts, SystemRocm
from toolkit.plan.layout import Layout
from toolkit.plan.model import Options, Plan

# CI overrides of the command line's options (a flag wins over its variable)
ENV_OVERRIDES: Mapping[str, str] = MappingProxyType({
    "rocm_from": "TOOLKIT_ROCM_FROM",
    "channel": "TOOLKIT_ROCM_CHANNEL",
    "index_url": "TOOLKIT_ROCM_INDEX_URL",
    "family": "TOOLKIT_ROCM_FAMILY",
})
NAMINGS = ("toolkit", "upstream")
PROVIDERS = ("pip", "system")


def _text(args: argparse.Namespace, name: str) -> str | None:
    value = getattr(args, name, None)
    if value is None or isinstance(value, str):
        return value
    raise TypeError(f"option {name}: expected a string, got {type(value).__name__}")


def _texts(args: argparse.Namespace, name: str) -> tuple[str, ...]:
    value = getattr(args, name, None) or []
    if isinstance(value, str):
        return (value,)
    return tuple(str(v) for v in value)


def _flag(args: argparse.Namespace, name: str) -> bool:
    return bool(getattr(args, name, False))


def _recipe_options(args: argparse.Namespace) -> tuple[str, ...]:
    from toolkit.plan.recipes import recipe_options

    return tuple(f"{name}={value}" for name in recipe_options()
                 if (value := getattr(args, name.replace("-", "_"), None)) is not None)


def given_options(args: argparse.Namespace,
                  environ: Mapping[str, str] | None = None) -> Options:
    """The options a parsed command line gives (``python -m toolkit``, ``nox -s ... --`` and
    invoke parse theirs with the same definitions), with the CI overrides of ``environ``
    (``ENV_OVERRIDES``) where a flag is not given. Nothing is checked yet: ``resolve``."""
    environ = os.environ if environ is None else environ
    ov = {name: _text(args, name) or environ.get(var) or None
          for name, var in ENV_OVERRIDES.items()}
    return Options(
        rocm_from=ov["rocm_from"], channel=ov["channel"], index_url=ov["index_url"],
        family=ov["family"],
        gfx=_texts(args, "gfx"), find_links=_texts(args, "find_links"),
        source=_text(args, "source"), naming=_text(args, "naming") or "toolkit",
        smoke=not _flag(args, "no_smoke"), no_lock=_flag(args, "no_lock"),
        allow_insecure_index=_flag(args, "allow_insecure_index"),
        allow_rocm_mismatch=_flag(args, "allow_rocm_mismatch"),
        rocm_sdk_test=_flag(args, "rocm_sdk_test"), rebuild=_flag(args, "rebuild"),
        recipe_options=_recipe_options(args), allow_dirty=_flag(args, "allow_dirty"),
        variants=_flag(args, "variants"))


def _check(options: Options) -> None:
    from toolkit.core.urls import check_location
    from toolkit.data.specs import CHANNELS

    if options.naming not in NAMINGS:
        raise UsageError(f"unknown naming {options.naming!r}; valid: {', '.join(NAMINGS)}",
                         nearest=suggestion(options.naming, NAMINGS))
    if options.rocm_from not in (None, *PROVIDERS):
        raise UsageError(f"unknown ROCm SDK provider {options.rocm_from!r}; valid: "
                         f"{', '.join(PROVIDERS)}", nearest=suggestion(options.rocm_from, PROVIDERS))
    if options.channel is not None and options.channel not in CHANNELS:
        raise UsageError(f"unknown channel {options.channel!r}; valid: {', '.join(CHANNELS)}",
                         nearest=suggestion(options.channel, CHANNELS))
    if options.index_url is not None:
        check_location(options.index_url, allow_insecure=options.allow_insecure_index)
    for url in options.find_links:
        check_location(url, allow_insecure=options.allow_insecure_index, what="find-links value")


def resolve(given: Options, matrix: Matrix, layout: Layout, *, sources: bool = True) -> Options:
    """``given`` checked (one line, exit 2, naming what is valid) and completed: gfx families
    expanded to ids, the lock files of ``layout`` read (unless ``no_lock``) and, when
    ``sources``, whether the ``--source`` checkout has uncommitted changes (without
    ``allow_dirty``: ``DirtySource``, exit 12, before anything is read or built)."""
    from toolkit.plan.locks import read_locks

    _check(given)
    resolved = dataclasses.replace(
        given, gfx=matrix.expand_gfx(list(given.gfx)) if given.gfx else (),
        locks=() if given.no_lock else read_locks(layout.locks()))
    if sources and resolved.source:
        from toolkit.env.project import refuse_dirty

        changes = refuse_dirty(resolved.source, resolved.allow_dirty)
        resolved = dataclasses.replace(resolved, dirty=changes is not None)
    return resolved


@dataclass(frozen=True)
class Request:
    """What to plan: ``builds`` of ``matrix`` with resolved ``options``, in ``layout``.

    The host is discovered (``toolkit.env.host.discover``); ``interpreters`` fixes some
    Pythons' interpreters (demo: this one; provision: the one found; repro: the recorded
    one's equivalent). ``rocm``: how a build whose ROCm comes from the system finds it:
    ``find`` looks (not finding one is said when the step runs), ``require`` looks and
    refuses in one line (exit 4) when there is none, ``given`` takes ``system_rocm`` as is
    (demo: the hipcc found, or none for the CPU variant)."""

    matrix: Matrix
    builds: tuple[Build, ...]
    options: Options
    layout: Layout
    interpreters: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    rocm: Literal["find", "require", "given"] = "find"
    system_rocm: SystemRocm | None = None


def host_for(request: Request) -> HostFacts:
    """This host's facts as ``request`` plans with them."""
    from toolkit.env.host import discover
    from toolkit.plan.provision import sdk_provider

    host = discover()
    if request.interpreters:
        host = dataclasses.replace(host, interpreters=MappingProxyType(
            {**host.interpreters, **request.interpreters}))
    if request.rocm == "given" or request.system_rocm is not None:
        return dataclasses.replace(host, system_rocm=request.system_rocm)
    system = [b for b in request.builds if sdk_provider(b, request.options) == "system"]
    if not system:
        return host
    want = system[0].rocm.sdk.version or system[0].rocm.version
    if request.rocm == "require":
        from toolkit.env.rocm import find_system

        return dataclasses.replace(host, system_rocm=find_system(want=want))
    from toolkit.env.rocm import with_system_rocm

    return with_system_rocm(host, want)


def prepare_all(request: Request) -> tuple[tuple[Plan, ...], Layout, HostFacts]:
    """The plans of every build of ``request``, the layout they run in, the host they were
    planned for."""
    from toolkit.plan.planner import plan

    host = host_for(request)
    plans = tuple(plan(request.matrix, b, request.options, host, request.layout,
                       toolkit_python=sys.executable) for b in request.builds)
    return plans, request.layout, host


def prepare(request: Request) -> tuple[Plan, Layout, HostFacts]:
    """The one entry point: a request of one build to its plan, layout and host."""
    if len(request.builds) != 1:
        raise ValueError(f"prepare plans one build; got {len(request.builds)}: use prepare_all")
    plans, layout, host = prepare_all(request)
    return plans[0], layout, host
