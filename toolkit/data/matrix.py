"""The build matrix: load the TOML data once, validate it, expand it to builds, select.

Data lives in ``toolkit/data`` (override with ``TOOLKIT_DATA_DIR`` or ``load_matrix(path)``):
``gpus.toml`` (families), ``rocm.toml`` (ROCm releases, SDK and torch sources) and one file
per package with a ``[package]`` table. Every validation error names the file, the key and
what is allowed, and raises ``DataError`` (exit 3).

This module is imported by ``noxfile.py``; keep its imports light (``nox -l`` stays fast).
"""

from __future__ import annotations

import fnmatch
import os
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import Any

from toolkit.core.errors import DataError, UsageError, unknown

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

DATA_DIR = Path(__file__).parent
PYTHONS = ("3.8", "3.9", "3.10", "3.11", "3.12", "3.13", "3.13t", "3.14", "3.14t")
SDK_PROVIDERS = ("pip", "system")
SDK_LAYOUTS = ("per-family", "multi-arch")
TORCH_KINDS = ("pytorch", "amd", "therock")
_VERSION = re.compile(r"^[0-9]+(\.[0-9]+){1,2}$")


# ----------------------------------------------------------------------------- data classes
@dataclass(frozen=True)
class GpuFamily:
    name: str
    targets: tuple[str, ...]
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class SdkSource:
    provider: str  # "pip" | "system"
    layout: str | None = None  # pip only: "per-family" | "multi-arch"
    index_url: str | None = None  # pip only
    spec: str | None = None  # pip only: requirement, e.g. rocm[libraries,devel]>1.0,<7.1
    version: str | None = None  # system only: the install expected, e.g. 6.4.3


@dataclass(frozen=True)
class TorchSource:
    torch: str  # "2.8"
    rocm: str
    kind: str  # "pytorch" | "amd" | "therock"
    spec: str
    index_url: str | None = None
    find_links: str | None = None
    per_family: bool = False  # index_url gets "<family>/" appended (TheRock layout)
    note: str | None = None


@dataclass(frozen=True)
class RocmRelease:
    version: str
    hip: str  # major.minor that torch.version.hip and hipcc report
    default_family: str
    sdk: SdkSource
    torch: Mapping[str, TorchSource]


@dataclass(frozen=True)
class PackageVersion:
    package: str
    version: str
    ref: str
    torch: str
    rocm: tuple[str, ...]
    python: tuple[str, ...]
    build_style: str

    @property
    def torch_minor(self) -> str:
        return ".".join(self.torch.split(".")[:2])


@dataclass(frozen=True)
class Package:
    name: str
    dist: str
    repo: str
    recipe: str
    versions: tuple[PackageVersion, ...]
    subdir: str = ""


@dataclass(frozen=True)
class Build:
    """One wheel build: a package version for one (Python, ROCm) pair."""

    package: Package
    pkg_version: PackageVersion
    python: str
    rocm: RocmRelease

    @property
    def version(self) -> str:
        return self.pkg_version.version

    @property
    def cp_tag(self) -> str:
        return python_tag(self.python)

    @property
    def id(self) -> str:
        rocm = "cpu" if self.rocm.version == "cpu" else f"rocm{self.rocm.version}"
        return f"{self.package.name}-{self.version}-{self.cp_tag}-{rocm}"

    @property
    def torch_source(self) -> TorchSource:
        return self.rocm.torch[self.pkg_version.torch_minor]

    @property
    def session(self) -> str:
        return f"build-{self.python}-rocm{self.rocm.version}"

    def as_json(self) -> dict[str, str]:
        return {
            "id": self.id,
            "package": self.package.name,
            "version": self.version,
            "python": self.python,
            "rocm": self.rocm.version,
            "torch": self.pkg_version.torch,
        }


def python_tag(python: str) -> str:
    """``3.12`` -> ``cp312``; ``3.13t`` -> ``cp313t``."""
    threaded = python.endswith("t")
    major, minor = python.rstrip("t").split(".")
    return f"cp{major}{minor}{'t' if threaded else ''}"


def python_sort_key(python: str) -> tuple[int, int, bool]:
    major, minor = python.rstrip("t").split(".")
    return (int(major), int(minor), python.endswith("t"))


def version_sort_key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"[0-9]+", version))


