"""gpus.toml: GPU families (TheRock's names) and the release eras (the gfx ids the compilers of
a ROCm release build), loaded and checked (schema ``toolkit.data.specs.GPUS``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from toolkit.data.schema import check, fail, read_toml
from toolkit.data.specs import GPUS


@dataclass(frozen=True)
class GpuFamily:
    name: str
    targets: tuple[str, ...]
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class GpuEra:
    """The gfx ids the compilers of a release era build (gpus.toml ``[eras.<name>]``)."""

    name: str
    targets: tuple[str, ...]  # TheRock's target list then (a device package each, multi-arch)
    extra_targets: tuple[str, ...] = ()  # the compilers accept them; no family lists them
    evidence: str = ""

    @property
    def all_targets(self) -> tuple[str, ...]:
        return (*self.targets, *self.extra_targets)


def load_gpus(file: Path) -> tuple[dict[str, GpuFamily], dict[str, GpuEra]]:
    doc = read_toml(file)
    check(GPUS, doc, file)
    families: dict[str, GpuFamily] = {}
    seen: set[str] = set()
    for name, table in doc["families"].items():
        aliases = tuple(table.get("aliases", ()))
        for n in (name, *aliases):
            if n in seen:
                fail(file, f'families."{name}"', f"family name {n!r} is defined twice")
            seen.add(n)
        families[name] = GpuFamily(name, tuple(table["targets"]), aliases)
    eras = {name: GpuEra(name, tuple(t["targets"]), tuple(t.get("extra_targets", ())),
                         t["evidence"]) for name, t in doc["eras"].items()}
    for era in eras.values():
        both = set(era.targets) & set(era.extra_targets)
        if both:
            fail(file, f'eras."{era.name}".extra_targets',
                 f"{', '.join(sorted(both))} also in targets (extra targets are the ones no "
                 "family lists)")
    return families, eras


def family_names(families: Mapping[str, GpuFamily]) -> list[str]:
    return sorted({n for f in families.values() for n in (f.name, *f.aliases)})
