"""The GitHub Actions matrix: which builds run for which trigger, on which runners.

The rules are data (``toolkit/data/ci.toml``, beside the matrix data), validated on load with
messages that name the file, the key and what is allowed (``DataError``, exit 3). Selection is
positive: every entry is there because a trigger rule says it runs and no known failure
selects it; nothing else is excluded.

One entry is one build (package version x Python x ROCm) for one GPU family: the family gives
the gfx targets, the per-family SDK index (``--family``) and the GPU runner class that tests the
wheel. Known failures (``known_failures.toml``) are never selected, unless a re-trying
trigger asks for them (``--include-known-failures``). ``github_matrix()`` is pure: the same
data always gives the same entries, in matrix order.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from packaging.version import Version

from toolkit.core.errors import UsageError, unknown
from toolkit.data import known
from toolkit.data.matrix import Build, Matrix, python_sort_key
from toolkit.data.schema import check, fail, read_toml
from toolkit.data.specs import CI

CI_FILE = "ci.toml"


@dataclass(frozen=True)
class TriggerRule:
    event: str
    python: str  # "newest" | "all"
    families: str  # "default" | "requested" | "all"
    versions: str = "all"  # "newest": per package and build style, its newest version only
    variants: bool = False  # also build and publish one wheel variant per gfx target


@dataclass(frozen=True)
class GpuRunner:
    """A class of GPU machines: its runner label, the gfx target it carries, its families."""

    name: str
    label: str
    gfx: str
    families: tuple[str, ...]


@dataclass(frozen=True)
class CiConfig:
    triggers: Mapping[str, TriggerRule]
    build_runner: str
    test_runners: tuple[GpuRunner, ...]
    source: Path

    def runner_for(self, family: str) -> GpuRunner:
        for runner in self.test_runners:
            if family in runner.families:
                return runner
        raise unknown("GPU family for CI", family, self.families)

    @property
    def families(self) -> list[str]:
        """The families CI can build for: those some test runner class can test."""
        return sorted(f for r in self.test_runners for f in r.families)


@dataclass(frozen=True)
class CiEntry:
    build: Build
    family: str
    gfx: tuple[str, ...]
    runner: str
    test_runner: GpuRunner
    known_failure: str = ""  # the known_failures.toml entry it re-tries ("" for most)
    variants: bool = False  # the build also publishes a wheel variant per target (--variants)

    @property
    def artifact(self) -> str:
        """Unique per entry: the build id plus the family (a build may run for several)."""
        return f"{self.build.id}-{self.family}"

    def as_json(self) -> dict[str, str]:
        b = self.build
        return {
            "id": b.id,
            "artifact": self.artifact,
            "package": b.package.name,
            "version": b.version,
            "python": b.python,
            "rocm": b.rocm.version,
            "torch": b.pkg_version.torch,
            "session": b.session,
            "family": self.family,
            "families": self.family,
            # --family for the SDK: a legacy per-family pip index only (multi-arch refuses it;
            # a system release's per-family channel is not its default)
            "sdk_family": self.family if b.rocm.sdk.provider == "pip"
            and b.rocm.sdk.layout == "per-family" else "",
            "gfx": ",".join(self.gfx),
            "runner": self.runner,
            "test_runner": self.test_runner.label,
            "test_gfx": self.test_runner.gfx,
            # the build session takes --include-known-failures when this is not empty
            "known_failure": self.known_failure,
            # the build session takes --variants when this is not empty
            "variants": "true" if self.variants else "",
        }


# ----------------------------------------------------------------------------- loading
def load_ci(matrix: Matrix, path: str | Path | None = None) -> CiConfig:
    """Read and validate ``ci.toml`` (default: beside the matrix data) against ``matrix``."""
    file = Path(path) if path is not None else matrix.source / CI_FILE
    doc = read_toml(file)
    check(CI, doc, file, {"families": sorted(matrix.family_targets)})
    triggers = {event: TriggerRule(event, rule["python"], rule["families"],
                                   rule.get("versions", "all"), rule.get("variants", False))
                for event, rule in doc["triggers"].items()}
    targets = matrix.family_targets
    tests: list[GpuRunner] = []
    claimed: dict[str, str] = {}
    for name, t in doc["runners"]["test"].items():
        where = f'runners.test."{name}"'
        for fam in t["families"]:
            if fam in claimed:
                fail(file, f"{where}.families", f"{fam!r} is already tested by runner class "
                     f"{claimed[fam]!r}; a family belongs to one class")
            claimed[fam] = name
            if t["gfx"] not in targets[fam]:
                fail(file, f"{where}.gfx", f"{t['gfx']!r} is not a target of family {fam!r}; "
                     f"valid: {', '.join(targets[fam])}")
        tests.append(GpuRunner(name, t["label"], t["gfx"], tuple(t["families"])))
    config = CiConfig(MappingProxyType(triggers), doc["runners"]["build"], tuple(tests), file)
    for rel in matrix.rocm.values():
        if rel.default_family not in claimed:
            fail(file, "runners.test", f"ROCm {rel.version}'s default family "
                 f"{rel.default_family!r} has no test runner class; families with one: "
                 f"{', '.join(config.families)}")
    return config


# ----------------------------------------------------------------------------- selection
def _families(values: Iterable[str] | str) -> list[str]:
    items = [values] if isinstance(values, str) else list(values)
    out: list[str] = []
    for item in items:
        for v in item.replace(";", ",").split(","):
            v = v.strip()
            if v and v not in out:
                out.append(v)
    return out


def _newest_pythons(builds: Sequence[Build]) -> set[tuple[str, str, str, str]]:
    """(package, version, ROCm, python): per package version and ROCm release, the newest
    Python among ``builds`` that is not free-threaded."""
    newest: dict[tuple[str, str, str], str] = {}
    for b in builds:
        if b.python.endswith("t"):
            continue
        key = (b.package.name, b.version, b.rocm.version)
        if key not in newest or python_sort_key(b.python) > python_sort_key(newest[key]):
            newest[key] = b.python
    return {(*key, py) for key, py in newest.items()}


def _newest_versions(builds: Sequence[Build]) -> set[tuple[str, Version]]:
    """(package, version): per package and build style (each recipe path), the newest version
    among ``builds`` by PEP 440 (1.10 after 1.9; 1.4 and 1.4.0 are one version); a new release
    moves it without any edit."""
    newest: dict[tuple[str, str], Version] = {}
    for b in builds:
        key = (b.package.name, b.pkg_version.build_style)
        version = Version(b.version)
        if key not in newest or version > newest[key]:
            newest[key] = version
    return {(pkg, v) for (pkg, _style), v in newest.items()}


def github_matrix(
    matrix: Matrix,
    config: CiConfig,
    trigger: str,
    *,
    families: Iterable[str] | str = (),
    builds: Sequence[Build] | None = None,
    include_known_failures: bool = False,
) -> list[CiEntry]:
    """The entries to run for ``trigger`` (``builds`` narrows the matrix first). Known
    failures (``toolkit.data.known``) are left out unless ``include_known_failures``, which
    only the re-trying triggers take."""
    if trigger not in config.triggers:
        raise unknown("trigger", trigger, list(config.triggers))
    known.check_trigger(trigger, include_known_failures)
    rule = config.triggers[trigger]
    wanted = _families(families)
    _check_families(config, trigger, rule, wanted)
    pool = _pool(list(matrix.builds if builds is None else builds), rule)
    entries: list[CiEntry] = []
    for b in pool:
        # a family within the release's era: its members that release's compilers build
        # (a requested family that era does not know is no entry for that release)
        targets = matrix.release_families(b.rocm)
        for fam in wanted or _rule_families(config, rule, b, targets):
            if fam not in targets:
                continue
            failing = known.for_build(matrix.known_failures, b, targets[fam])
            if failing and not include_known_failures:
                continue
            entries.append(CiEntry(b, fam, targets[fam], config.build_runner,
                                   config.runner_for(fam), ",".join(e.id for e in failing),
                                   # a variant per target: only where there are several
                                   variants=rule.variants and len(targets[fam]) > 1))
    return entries


def _check_families(config: CiConfig, trigger: str, rule: TriggerRule, wanted: list[str]) -> None:
    """Requested families: only for a trigger that takes them, and each one CI knows."""
    if wanted and rule.families == "default":
        requested = [t for t, r in config.triggers.items() if r.families != "default"]
        raise UsageError(
            f"trigger {trigger!r} builds each ROCm release's default family only "
            f"({config.source.name}: triggers.{trigger}.families = 'default'); --families "
            f"applies to: {', '.join(requested) or 'no trigger'}")
    for fam in wanted:
        if fam not in config.families:
            raise unknown("GPU family for CI", fam, config.families)


def _pool(pool: list[Build], rule: TriggerRule) -> list[Build]:
    """The builds a rule runs: the newest versions, the newest Pythons, when it says so."""
    if rule.versions == "newest":
        latest = _newest_versions(pool)
        pool = [b for b in pool if (b.package.name, Version(b.version)) in latest]
    if rule.python == "newest":
        keep = _newest_pythons(pool)
        pool = [b for b in pool if (b.package.name, b.version, b.rocm.version, b.python) in keep]
    return pool


def _rule_families(config: CiConfig, rule: TriggerRule, build: Build,
                   targets: Mapping[str, tuple[str, ...]]) -> list[str]:
    """The families a rule builds ``build`` for when none are requested: the release's
    default family, or ("all") one family per GPU runner class, the first of the class's
    families (ci.toml order) that the release builds: within its era and, for a per-family SDK
    index, one the index served (rocm.toml ``families``)."""
    if rule.families != "all":
        return [build.rocm.default_family]
    served = build.rocm.families
    out: list[str] = []
    for runner in config.test_runners:
        fam = next((f for f in runner.families
                    if f in targets and (not served or f in served)), None)
        if fam is not None:
            out.append(fam)
    return out


# GitHub Actions: "A matrix can generate a maximum of 256 jobs per workflow run"
# (docs.github.com, "Running variations of jobs in a workflow"); the workflow runs one
# reusable-workflow call per shard, each with its own matrix.
MAX_MATRIX_JOBS = 256


def github_shards(entries: Sequence[CiEntry], size: int = MAX_MATRIX_JOBS) -> list[dict[str, Any]]:
    """``github_json`` cut into matrices of at most ``size`` entries, in order, as even as
    possible (a nightly of 300 entries: 150 + 150, not 256 + 44)."""
    if size < 1:
        raise UsageError(f"bad shard size {size}: expected 1 or more")
    every = github_json(entries)["include"]
    count = -(-len(every) // size)
    base, extra = divmod(len(every), count)
    out: list[dict[str, Any]] = []
    start = 0
    for i in range(count):
        end = start + base + (1 if i < extra else 0)
        out.append({"include": every[start:end]})
        start = end
    return out


def github_json(entries: Sequence[CiEntry]) -> dict[str, Any]:
    """``{"include": [...]}``, the shape ``strategy.matrix: ${{ fromJSON(...) }}`` takes."""
    if not entries:
        raise UsageError("no build matches these filters; GitHub rejects an empty matrix",
                         hint="invoke matrix --format json lists every build")
    return {"include": [e.as_json() for e in entries]}
