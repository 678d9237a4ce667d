"""The build matrix: load the TOML data once, validate it, expand it to builds, select.

Data lives in ``toolkit/data`` (override with ``TOOLKIT_DATA_DIR`` or ``load_matrix(path)``):
``gpus.toml`` (families), ``rocm.toml`` (ROCm releases, SDK and torch sources), ``ci.toml``
(CI rules) and one file per package, ``<name>.toml`` with ``[package]`` and ``[[versions]]``.
Every table is strict (schemas in ``toolkit.data.specs``): an unknown key, a wrong type, a
missing key or a value outside its closed set raises ``DataError`` (exit 3) naming the file,
the key path and what is allowed.

This module is imported by ``noxfile.py``; keep its imports light (``nox -l`` stays fast).
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import Any

from toolkit.core.errors import DataError, UsageError, nearest, unknown
from toolkit.core.text import quoted
from toolkit.core.versions import rocm_label, version_sort_key
from toolkit.data import known
from toolkit.data import waiting as awaiting
from toolkit.data.gpus import GpuEra, GpuFamily, family_names, load_gpus
from toolkit.data.known import KnownFailure
from toolkit.data.releases import ReleaseLine as ReleaseLine
from toolkit.data.releases import RocmRelease as RocmRelease
from toolkit.data.releases import SdkSource as SdkSource
from toolkit.data.releases import TorchSource as TorchSource
from toolkit.data.releases import load_rocm
from toolkit.data.schema import check, fail, read_toml
from toolkit.data.specs import CI, RESERVED_FILES, VERSION_FIELDS, RecipeData, package_spec

DATA_DIR = Path(__file__).parent
# ReleaseLine, RocmRelease, SdkSource, TorchSource: re-exported from toolkit.data.releases


# ----------------------------------------------------------------------------- data classes
@dataclass(frozen=True)
class PackageVersion:
    package: str
    version: str
    ref: str
    torch: str
    rocm: tuple[str, ...]
    python: tuple[str, ...]
    build_style: str
    evidence: str = ""  # where upstream says so: "<owner>/<repo>@<commit> <file>"
    # gfx targets without --gfx, by the first ROCm major they apply from ("6", "7")
    default_targets: Mapping[str, tuple[str, ...]] = field(
        default_factory=lambda: MappingProxyType({}))
    submodules: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))  # path -> URL
    # the keys its recipe adds to a version (fbgemm_gpu's ``tbb``), as the data has them: read
    # by that recipe only (``toolkit.plan.recipes``), checked by its spec on load
    recipe_data: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    # a project outside the matrix (``--source``): what its build backend asks for
    build_requires: tuple[str, ...] = ()
    waiting: str = ""  # why ``rocm`` is empty (toolkit.data.waiting); "" for a version with builds
    # one py_limited_api wheel serves every Python of ``python``: the tag of the oldest
    # CPython whose stable ABI it uses ("cp39"); "" for a wheel per Python
    abi3: str = ""

    @property
    def torch_minor(self) -> str:
        return ".".join(self.torch.split(".")[:2])

    def targets_for(self, rocm: str) -> tuple[str, ...]:
        """The version's own default targets on ROCm ``rocm`` (empty: none recorded, or no
        ROCm at all: the sample's CPU variant, ``cpu``)."""
        if not rocm.split(".")[0].isdigit():
            return ()
        major = int(rocm.split(".")[0])
        keys = sorted((int(k) for k in self.default_targets if int(k) <= major), reverse=True)
        return self.default_targets[str(keys[0])] if keys else ()


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
    """One wheel build: a package version for one (Python, ROCm) pair. An abi3 version's one
    wheel serves several Pythons (``serves``); ``python`` is the one that builds it."""

    package: Package
    pkg_version: PackageVersion
    python: str
    rocm: RocmRelease
    serves: tuple[str, ...] = ()  # the Pythons the one abi3 wheel serves; () = ``python`` only

    @property
    def version(self) -> str:
        return self.pkg_version.version

    @property
    def cp_tag(self) -> str:
        """The building Python's tag (``cp312``)."""
        return python_tag(self.python)

    @property
    def wheel_tag(self) -> str:
        """The wheel's Python and ABI tags as the id names them: ``cp312``, or ``cp39-abi3``."""
        return f"{self.pkg_version.abi3}-abi3" if self.pkg_version.abi3 else self.cp_tag

    @property
    def pythons(self) -> tuple[str, ...]:
        """Every Python the build's wheel serves."""
        return self.serves or (self.python,)

    @property
    def id(self) -> str:
        return (f"{self.package.name}-{self.version}-{self.wheel_tag}-"
                f"{rocm_label(self.rocm.version)}")

    @property
    def torch_source(self) -> TorchSource:
        return self.rocm.torch[self.pkg_version.torch_minor]

    @property
    def session(self) -> str:
        return f"build-{self.python}-rocm{self.rocm.version}"

    def as_json(self) -> dict[str, str | list[str]]:
        return {
            "id": self.id,
            "package": self.package.name,
            "version": self.version,
            "python": self.python,
            "rocm": self.rocm.version,
            "torch": self.pkg_version.torch,
            **({"abi3": self.pkg_version.abi3, "serves": list(self.pythons)}
               if self.pkg_version.abi3 else {}),
        }


