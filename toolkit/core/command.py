"""The one command type every step runs: argv (never through a shell), environment, cwd."""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

EMPTY: Mapping[str, str] = MappingProxyType({})


def quote_argv(argv: tuple[str, ...] | list[str]) -> str:
    return " ".join(shlex.quote(a) for a in argv)


@dataclass(frozen=True)
class Command:
    """Run ``argv`` (never through a shell) with ``env`` on top of the inherited environment."""

    argv: tuple[str, ...]
    env: Mapping[str, str] = field(default_factory=lambda: EMPTY)
    unset: tuple[str, ...] = ()
    cwd: str | None = None
    echo: bool = False  # also show the output on the console (smoke results)
    timeout: float | None = None

    def command(self) -> Command:
        return self

    def explain(self) -> list[str]:
        return []
