"""Which AMD GPUs does this machine have? Their gfx ids, from three sources.

* the kernel's KFD topology: ``/sys/class/kfd/kfd/topology/nodes/*/properties``, where each
  GPU node has ``gfx_target_version`` = major*10000 + minor*100 + stepping (decimal), e.g.
  ``90010`` -> gfx90a, ``90402`` -> gfx942, ``100300`` -> gfx1030; minor and stepping are
  written in hex in the gfx id. CPU nodes have ``gfx_target_version 0``. No subprocess.
* ``rocminfo``: agents whose ``Device Type`` is GPU, ``Name: gfx90a``.
* ``amd-smi static --asic --json``: ``asic.target_graphics_version`` per GPU (a list of
  records, or ``{"gpu_data": [...]}`` in newer versions).

The KFD root can be injected (``kfd_root=`` or ``TOOLKIT_KFD_ROOT``); an injected root is then
the only source (tests, containers with a copied topology). This module never prints and
imports nothing but the standard library and ``toolkit.core``: the smoke tests import it
inside a build's environment.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolkit.core.errors import CommandFailed
from toolkit.core.proc import run

KFD_ROOT = "/sys/class/kfd/kfd/topology/nodes"
KFD_ENV = "TOOLKIT_KFD_ROOT"
TOOL_TIMEOUT = 30.0
_GFX = re.compile(r"^gfx[0-9]{2,4}[0-9a-f]?$")

Runner = Callable[[Sequence[str]], "str | None"]


@dataclass(frozen=True)
class Gpu:
    gfx: str  # processor only: gfx90a (features such as xnack are not compared)
    source: str  # kfd, rocminfo, amd-smi
    detail: str = ""  # node folder, marketing name ...


@dataclass(frozen=True)
class Detection:
    gpus: tuple[Gpu, ...]
    looked_at: tuple[str, ...]  # "rocminfo (not installed)", "/sys/class/kfd/... (missing)"
    notes: tuple[str, ...] = field(default=())

    @property
    def gfx_ids(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(g.gfx for g in self.gpus))

    def find(self, target: str) -> Gpu | None:
        """The first GPU whose processor is ``target``'s (``gfx90a:xnack+`` -> gfx90a)."""
        proc = target.split(":")[0].strip().lower()
        return next((g for g in self.gpus if g.gfx == proc), None)

    def mismatch(self, target: str) -> str | None:
        """None when a GPU for ``target`` is present, else the reason (for skips/failures)."""
        if self.find(target):
            return None
        if not self.gpus:
            return f"no AMD GPU found (looked at {', '.join(self.looked_at)})"
        return f"found {', '.join(self.gfx_ids)}, requested {target}"


def gfx_from_target_version(value: int) -> str | None:
    """``90010`` -> ``gfx90a``; 0 (a CPU node) or nonsense -> None."""
    if value <= 0:
        return None
    major, rest = divmod(value, 10000)
    minor, stepping = divmod(rest, 100)
    if major == 0 or minor > 15 or stepping > 15:
        return None
    return f"gfx{major}{minor:x}{stepping:x}"


# ------------------------------------------------------------------------------ KFD
def from_kfd(root: str | os.PathLike[str]) -> tuple[list[Gpu], str]:
    """GPUs of a KFD topology folder (``.../topology/nodes``) and what was seen there."""
    base = Path(root)
    if not base.is_dir():
        return [], f"{base} (missing)"
    gpus: list[Gpu] = []
    nodes = sorted((p for p in base.iterdir() if p.is_dir()),
                   key=lambda p: (not p.name.isdigit(), int(p.name) if p.name.isdigit() else 0,
                                  p.name))
    for node in nodes:
        try:
            text = (node / "properties").read_text(encoding="ascii", errors="replace")
        except OSError:
            continue
        props = parse_kfd_properties(text)
        gfx = gfx_from_target_version(props.get("gfx_target_version", 0))
        if gfx:
            gpus.append(Gpu(gfx, "kfd", f"node {node.name}"))
    return gpus, str(base) + ("" if gpus else f" ({len(nodes)} node(s), no GPU)")