@dataclass(frozen=True)
class Matrix:
    packages: Mapping[str, Package]
    rocm: Mapping[str, RocmRelease]
    families: Mapping[str, GpuFamily]
    extra_targets: tuple[str, ...]
    source: Path
    builds: tuple[Build, ...] = field(default=())

    # ---- GPU targets
    @property
    def family_targets(self) -> dict[str, tuple[str, ...]]:
        out: dict[str, tuple[str, ...]] = {}
        for fam in self.families.values():
            out[fam.name] = fam.targets
            for alias in fam.aliases:
                out[alias] = fam.targets
        return out

    @property
    def known_targets(self) -> tuple[str, ...]:
        seen: dict[str, None] = {}
        for fam in self.families.values():
            seen.update(dict.fromkeys(fam.targets))
        seen.update(dict.fromkeys(self.extra_targets))
        return tuple(seen)

    def expand_gfx(self, tokens: Iterable[str]) -> tuple[str, ...]:
        from toolkit.core.gfx import expand

        return expand(tokens, self.family_targets, self.known_targets)

    # ---- builds and pairs
    def pairs(self) -> list[tuple[str, str]]:
        """Every (Python, ROCm) pair with at least one build, sorted."""
        pairs = {(b.python, b.rocm.version) for b in self.builds}
        return sorted(pairs, key=lambda p: (version_sort_key(p[1]), python_sort_key(p[0])))

    def select(
        self,
        *,
        packages: Iterable[str] = (),
        rocm: Iterable[str] = (),
        python: Iterable[str] = (),
        versions: Iterable[str] = (),
        patterns: Iterable[str] = (),
    ) -> list[Build]:
        """Builds matching every given filter; unknown filter values are ``UsageError``."""
        pkgs = _split(packages)
        rocms = _split(rocm)
        pys = _split(python)
        vers = _split(versions)
        pats = _split(patterns)
        for value in pkgs:
            if value not in self.packages:
                raise unknown("package", value, sorted(self.packages))
        for value in rocms:
            if value not in self.rocm:
                raise unknown("ROCm version", value, sorted(self.rocm, key=version_sort_key))
        all_pys = sorted({b.python for b in self.builds}, key=python_sort_key)
        for value in pys:
            if value not in all_pys:
                raise unknown("Python version", value, all_pys)
        out = [
            b
            for b in self.builds
            if (not pkgs or b.package.name in pkgs)
            and (not rocms or b.rocm.version in rocms)
            and (not pys or b.python in pys)
            and (not vers or b.version in vers)
            and (not pats or any(fnmatch.fnmatchcase(b.id, p) for p in pats))
        ]
        if vers and not out:
            known = sorted({b.version for b in self.builds if not pkgs or b.package.name in pkgs})
            raise unknown("package version", ",".join(vers), known)
        return out

    def build(self, build_id: str) -> Build:
        for b in self.builds:
            if b.id == build_id:
                return b
        close = [b.id for b in self.builds if b.id.split("-")[0] == build_id.split("-")[0]]
        hint = ", ".join(close[:8]) + (" ..." if len(close) > 8 else "")
        raise UsageError(
            f"unknown build id {build_id!r}; ids look like apex-1.8.0-cp312-rocm7.0"
            + (f"; e.g. {hint}" if hint else ""),
            hint="invoke matrix --format json lists every id",
        )

    def pair_builds(self, python: str, rocm: str, packages: Iterable[str] = ()) -> list[Build]:
        """Builds of one (Python, ROCm) pair; an empty pair is a ``UsageError``."""
        if rocm not in self.rocm:
            raise unknown("ROCm version", rocm, sorted(self.rocm, key=version_sort_key))
        in_pair = self.select(python=[python], rocm=[rocm])
        builds = self.select(python=[python], rocm=[rocm], packages=packages)
        if in_pair and not builds:
            names = sorted({b.package.name for b in in_pair})
            raise UsageError(f"package {','.join(_split(packages))} has no build for Python "
                             f"{python} / ROCm {rocm}; this pair builds: {', '.join(names)}")
        if not builds:
            valid = [f"{p}-rocm{r}" for p, r in self.pairs()]
            raise UsageError(f"no package in the matrix builds for Python {python} / ROCm "
                             f"{rocm}; valid pairs: {', '.join(valid)}")
        return builds


def _split(values: Iterable[str] | str) -> list[str]:
    if isinstance(values, str):
        values = [values]
    return [v.strip() for item in values for v in item.split(",") if v.strip()]


