"""Executing ProvideLibrary (a library the build links, checked before the build starts) and
expect-wheel (the built wheel is the distribution and version the recipe expects)."""

from __future__ import annotations

from pathlib import Path

from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename
from packaging.version import InvalidVersion

from toolkit.core.errors import StepFailed
from toolkit.core.steps import ExpectWheel, ProvideLibrary, Step
from toolkit.run.context import Run, StepResult, run_command


def provide_library(step: Step, run: Run) -> StepResult | str:
    action = step.action
    assert isinstance(action, ProvideLibrary)
    result = (run_command(step, action.install, run) if action.install is not None
              else StepResult(step.name, step.kind, [], {}, returncode=0))
    lib_dirs = [Path(run.resolve(d)) for d in action.lib_dirs]
    inc_dirs = [Path(run.resolve(d)) for d in action.include_dirs]
    lib = next((d for d in lib_dirs if (d / action.library).exists()), None)
    why = f"; {action.why}" if action.why else ""
    if lib is None:
        raise StepFailed(f"{action.library} ({action.source}) is in none of "
                         f"{', '.join(map(str, lib_dirs))}{why}")
    if not any((d / h).is_file() for d in inc_dirs for h in action.headers):
        raise StepFailed(f"the {action.name} headers ({action.source}: "
                         f"{' or '.join(action.headers)}) are in none of "
                         f"{', '.join(map(str, inc_dirs))}")
    run.values[action.placeholder.strip("{}")] = str(lib)
    run.note(f"# {action.library} found in {lib}")
    return result


def expect_wheel(step: Step, run: Run) -> StepResult | str:
    action = step.action
    assert isinstance(action, ExpectWheel)
    folder = Path(run.resolve(action.wheelhouse))
    wheels = sorted(folder.glob("*.whl")) if folder.is_dir() else []
    if len(wheels) != 1:
        raise StepFailed(f"expected exactly one wheel in {folder}, found: "
                         f"{', '.join(w.name for w in wheels) or 'none'}")
    try:
        name, version, _build, _tags = parse_wheel_filename(wheels[0].name)
    except (InvalidWheelFilename, InvalidVersion) as exc:
        raise StepFailed(f"{wheels[0].name}: not a valid wheel file name ({exc})") from None
    want_name = canonicalize_name(action.dist)
    want_version = run.resolve(action.version)
    if (name, str(version)) != (want_name, want_version):
        raise StepFailed(f"the build made {name} {version} ({wheels[0].name}); the recipe expects "
                         f"{want_name} {want_version}")
    if action.tags and not _tagged(wheels[0].name, action.tags):
        raise StepFailed(f"the build made {wheels[0].name}, not tagged {action.tags}: the one "
                         "wheel for every Python it serves needs py_limited_api "
                         f"({action.tags}) in its build")
    run.note(f"# {wheels[0].name} is {name} {version} as expected")
    return StepResult(step.name, step.kind, [], {}, returncode=0)


def _tagged(filename: str, tags: str) -> bool:
    """Does the wheel ``filename`` carry the Python and ABI tags ``tags`` (``cp39-abi3``)?"""
    py, abi = tags.split("-", 1)
    return any(t.interpreter == py and t.abi == abi
               for t in parse_wheel_filename(filename)[3])