def parse_kfd_properties(text: str) -> dict[str, int]:
    """``name value`` lines (integers) of a KFD node's ``properties`` file."""
    out: dict[str, int] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2:
            try:
                out[parts[0]] = int(parts[1])
            except ValueError:
                continue
    return out


# ------------------------------------------------------------------------------ rocminfo
def parse_rocminfo(text: str) -> list[Gpu]:
    """GPU agents of ``rocminfo`` output (``Name: gfx90a`` with ``Device Type: GPU``)."""
    gpus: list[Gpu] = []
    for chunk in re.split(r"(?m)^\s*Agent\s+\d+\s*$", text)[1:]:
        name = re.search(r"(?m)^\s*Name:\s*(\S+)", chunk)
        kind = re.search(r"(?m)^\s*Device Type:\s*(\S+)", chunk)
        market = re.search(r"(?m)^\s*Marketing Name:\s*(.+?)\s*$", chunk)
        if not name or not kind or kind.group(1).upper() != "GPU":
            continue
        gfx = name.group(1).split(":")[0].lower()
        if _GFX.match(gfx):
            gpus.append(Gpu(gfx, "rocminfo", market.group(1) if market else ""))
    return gpus


# ------------------------------------------------------------------------------ amd-smi
def parse_amd_smi(text: str) -> list[Gpu]:
    """GPUs of ``amd-smi static --asic --json`` (any nesting; ``target_graphics_version``)."""
    try:
        data = json.loads(text)
    except ValueError:
        return []
    gpus: list[Gpu] = []

    def visit(node: Any) -> None:
        if isinstance(node, dict):
            inner = node.get("asic")
            asic: dict[str, Any] = inner if isinstance(inner, dict) else node
            value = asic.get("target_graphics_version")
            if isinstance(value, str):
                gfx = value.strip().split(":")[0].lower()
                if _GFX.match(gfx):
                    name = asic.get("market_name", "")
                    gpus.append(Gpu(gfx, "amd-smi", str(name) if name else ""))
                    return
            for child in node.values():
                visit(child)
        elif isinstance(node, list):
            for child in node:
                visit(child)

    visit(data)
    return gpus


# ------------------------------------------------------------------------------ detection
def _run(argv: Sequence[str]) -> str | None:
    """stdout of a tool, None when it is missing, fails or hangs."""
    exe = shutil.which(argv[0])
    if not exe:
        return None
    try:
        res = run([exe, *argv[1:]], timeout=TOOL_TIMEOUT, check=False)
    except CommandFailed:
        return None
    return res.stdout if res.ok else None


def detect(kfd_root: str | os.PathLike[str] | None = None, *,
           runner: Runner | None = None) -> Detection:
    """Every AMD GPU's gfx id: KFD topology first, then rocminfo, then amd-smi.

    With ``kfd_root`` (or ``TOOLKIT_KFD_ROOT``) the given folder is the only source.
    """
    injected = kfd_root if kfd_root is not None else os.environ.get(KFD_ENV) or None
    looked: list[str] = []
    gpus, seen = from_kfd(injected or KFD_ROOT)
    looked.append(seen)
    if gpus or injected:
        return Detection(tuple(gpus), tuple(looked))
    run = runner or _run
    out = run(["rocminfo"])
    gpus = parse_rocminfo(out) if out is not None else []
    looked.append("rocminfo" + ("" if out is not None else " (not installed or failed)"))
    if not gpus:
        out = run(["amd-smi", "static", "--asic", "--json"])
        gpus = parse_amd_smi(out) if out is not None else []
        looked.append("amd-smi" + ("" if out is not None else " (not installed or failed)"))
    return Detection(tuple(gpus), tuple(looked))