def _selected(b: Build, pkgs: list[str], rocms: list[str], pys: list[str], vers: list[str],
              pats: list[str]) -> bool:
    """Does ``b`` match every given filter (an empty one matches all)?"""
    return ((not pkgs or b.package.name in pkgs)
            and (not rocms or b.rocm.version in rocms)
            and (not pys or any(py in pys for py in b.pythons))
            and (not vers or b.version in vers)
            and (not pats or any(fnmatch.fnmatchcase(b.id, p) for p in pats)))


def python_tag(python: str) -> str:
    """``3.12`` -> ``cp312``; ``3.13t`` -> ``cp313t``."""
    threaded = python.endswith("t")
    major, minor = python.rstrip("t").split(".")
    return f"cp{major}{minor}{'t' if threaded else ''}"


def python_sort_key(python: str) -> tuple[int, int, bool]:
    major, minor = python.rstrip("t").split(".")
    return (int(major), int(minor), python.endswith("t"))


@dataclass(frozen=True)
class Matrix:
    packages: Mapping[str, Package]
    rocm: Mapping[str, RocmRelease]
    families: Mapping[str, GpuFamily]
    eras: Mapping[str, GpuEra]
    source: Path
    builds: tuple[Build, ...] = field(default=())
    # known_failures.toml (toolkit.data.known): builds upstream says fail, with the evidence
    known_failures: tuple[KnownFailure, ...] = field(default=())

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
        for era in self.eras.values():
            seen.update(dict.fromkeys(era.all_targets))
        return tuple(seen)

    @property
    def extra_targets(self) -> tuple[str, ...]:
        """gfx ids no family lists (compilers of some era accept them)."""
        listed = {t for fam in self.families.values() for t in fam.targets}
        return tuple(t for t in self.known_targets if t not in listed)

    def release_families(self, release: RocmRelease) -> dict[str, tuple[str, ...]]:
        """Family names (and aliases) valid for ``release``: each with its members that the
        release's compilers build (a family's members only grew over time); without a
        recorded era, every family as gpus.toml lists it."""
        if release.era is None:
            return self.family_targets
        built = set(release.era.targets)
        out: dict[str, tuple[str, ...]] = {}
        for name, members in self.family_targets.items():
            kept = tuple(t for t in members if t in built)
            if kept:
                out[name] = kept
        return out

    def expand_gfx(self, tokens: Iterable[str]) -> tuple[str, ...]:
        from toolkit.core.gfx import expand

        return expand(tokens, self.family_targets, self.known_targets)

    # ---- builds and pairs
    def pairs(self) -> list[tuple[str, str]]:
        """Every (Python, ROCm) pair that builds at least one wheel, sorted."""
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
        """Builds matching every given filter (``python``: a Python the wheel serves); unknown
        filter values are ``UsageError``."""
        pkgs = _split(packages)
        rocms = _split(rocm)
        pys = _split(python)
        vers = _split(versions)
        pats = _split(patterns)
        self._check_filters(pkgs, rocms, pys)
        out = [b for b in self.builds if _selected(b, pkgs, rocms, pys, vers, pats)]
        if vers and not out:
            awaiting.refuse(self, versions=vers, packages=pkgs)
            known = sorted({b.version for b in self.builds if not pkgs or b.package.name in pkgs})
            raise unknown("package version", ",".join(vers), known)
        return out

    def _check_filters(self, pkgs: list[str], rocms: list[str], pys: list[str]) -> None:
        """Every filter value names a package, ROCm release or Python of the matrix."""
        for value in pkgs:
            if value not in self.packages:
                raise unknown("package", value, sorted(self.packages))
        for value in rocms:
            if value not in self.rocm:
                raise unknown("ROCm version", value, sorted(self.rocm, key=version_sort_key))
        all_pys = sorted({py for b in self.builds for py in b.pythons}, key=python_sort_key)
        for value in pys:
            if value not in all_pys:
                raise unknown("Python version", value, all_pys)

    def build(self, build_id: str) -> Build:
        for b in self.builds:
            if b.id == build_id:
                return b
        awaiting.refuse(self, build_id=build_id)
        ids = [b.id for b in self.builds]
        close = nearest(build_id, ids)
        shown = (f"nearest: {', '.join(close)}" if close
                 else f"ids look like {ids[0] if ids else 'PACKAGE-VERSION-cpXY-rocmX.Y'}")
        raise UsageError(f"unknown build id {quoted(build_id)}; {shown}",
                         hint="invoke matrix --format json lists every id")

    def pair_builds(self, python: str, rocm: str, packages: Iterable[str] = ()) -> list[Build]:
        """Builds of one (Python, ROCm) pair, the session ``build-<python>-rocm<rocm>``: those
        that Python builds (an abi3 wheel is built once, by the newest Python it serves); an
        empty pair is a ``UsageError``."""
        if rocm not in self.rocm:
            raise unknown("ROCm version", rocm, sorted(self.rocm, key=version_sort_key))
        in_pair = [b for b in self.select(python=[python], rocm=[rocm]) if b.python == python]
        builds = [b for b in self.select(python=[python], rocm=[rocm], packages=packages)
                  if b.python == python]
        served = [b for b in self.select(python=[python], rocm=[rocm], packages=packages)
                  if b.python != python]
        if served and not builds:  # an abi3 wheel serving this Python: another session builds it
            b = served[0]
            raise UsageError(f"{b.package.name} {b.version}'s one {b.wheel_tag} wheel for Python "
                             f"{', '.join(b.pythons)} on ROCm {rocm} is built once, by "
                             f"Python {b.python}: nox -s {b.session}")
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