# ----------------------------------------------------------------------------- validation
class _Table:
    """A TOML table with its location, for error messages that name file and key."""

    def __init__(self, file: Path, key: str, data: Any) -> None:
        self.file, self.key, self.data = file, key, data
        if not isinstance(data, dict):
            self.fail(key, f"must be a table, got {type(data).__name__}")

    def fail(self, key: str, what: str) -> DataError:
        raise DataError(f"{self.file}: {key}: {what}")

    def _path(self, name: str) -> str:
        return f"{self.key}.{name}" if self.key else name

    def has(self, name: str) -> bool:
        return name in self.data

    def text(self, name: str, *, choices: Iterable[str] | None = None,
            default: str | None = None, pattern: re.Pattern[str] | None = None) -> str:
        value = self.data.get(name, default)
        if value is None:
            self.fail(self._path(name), "missing (a string is required)")
        if not isinstance(value, str) or not value:
            self.fail(self._path(name), f"must be a non-empty string, got {value!r}")
        if choices is not None and value not in choices:
            self.fail(self._path(name), f"{value!r} is not allowed; valid: {', '.join(choices)}")
        if pattern is not None and not pattern.match(value):
            self.fail(self._path(name), f"{value!r} does not look like X.Y[.Z]")
        return str(value)

    def opt(self, name: str) -> str | None:
        return self.text(name) if name in self.data else None

    def texts(self, name: str, *, choices: Iterable[str] | None = None) -> tuple[str, ...]:
        value = self.data.get(name)
        if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
            self.fail(self._path(name), f"must be a non-empty list of strings, got {value!r}")
        if choices is not None:
            allowed = list(choices)
            for v in value:
                if v not in allowed:
                    self.fail(self._path(name), f"{v!r} is not allowed; valid: {', '.join(allowed)}")
        if len(set(value)) != len(value):
            self.fail(self._path(name), f"duplicate entries in {value!r}")
        return tuple(value)

    def table(self, name: str) -> _Table:
        if name not in self.data:
            self.fail(self._path(name), "missing (a table is required)")
        return _Table(self.file, self._path(name), self.data[name])

    def tables(self, name: str) -> list[_Table]:
        value = self.data.get(name)
        if not isinstance(value, list) or not value:
            self.fail(self._path(name), "must be a non-empty array of tables ([[...]])")
        return [_Table(self.file, f"{self._path(name)}[{i}]", v) for i, v in enumerate(value)]

    def items(self) -> list[tuple[str, _Table]]:
        return [(k, _Table(self.file, self._path(f'"{k}"'), v)) for k, v in self.data.items()]

    def url(self, name: str) -> str:
        from toolkit.core.urls import check_index_url

        value = self.text(name)
        try:
            check_index_url(value)
        except UsageError:
            self.fail(self._path(name), f"{value!r} is not an allowed index URL; valid: "
                      "https://..., file://..., or http:// on 127.0.0.1/localhost")
        return value if value.endswith("/") else value + "/"


