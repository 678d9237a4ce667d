"""Package versions recorded as waiting: ``rocm = []`` with ``waiting = "<why>"``.

A version upstream released whose torch no ROCm release of the matrix has yet (fbgemm_gpu
v1.9.0 pairs with torch 2.14 before any ROCm build of it is published) is data all the same:
it yields no build, ``invoke matrix`` names it with its reason, and asking for it (``invoke
plan <id>``, a version filter) says what it awaits (``AwaitsUpstream``, exit 10). ``invoke
upstream --write`` records such a version and fills its ``rocm`` once a ROCm release of the
matrix has its torch.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Protocol

from toolkit.core.errors import AwaitsUpstream
from toolkit.data.schema import fail


# What this module reads of toolkit.data.matrix's PackageVersion, Package and Matrix (that
# module imports this one)
class PackageVersion(Protocol):
    @property
    def package(self) -> str: ...
    @property
    def version(self) -> str: ...
    @property
    def rocm(self) -> Sequence[str]: ...
    @property
    def waiting(self) -> str: ...
    @property
    def torch_minor(self) -> str: ...


class _Package(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def versions(self) -> Sequence[PackageVersion]: ...


class Matrix(Protocol):
    @property
    def packages(self) -> Mapping[str, _Package]: ...


def reason(torch: str, among: Sequence[str] = ()) -> str:
    """The ``waiting`` text of a version whose torch no ROCm release of the matrix has (of
    ``among``: the ROCm releases its upstream CI builds)."""
    return f"awaits torch {torch} on a ROCm of the matrix" + (
        f" that its CI builds ({', '.join(among)})" if among else "")


def check(file: Path, i: int, pv: PackageVersion) -> None:
    """``rocm = []`` only with ``waiting`` (its reason), ``waiting`` only with ``rocm = []``."""
    if not pv.rocm and not pv.waiting:
        fail(file, f"versions[{i}].rocm", "is empty; a version no ROCm release of the matrix "
             f'builds yet says why: waiting = "{reason(pv.torch_minor)}" (or list its ROCm '
             "releases)")
    if pv.rocm and pv.waiting:
        fail(file, f"versions[{i}].waiting", f"given with rocm = {list(pv.rocm)!r}; a version "
             "that builds awaits nothing: remove waiting, or empty rocm")


def waiting(matrix: Matrix, packages: Iterable[str] = ()) -> list[PackageVersion]:
    """The versions (of ``packages``; default all) no ROCm release of the matrix builds yet."""
    names = set(packages)
    return [pv for p in matrix.packages.values() if not names or p.name in names
            for pv in p.versions if pv.waiting]


def refuse(matrix: Matrix, *, versions: Iterable[str] = (), packages: Iterable[str] = (),
           build_id: str = "") -> None:
    """Raise ``AwaitsUpstream`` when ``versions`` or ``build_id`` name a waiting version."""
    wanted = set(versions)
    for pv in waiting(matrix, packages):
        if pv.version in wanted or (build_id and build_id.startswith(f"{pv.package}-"
                                                                      f"{pv.version}-")):
            raise AwaitsUpstream(
                f"{pv.package} {pv.version} has no build yet: {pv.waiting}",
                hint=f"{pv.package}.toml records it as waiting; `invoke upstream --write` fills "
                     "its ROCm releases once a ROCm release of the matrix has what it awaits")