# ----------------------------------------------------------------------------- loading
# The schemas (toolkit.data.specs) check each file's shape, types and closed sets; what is
# left here (and in toolkit.data.releases, for rocm.toml) are the rules across entries and files.
Recipes = tuple[tuple[str, RecipeData], ...]  # (recipe, its data's closed sets), hashable


def _load_package(file: Path, rocm: Mapping[str, RocmRelease], recipes: Recipes | None) -> Package:
    from packaging.version import Version  # not at import: noxfile.py imports this module

    doc = _checked_package_doc(file, rocm, recipes)
    pkg = doc["package"]
    versions: list[PackageVersion] = []
    seen: dict[Version, str] = {}  # PEP 440: 1.4 is 1.4.0, 01.10 is 1.10 (one wheel version)
    for i, vt in enumerate(doc["versions"]):
        pv = _package_version(pkg["name"], vt)
        awaiting.check(file, i, pv)
        _check_abi3(file, i, pv)
        _check_torch_served(file, i, pv, rocm)
        key = Version(pv.version)
        if key in seen:
            first = seen[key]
            also = f" (as {first}: the same version by PEP 440)" if first != pv.version else ""
            fail(file, f"versions[{i}].version", f"{pv.version} is listed twice{also}")
        seen[key] = pv.version
        versions.append(pv)
    return Package(pkg["name"], pkg["dist"], pkg["repo"], pkg["recipe"], tuple(versions),
                   pkg.get("subdir", ""))


