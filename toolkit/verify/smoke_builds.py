"""Which build ``toolkit smoke`` tests: the builds of a work folder (``manifests``), the one
named by ``--manifest``, ``--build`` or ``--env``, else the newest *successful* one, named with
the newer ones passed over (``newest_successful``); a manifest made from a build id for a build
that has none (``manifest_for_id``)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolkit.core.errors import EnvironmentProblem, UsageError
from toolkit.core.text import escape
from toolkit.run import manifest as manifests_io

if TYPE_CHECKING:
    from collections.abc import Sequence

    from toolkit.data.matrix import Build

DEMO_HINT = "nox -s demo (builds the sample for gfx90a and gfx908), then invoke smoke --gfx gfx90a"


def manifests(workdir: Path) -> dict[str, Path]:
    """Build id -> manifest path for every ``artifacts/*/manifest.json``, newest last."""
    stamped: list[tuple[float, str, Path]] = []
    for path in (workdir / "artifacts").glob("*/manifest.json"):
        try:
            stamped.append((path.stat().st_mtime, path.parent.name, path))
        except OSError:  # removed while we looked
            continue
    return {name: path for _, name, path in sorted(stamped)}


def _ids(found: dict[str, Path]) -> str:
    return ", ".join(sorted(found)) if found else "none"


@dataclass(frozen=True)
class SmokeTarget:
    """One build to smoke: its manifest (read or made up) and the environment to run in."""

    build_id: str
    manifest: dict[str, Any]
    env_dir: Path
    manifest_path: Path | None = None  # None: made from the build id (no manifest yet)
    picked: str | None = None  # why this build, when none was named (``newest_successful``)

    @property
    def dist(self) -> str:
        return str(self.manifest.get("dist") or self.manifest["build"]["package"])

    @property
    def targets(self) -> tuple[str, ...]:
        return tuple(str(t) for t in self.manifest.get("targets") or ())


def read_manifest(path: Path) -> dict[str, Any]:
    """A build's manifest (``toolkit.run.manifest.read``: one-line ``UsageError`` if bad)."""
    return manifests_io.read(path)


def load_target(build_id: str, path: Path, env_dir: Path | None = None) -> SmokeTarget:
    """The build of ``path`` (its manifest), in ``env_dir`` or the environment it records."""
    data = read_manifest(path)
    if env_dir is None:
        recorded = data.get("env_dir")
        if not isinstance(recorded, str) or not recorded:
            raise UsageError(f"{path}: the manifest records no environment (env_dir); "
                             "give --env PATH")
        env_dir = Path(recorded)
    return SmokeTarget(build_id, data, env_dir, path)


def resolve(workdir: Path, build_id: str | None = None, env: str | None = None,
            manifest: str | None = None) -> SmokeTarget:
    """Which build to smoke: ``--manifest`` (a build step names its run's own: a repro's is
    ``repro-manifest.json``), ``--build``, else the build whose environment is ``--env``, else
    the newest *successful* build of the work folder (named, with the newer ones passed
    over). A build's own manifest is always preferred; one is made from the build id only
    for a build that has none."""
    env_dir = Path(env).expanduser().resolve() if env else None
    if manifest:
        return _of_manifest(manifest, build_id, env_dir)
    found = manifests(workdir)
    if build_id:
        return _of_id(workdir, found, build_id, env_dir)
    if not found:
        raise EnvironmentProblem(f"no builds in {workdir} yet (no artifacts/*/manifest.json)",
                                 hint=DEMO_HINT)
    if env_dir:
        return _of_env(workdir, found, env_dir)
    return newest_successful(found, workdir)


def _of_manifest(manifest: str, build_id: str | None, env_dir: Path | None) -> SmokeTarget:
    """--manifest: its build, which --build (if given) must name."""
    data = read_manifest(Path(manifest))
    named = str(data["build"]["id"])
    if build_id and build_id != named:
        raise UsageError(f"--build {escape(build_id)} but the manifest {escape(manifest)} "
                         f"is of {escape(named)}")
    return load_target(named, Path(manifest), env_dir)


def _of_id(workdir: Path, found: dict[str, Path], build_id: str, env_dir: Path | None) -> SmokeTarget:
    """--build ID: its manifest in the work folder, else (with --env) one made from the id."""
    if build_id in found:
        return load_target(build_id, found[build_id], env_dir)
    made = manifest_for_id(build_id, env_dir) if env_dir else None
    if made is None or env_dir is None:
        raise UsageError(
            f"no build {build_id!r} in {workdir / 'artifacts'}; builds with a manifest: "
            f"{_ids(found)}",
            hint=None if found else DEMO_HINT,
        )
    return SmokeTarget(build_id, made, env_dir, None)


def _of_env(workdir: Path, found: dict[str, Path], env_dir: Path) -> SmokeTarget:
    """--env alone: the newest build whose manifest records that environment."""
    for bid, path in reversed(found.items()):
        data = read_manifest(path)
        recorded = data.get("env_dir")
        if isinstance(recorded, str) and recorded and \
                Path(recorded).expanduser().resolve() == env_dir:
            return SmokeTarget(bid, data, env_dir, path)
    raise UsageError(f"no build in {workdir / 'artifacts'} used the environment {env_dir}; "
                     f"give --build ID (builds with a manifest: {_ids(found)})")


def newest_successful(found: dict[str, Path], workdir: Path) -> SmokeTarget:
    """The newest build whose manifest says ``ok``, named with the newer ones passed over and
    why (failed, running, interrupted): those are never picked silently."""
    passed_over: list[str] = []
    for bid, path in reversed(found.items()):
        data = read_manifest(path)  # a corrupt manifest is named, never passed over
        outcome = data.get("outcome")
        if outcome != "ok":
            step = data.get("failed_step")
            passed_over.append(f"{bid} ({escape(outcome)}"
                               + (f" at {escape(step)})" if isinstance(step, str) else ")"))
            continue
        note = "the newest successful build"
        if passed_over:
            note += "; newer, not picked: " + ", ".join(passed_over)
        return dataclasses.replace(load_target(bid, path), picked=note)
    raise EnvironmentProblem(
        f"no successful build in {workdir / 'artifacts'} to smoke-test (builds: "
        f"{', '.join(reversed(passed_over))})",
        hint="give --build ID to smoke one of them anyway, or build again")


def build_for_id(build_id: str) -> Build | None:
    """The build a build id names: a matrix build, or one a recipe makes outside the matrix
    (the demo's sample build); else None."""
    from toolkit.plan.recipes import load_matrix, standalone_build

    build = next((b for b in load_matrix().builds if b.id == build_id), None)
    return build if build is not None else standalone_build(build_id)


def manifest_for_id(build_id: str, env_dir: Path | None,
                    targets: Sequence[str] = ()) -> dict[str, Any] | None:
    """A manifest for a build that has none (``--build ID --env PATH``), or None when the id
    names no build. Its shared fields are the build's own (``recipe_facts``)."""
    build = build_for_id(build_id)
    if build is None:
        return None
    return {
        **manifests_io.recipe_facts(build, targets),
        "env_dir": str(env_dir) if env_dir else None,
        "outcome": "running",
    }


