"""Redundant accelerator variants: a ``+rocm``/``+xpu``/``+cu126`` wheel with nothing of the
accelerator in it, and wheels of one version identical apart from their names.

TorchAO's case: its ROCm and XPU wheels (``torchao-0.7.0+rocm-py3-none-any.whl``) are the
pure-Python wheel under another label. CI can drop such builds.
"""

from __future__ import annotations

import hashlib
import itertools
import re
from collections.abc import Mapping, Sequence

from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from toolkit.inspect.report import Finding, WheelResult

# one whole part of a local label (PEP 440: dot-separated, lower-case): ``rocm6``, ``cu126``;
# a part that only starts like one (``+custom``, ``+hipster``) names no accelerator
ACCELERATOR = re.compile(r"rocm[0-9]*|hip[0-9]*|xpu|gpu|cuda[0-9]*|cu[0-9]+")


def accelerator_label(version: str | None) -> str | None:
    """The part of a local version label naming an accelerator (``rocm7.0``), or None."""
    try:
        local = Version(version or "").local
    except InvalidVersion:
        return None
    parts = (local or "").split(".")
    for i, part in enumerate(parts):
        if ACCELERATOR.fullmatch(part):
            numbers = list(itertools.takewhile(str.isdigit, parts[i + 1 :]))
            return ".".join([part, *numbers])  # rocm6.2: the parts rocm6 and 2
    return None


def redundant_variant(res: WheelResult) -> list[Finding]:
    """A wheel labelled for an accelerator that carries no native or GPU code."""
    label = accelerator_label(res.version)
    if label is None or res.libraries:
        return []
    msg = (
        f"{res.name} {res.version} is labelled +{label} but carries no native or GPU code: a "
        "redundant accelerator variant (the plain py3-none-any wheel is the same; CI can drop "
        "this build)"
    )
    return [Finding("redundant-variant", "warning", None, msg, cause="redundant accelerator variant")]


def content_key(name: str, digests: Mapping[str, str | None], metadata: bytes | None) -> str:
    """A digest of a wheel's contents that ignores its name and version: the .dist-info
    folder's name, RECORD, and METADATA's Version line."""
    h = hashlib.sha256()
    items = []
    for member, digest in digests.items():
        top, _, rest = member.partition("/")
        if top.endswith(".dist-info"):
            if rest in ("RECORD", "METADATA"):
                continue
            member = "<dist-info>/" + rest
        items.append((member, digest))
    for member, digest in sorted(items):
        h.update(f"{member}\0{digest}\n".encode())
    if metadata is not None:
        kept = [ln for ln in metadata.splitlines() if not ln.lower().startswith(b"version:")]
        h.update(b"METADATA\0" + hashlib.sha256(b"\n".join(kept)).digest())
    return f"{canonicalize_name(name)}:{h.hexdigest()}"


def identical_findings(results: Sequence[WheelResult]) -> None:
    """Add a finding to every wheel that has a twin (same project, public version and content)."""
    groups: dict[tuple[str, str], list[WheelResult]] = {}
    for res in results:
        if res.content_key and res.version:
            public = Version(res.version).public
            groups.setdefault((res.content_key, public), []).append(res)
    for twins in groups.values():
        if len(twins) < 2:
            continue
        for res in twins:
            others = ", ".join(t.path.rsplit("/", 1)[-1] for t in twins if t is not res)
            msg = (f"{res.path.rsplit('/', 1)[-1]} is identical to {others} apart from the name and "
                   "version label: one build is enough")
            res.findings.append(Finding("identical", "warning", None, msg, cause="identical wheels"))