def _checked_package_doc(file: Path, rocm: Mapping[str, RocmRelease],
                         recipes: Recipes | None) -> dict[str, Any]:
    """The package file, checked against the package spec (with its recipe's own version
    keys when the recipes are known)."""
    doc = read_toml(file)
    header = doc.get("package")
    recipe = header.get("recipe") if isinstance(header, dict) else None
    refs: dict[str, Sequence[str]] = {"name": [file.stem],
                                      "rocm": sorted(rocm, key=version_sort_key)}
    known: RecipeData | None = None
    if recipes is not None:
        by_name = dict(recipes)
        known = by_name.get(recipe) if isinstance(recipe, str) else None
        refs["recipes"] = list(by_name)
        refs["build_styles"] = known.build_styles if known else ()
    check(package_spec(known), _without_recipe_keys(doc) if recipes is None else doc, file, refs)
    return doc


def _package_version(name: str, vt: Mapping[str, Any]) -> PackageVersion:
    """One checked ``[[versions]]`` table; the keys its recipe adds go to ``recipe_data``."""
    return PackageVersion(
        name, vt["version"], vt["ref"], vt["torch"], tuple(vt["rocm"]),
        tuple(vt["python"]), vt["build_style"], vt["evidence"],
        MappingProxyType({k: tuple(v) for k, v in vt.get("default_targets", {}).items()}),
        MappingProxyType(dict(vt.get("submodules", {}))),
        waiting=vt.get("waiting", ""), abi3=vt.get("abi3", ""),
        recipe_data=MappingProxyType({k: v for k, v in vt.items() if k not in VERSION_FIELDS}))


def _check_abi3(file: Path, i: int, pv: PackageVersion) -> None:
    """An abi3 wheel serves only Pythons at or after its stable ABI's, none free-threaded
    (PEP 384's stable ABI is not that of free-threaded builds: PEP 703)."""
    if not pv.abi3:
        return
    oldest = (3, int(pv.abi3.removeprefix("cp3")))
    for py in pv.python:
        if py.endswith("t"):
            fail(file, f"versions[{i}].python", f"{py} is a free-threaded Python; an abi3 wheel "
                 f"({pv.abi3}-abi3) cannot serve it (no stable ABI there): list it without abi3 "
                 "in a version of its own")
        if python_sort_key(py)[:2] < oldest:
            fail(file, f"versions[{i}].python", f"{py} is older than the stable ABI the wheel "
                 f"is tagged for ({pv.abi3}-abi3 serves Python {oldest[0]}.{oldest[1]} and "
                 "newer)")


def _version_builds(p: Package, pv: PackageVersion,
                    rocm: Mapping[str, RocmRelease]) -> Iterable[Build]:
    """The builds of one version: a wheel per (ROCm, Python) its torch serves; an abi3
    version's one wheel per ROCm, built by the newest Python it serves (CI's ``newest`` rule
    builds it on a pull request; the tag's stable ABI, not the building Python, decides what
    the wheel may use, and the check audits it)."""
    for r in pv.rocm:
        # a torch source that lists its Pythons (TheRock's) limits the version's Pythons there
        pys = sorted((py for py in pv.python
                      if not pv.torch or rocm[r].torch[pv.torch_minor].serves(py)),
                     key=python_sort_key)
        if pv.abi3 and pys:
            yield Build(p, pv, pys[-1], rocm[r], serves=tuple(pys))
            continue
        yield from (Build(p, pv, py, rocm[r]) for py in pv.python if py in pys)


