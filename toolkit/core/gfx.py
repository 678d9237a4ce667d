"""GPU target ids (``gfx90a``, ``gfx90a:xnack+``, ``gfx908:sramecc-:xnack-``) and families.

A target id is a processor plus optional features, each ``+`` (on), ``-`` (off); a feature
that is absent means "any". Code built for a target id runs on a device when the processor
is the same and every feature the code fixes matches the device's setting: ``gfx90a`` code
runs on ``gfx90a:xnack+`` and ``gfx90a:xnack-``; ``gfx90a:xnack+`` code does not run on
``gfx90a:xnack-`` (nor on a device whose xnack setting is unknown).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from toolkit.core.errors import UsageError, suggestion
from toolkit.core.text import quoted

_PROCESSOR = re.compile(r"^gfx[0-9]{2,4}[a-z]?$")
_FEATURE = re.compile(r"^(sramecc|xnack)([+-])$")


@dataclass(frozen=True, order=True)
class TargetId:
    processor: str
    features: tuple[tuple[str, bool], ...] = field(default=())

    @property
    def feature_map(self) -> dict[str, bool]:
        return dict(self.features)

    def __str__(self) -> str:
        return self.processor + "".join(
            f":{name}{'+' if on else '-'}" for name, on in self.features
        )


def parse_target(text: str) -> TargetId:
    """Parse ``gfx90a:xnack+``; raise ``UsageError`` for anything else."""
    parts = text.strip().split(":")
    processor = parts[0]
    if not _PROCESSOR.match(processor):
        raise UsageError(f"bad gfx target id {quoted(text)}: expected gfxNNN[:feature±], e.g. "
                         "gfx90a:xnack+")
    feats: dict[str, bool] = {}
    for part in parts[1:]:
        m = _FEATURE.match(part)
        if not m or m.group(1) in feats:
            raise UsageError(
                f"bad feature {quoted(part)} in gfx target id {quoted(text)}: expected "
                "sramecc+/- or xnack+/-"
            )
        feats[m.group(1)] = m.group(2) == "+"
    return TargetId(processor, tuple(sorted(feats.items())))


def runs_on(code: TargetId, device: TargetId) -> bool:
    """True when code built for ``code`` can run on a device described by ``device``."""
    if code.processor != device.processor:
        return False
    dev = device.feature_map
    return all(dev.get(name) == on for name, on in code.features)




def split_tokens(tokens: Iterable[str]) -> list[str]:
    """``["gfx90a,gfx908", "gfx942;gfx950 x"]`` -> each word once split on ``,``, ``;``, space."""
    return [w for t in tokens for w in re.split(r"[,;\s]+", t) if w]


def expand(
    tokens: Iterable[str],
    families: Mapping[str, tuple[str, ...]],
    known: Iterable[str],
    *,
    accept_unknown: bool = False,
) -> tuple[str, ...]:
    """Expand gfx ids and family names (comma/semicolon separated tokens allowed).

    Unknown processors and family names raise ``UsageError`` listing the valid ones; with
    ``accept_unknown`` a well-formed id of a processor no family lists is kept (see
    :func:`unknown_processors` to warn about it). Order is kept; duplicates are dropped. An
    empty result is an error.
    """
    known_set = set(known)
    out: list[str] = []
    for raw in split_tokens(tokens):
        if raw in families:
            items: tuple[str, ...] = families[raw]
        else:
            if not raw.startswith("gfx") or (
                not accept_unknown
                and _PROCESSOR.match(raw.split(":")[0])
                and raw.split(":")[0] not in known_set
            ):
                raise UsageError(
                    f"unknown gfx target or family {raw!r}; valid targets: "
                    f"{', '.join(sorted(known_set, key=_sort_key))}; "
                    f"valid families: {', '.join(sorted(families))}",
                    nearest=suggestion(raw, [*known_set, *families]),
                )
            items = (str(parse_target(raw)),)
        for item in items:
            if item not in out:
                out.append(item)
    if not out:
        raise UsageError("empty gfx target list; give at least one gfx id or family name")
    return tuple(out)


def unknown_processors(targets: Iterable[str], known: Iterable[str]) -> list[str]:
    """The processors of ``targets`` that no family (nor ``extra_targets``) lists."""
    known_set = set(known)
    out: list[str] = []
    for t in targets:
        proc = t.split(":")[0]
        if proc not in known_set and proc not in out:
            out.append(proc)
    return out


def sort_key(target: str) -> tuple[int, int, int, str]:
    """Order gfx ids by family then number: gfx900 < gfx90a < gfx942 < gfx1030 < gfx1100."""
    return (*_sort_key(target), target)


def _sort_key(target: str) -> tuple[int, int, int]:
    """gfx ids are <major><minor><stepping (hex)>: gfx90a = 9.0.10, gfx1030 = 10.3.0."""
    name = target.split(":")[0].removeprefix("gfx")
    try:
        return (int(name[:-2]), int(name[-2], 16), int(name[-1], 16))
    except ValueError:
        return (0, 0, 0)


def rocm_arch_value(targets: Iterable[str]) -> str:
    """``PYTORCH_ROCM_ARCH`` value: ``;``-joined (what CMake and torch both accept)."""
    value = ";".join(targets)
    if not value:
        raise UsageError("PYTORCH_ROCM_ARCH would be empty; give at least one gfx target")
    return value
