"""Which wheel of a folder a variant-aware installer picks for a GPU and a Python version.

The order of the variants comes from ``variantlib`` itself (``get_variants_by_priority``),
asking the providers each variant names: ``rocm-bootstrap``'s ``amd`` plugin, which reports
the GPU it detects, or the one ``ROCM_BOOTSTRAP_FORCE_GFX_ARCH`` names (``--gfx``). It runs
in a child Python (variantlib keeps the plugins' answers for the life of a process, and the
GPU is the child's environment). Then, as an installer does: the highest version that has a
wheel for the Python; among its wheels the first variant in that order; else (variantlib's
``null`` label last) the wheel without a variant label; else none fits.
"""

from __future__ import annotations

import json
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from packaging.tags import Tag, compatible_tags, cpython_tags, parse_tag
from packaging.version import InvalidVersion, Version

from toolkit.core import gfx
from toolkit.core.errors import CheckFailed, EnvironmentProblem, UsageError
from toolkit.core.proc import run
from toolkit.core.text import escape
from toolkit.core.variants import VariantName, parse_name
from toolkit.run.variant_wheels import index_documents

FORCE_ENV = "ROCM_BOOTSTRAP_FORCE_GFX_ARCH"
NULL_LABEL = "null"  # variantlib's constants.NULL_VARIANT_LABEL: the non-variant fallback

# stdin: a variants JSON document; stdout: the labels the providers support, best first
_ORDER = (
    "import json, sys; "
    "from variantlib.api import get_variants_by_priority; "
    "from variantlib.variants_json import VariantsJson; "
    "doc = VariantsJson(json.loads(sys.stdin.read())); "
    "print(json.dumps([v.label for v in get_variants_by_priority(variants_json=doc)]))"
)


@dataclass(frozen=True)
class Pick:
    wheel: str | None  # file name, or None: none fits
    label: str | None  # the variant label picked (None: the non-variant wheel, or none)
    order: tuple[str, ...]  # the labels variantlib ordered, best first (``null`` included)
    gpu: str  # what the provider was told, or "detected"


def _python(text: str) -> tuple[int, int]:
    m = re.fullmatch(r"3\.([0-9]{1,2})", text)
    if m is None:
        raise UsageError(f"--python {escape(text)!r}: not a Python version (valid: 3.N, e.g. 3.12)")
    return 3, int(m.group(1))


def _fits(name: VariantName, python: tuple[int, int]) -> bool:
    tags = set(parse_tag(f"{name.py}-{name.abi}-{name.plat}"))
    plats = sorted({t.platform for t in tags})
    supported: set[Tag] = set(cpython_tags(python, platforms=plats))
    supported |= set(compatible_tags(python, platforms=plats))
    return bool(tags & supported)


def variant_order(documents: dict[str, str], gpu: str | None) -> tuple[str, ...]:
    """The labels variantlib orders for the GPU (``None``: the one detected), best first."""
    env = dict(os.environ)
    if gpu is not None:
        env[FORCE_ENV] = gpu
    order: list[str] = []
    for text in documents.values():
        res = run([sys.executable, "-c", _ORDER], env=env, input=text, timeout=300, check=False)
        try:
            labels = json.loads(res.stdout.strip().splitlines()[-1]) if res.ok else None
        except (ValueError, IndexError):
            labels = None
        if not isinstance(labels, list) and gpu is not None and "Unknown GFX target" in res.stderr:
            raise UsageError(f"--gfx {escape(gpu)}: rocm-bootstrap knows no such GPU "
                             f"({escape(res.last_line())})")
        if not isinstance(labels, list):
            raise EnvironmentProblem("variantlib could not order the variants "
                                     f"({escape(res.last_line())})",
                                     hint="install variantlib and rocm-bootstrap")
        order += [lb for lb in labels if isinstance(lb, str) and lb not in order]
    return tuple(order)


def _candidates(folder: Path, python: tuple[int, int]) -> list[VariantName]:
    found = []
    for path in sorted(folder.glob("*.whl")):
        name = parse_name(path.name)
        if name is not None and _version(name) is not None and _fits(name, python):
            found.append(name)
    return found


def _version(name: VariantName) -> Version | None:
    try:
        return Version(name.version)
    except InvalidVersion:
        return None


def _choose(cands: list[VariantName], order: tuple[str, ...]) -> VariantName | None:
    versions = {v for c in cands if (v := _version(c)) is not None}
    for version in sorted(versions, reverse=True):
        same = [c for c in cands if _version(c) == version]
        for label in order:
            hit = [c for c in same if c.label == (None if label == NULL_LABEL else label)]
            if hit:
                return hit[0]
    return None


def pick(folder: Path, gpu: str | None, python_text: str) -> Pick:
    """The wheel under ``folder`` an installer picks for ``gpu`` and Python ``python_text``."""
    if gpu is not None:  # a device reports its processor: gfx90a:xnack- runs as gfx90a
        gpu = gfx.parse_target(gpu).processor  # bad shape: one-line UsageError
    python = _python(python_text)
    if not folder.is_dir():
        raise UsageError(f"{escape(str(folder))}: no such folder (give the folder holding "
                         "the wheels, e.g. dist/<build-id>)")
    cands = _candidates(folder, python)
    documents, _warnings = index_documents(folder)
    order = variant_order(documents, gpu) if documents and cands else ()
    if NULL_LABEL not in order:
        order = (*order, NULL_LABEL)
    chosen = _choose(cands, order)
    shown_gpu = gpu or "detected"
    if chosen is None:
        raise CheckFailed(f"no wheel in {escape(str(folder))} fits GPU {escape(shown_gpu)} and "
                          f"Python {python[0]}.{python[1]} (variants supported, best first: "
                          f"{', '.join(order)})")
    filename = f"{chosen.base}{'-' + chosen.label if chosen.label else ''}.whl"
    return Pick(filename, chosen.label, order, shown_gpu)