def _check_torch_served(file: Path, i: int, pv: PackageVersion,
                        rocm: Mapping[str, RocmRelease]) -> None:
    """Each ROCm release of ``pv`` has its torch, published for one of its Pythons."""
    for r in pv.rocm:
        if pv.torch_minor not in rocm[r].torch:
            fail(file, f"versions[{i}].rocm", f"ROCm {r} has no torch {pv.torch_minor} "
                 f"source in rocm.toml; it has: {', '.join(rocm[r].torch) or 'none'}")
        served = rocm[r].torch[pv.torch_minor].python
        if pv.torch and served and not set(served) & set(pv.python):
            fail(file, f"versions[{i}].rocm", f"ROCm {r}'s torch {pv.torch_minor} is "
                 f"published for Python {', '.join(served)} only, none of this version's")


def _without_recipe_keys(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` without the version keys a recipe adds: no recipe is known to check them (a
    load without the registry; ``toolkit.plan.recipes.load_matrix`` checks them)."""
    versions = doc.get("versions")
    if not isinstance(versions, list):
        return doc
    return {**doc, "versions": [{k: v for k, v in vt.items() if k in VERSION_FIELDS}
                                if isinstance(vt, dict) else vt for vt in versions]}


@cache
def _load(data_dir: Path, recipes: Recipes | None) -> Matrix:
    families, eras = load_gpus(data_dir / "gpus.toml")
    rocm = load_rocm(data_dir / "rocm.toml", families, eras)
    packages: dict[str, Package] = {}
    for path in sorted(data_dir.glob("*.toml")):
        if path.name not in RESERVED_FILES:  # every other file is one package (name = stem)
            packages[path.stem] = _load_package(path, rocm, recipes)
    if not packages:
        raise DataError(f"{data_dir}: no package file; add <name>.toml with [package] and "
                        "[[versions]] (beside gpus.toml and rocm.toml)")
    ci = data_dir / "ci.toml"
    if ci.is_file():  # its rules across files are checked by toolkit.data.ci.load_ci
        check(CI, read_toml(ci), ci, {"families": family_names(families)})
    builds = tuple(b for p in packages.values() for pv in p.versions
                   for b in _version_builds(p, pv, rocm))
    matrix = Matrix(MappingProxyType(packages), MappingProxyType(rocm),
                    MappingProxyType(families), MappingProxyType(eras), data_dir, builds)
    return _with_known_failures(matrix)


def _with_known_failures(matrix: Matrix) -> Matrix:
    """The matrix with its known failures (``known_failures.toml``, checked against it)."""
    from dataclasses import replace

    entries = known.load(matrix.source / known.KNOWN_FILE, matrix.builds, list(matrix.packages),
                         matrix.family_targets, matrix.known_targets)
    return replace(matrix, known_failures=entries) if entries else matrix


def data_dir() -> Path:
    return Path(os.environ.get("TOOLKIT_DATA_DIR") or DATA_DIR).resolve()


def load_matrix(path: str | os.PathLike[str] | None = None, *,
                recipes: Mapping[str, RecipeData] | None = None) -> Matrix:
    """The validated matrix (cached per folder). ``recipes``: recipe -> its build styles and
    version keys, the closed sets of ``recipe``/``build_style`` and the spec of the keys a
    recipe adds (``toolkit.plan.recipes.load_matrix`` passes them; without them, those are
    not checked)."""
    folder = Path(path).resolve() if path is not None else data_dir()
    if not folder.is_dir():
        raise DataError(f"{folder}: matrix data folder does not exist")
    key = None if recipes is None else tuple(sorted(recipes.items(), key=lambda kv: kv[0]))
    return _load(folder, key)


def forget_loaded() -> None:  # the next load_matrix reads the files (upstream --write)
    _load.cache_clear()