def _read(path: Path) -> _Table:
    try:
        with path.open("rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        raise DataError(f"{path}: missing data file") from None
    except tomllib.TOMLDecodeError as exc:
        raise DataError(f"{path}: not valid TOML: {exc}") from None
    return _Table(path, "", data)


def _load_families(doc: _Table) -> tuple[dict[str, GpuFamily], tuple[str, ...]]:
    from toolkit.core.gfx import parse_target

    families: dict[str, GpuFamily] = {}
    all_names: set[str] = set()
    for name, table in doc.table("families").items():
        targets = table.texts("targets")
        for t in targets:
            try:
                parse_target(t)
            except UsageError:
                table.fail(f"{table.key}.targets", f"{t!r} is not a gfx id like gfx90a")
        aliases = table.texts("aliases") if table.has("aliases") else ()
        for n in (name, *aliases):
            if n in all_names:
                table.fail(table.key, f"family name {n!r} is defined twice")
            all_names.add(n)
        families[name] = GpuFamily(name, targets, aliases)
    extra = doc.texts("extra_targets") if doc.has("extra_targets") else ()
    return families, extra


def _load_rocm(doc: _Table, families: Mapping[str, GpuFamily]) -> dict[str, RocmRelease]:
    indexes: dict[str, str] = {}
    if doc.has("indexes"):
        idx_table = doc.table("indexes")
        for name in idx_table.data:
            indexes[name] = idx_table.url(name)
    family_names = sorted({n for f in families.values() for n in (f.name, *f.aliases)})
    releases: dict[str, RocmRelease] = {}

    def index_url(table: _Table) -> str:
        if table.has("index_url"):
            return table.url("index_url")
        return indexes[table.text("index", choices=sorted(indexes))]

    for version, rel in doc.table("releases").items():
        if not _VERSION.match(version):
            rel.fail(rel.key, f"{version!r} is not a ROCm version like 6.4 or 6.2.4")
        hip = rel.text("hip", pattern=re.compile(r"^[0-9]+\.[0-9]+$"))
        default_family = rel.text("default_family", choices=family_names)
        sdk_t = rel.table("sdk")
        provider = sdk_t.text("provider", choices=SDK_PROVIDERS)
        if provider == "pip":
            sdk = SdkSource(
                provider, layout=sdk_t.text("layout", choices=SDK_LAYOUTS),
                index_url=index_url(sdk_t), spec=sdk_t.text("spec"),
            )
        else:
            sdk = SdkSource(provider, version=sdk_t.text("version", pattern=_VERSION))
        torches: dict[str, TorchSource] = {}
        for tv, t in rel.table("torch").items():
            if not re.match(r"^[0-9]+\.[0-9]+$", tv):
                t.fail(t.key, f"{tv!r} is not a torch release like 2.8")
            kind = t.text("kind", choices=TORCH_KINDS)
            idx: str | None = None
            links: str | None = None
            if kind == "pytorch":
                idx = t.url("index_url")
                if "download.pytorch.org" in idx and f"rocm{version}" not in idx:
                    t.fail(f"{t.key}.index_url",
                           f"{idx} is not PyTorch's index for ROCm {version} (expected .../rocm{version}/)")
            elif kind == "amd":
                links = t.url("find_links") if t.has("find_links") else None
                idx = t.url("index_url") if t.has("index_url") else None
                if not (links or idx):
                    t.fail(t.key, "kind 'amd' needs find_links or index_url")
            else:
                idx = index_url(t)
            torches[tv] = TorchSource(
                tv, version, kind, t.text("spec"), idx, links,
                per_family=(kind == "therock" and sdk.layout != "multi-arch"),
                note=t.opt("note"),
            )
        releases[version] = RocmRelease(version, hip, default_family, sdk,
                                        MappingProxyType(torches))
    return releases


def _load_package(doc: _Table, rocm: Mapping[str, RocmRelease]) -> Package:
    pkg = doc.table("package")
    name = pkg.text("name")
    rocm_valid = sorted(rocm, key=version_sort_key)
    versions: list[PackageVersion] = []
    for vt in doc.tables("versions"):
        pv = PackageVersion(
            package=name,
            version=vt.text("version", pattern=_VERSION),
            ref=vt.text("ref"),
            torch=vt.text("torch", pattern=_VERSION),
            rocm=vt.texts("rocm", choices=rocm_valid),
            python=vt.texts("python", choices=PYTHONS),
            build_style=vt.text("build_style"),
        )
        for r in pv.rocm:
            if pv.torch_minor not in rocm[r].torch:
                vt.fail(f"{vt.key}.rocm", f"ROCm {r} has no torch {pv.torch_minor} source in "
                        f"rocm.toml; it has: {', '.join(rocm[r].torch) or 'none'}")
        if any(v.version == pv.version for v in versions):
            vt.fail(f"{vt.key}.version", f"{pv.version} is listed twice")
        versions.append(pv)
    return Package(name, pkg.text("dist"), pkg.text("repo"), pkg.text("recipe"),
                   tuple(versions), pkg.opt("subdir") or "")


@cache
def _load(data_dir: Path) -> Matrix:
    families, extra = _load_families(_read(data_dir / "gpus.toml"))
    rocm = _load_rocm(_read(data_dir / "rocm.toml"), families)
    packages: dict[str, Package] = {}
    for path in sorted(data_dir.glob("*.toml")):
        if path.name in {"gpus.toml", "rocm.toml"}:
            continue
        doc = _read(path)
        if not doc.has("package"):  # other data (e.g. CI trigger rules) lives beside packages
            continue
        package = _load_package(doc, rocm)
        if package.name in packages:
            raise DataError(f"{path}: package.name: {package.name!r} is defined twice")
        packages[package.name] = package
    builds = tuple(
        Build(p, pv, py, rocm[r])
        for p in packages.values()
        for pv in p.versions
        for r in pv.rocm
        for py in pv.python
    )
    return Matrix(MappingProxyType(packages), MappingProxyType(rocm),
                  MappingProxyType(families), extra, data_dir, builds)


def data_dir() -> Path:
    return Path(os.environ.get("TOOLKIT_DATA_DIR") or DATA_DIR).resolve()


def load_matrix(path: str | os.PathLike[str] | None = None) -> Matrix:
    """The validated matrix (cached per folder)."""
    folder = Path(path).resolve() if path is not None else data_dir()
    if not folder.is_dir():
        raise DataError(f"{folder}: matrix data folder does not exist")
    return _load(folder)
