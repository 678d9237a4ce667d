"""Facts about the build host that a plan depends on (discovered once, passed in)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType


@dataclass(frozen=True)
class SystemRocm:
    root: str
    version: str


@dataclass(frozen=True)
class HostFacts:
    cores: int = 2
    mem_available_gib: float = 8.0
    ccache: str | None = None
    sccache: str | None = None
    interpreters: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    system_rocm: SystemRocm | None = None
    gpus: tuple[str, ...] = ()
    uv: str = "uv"  # absolute path when discovered (a venv's bin/ need not be on PATH)


def _mem_available_gib() -> float:
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) / (1024 * 1024)
    except OSError:
        pass
    return 8.0


def find_uv() -> str:
    from toolkit.env.interpreters import find_uv as located

    return located() or "uv"


def discover() -> HostFacts:
    """Cheap facts only (no subprocesses): cores, memory, compiler caches."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover
        cores = os.cpu_count() or 1
    return HostFacts(
        cores=cores,
        mem_available_gib=_mem_available_gib(),
        ccache=shutil.which("ccache"),
        sccache=shutil.which("sccache"),
        uv=find_uv(),
    )
