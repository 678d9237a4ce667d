"""Executing provide-tbb (a library the build links, checked before the build starts) and
expect-wheel (the built wheel is the distribution and version the recipe expects)."""

from __future__ import annotations

from pathlib import Path

from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename
from packaging.version import InvalidVersion

from toolkit.core.errors import StepFailed
from toolkit.core.steps import ExpectWheel, ProvideTbb, Step
from toolkit.run.context import Run, StepResult, run_command

HEADERS = ("tbb/tbb.h", "oneapi/tbb.h")


def provide_tbb(step: Step, run: Run) -> StepResult | str:
    action = step.action
    assert isinstance(action, ProvideTbb)
    result = (run_command(step, action.install, run) if action.install is not None
              else StepResult(step.name, step.kind, [], {}, returncode=0))
    lib_dirs = [Path(run.resolve(d)) for d in action.lib_dirs]
    inc_dirs = [Path(run.resolve(d)) for d in action.include_dirs]
    lib = next((d for d in lib_dirs if (d / "libtbb.so").exists()), None)
    if lib is None:
        raise StepFailed(f"libtbb.so ({action.source}) is in none of "
                         f"{', '.join(map(str, lib_dirs))}; fbgemm_gpu links -ltbb outside Nova")
    if not any((d / h).is_file() for d in inc_dirs for h in HEADERS):
        raise StepFailed(f"the tbb headers ({action.source}: {' or '.join(HEADERS)}) are in "
                         f"none of {', '.join(map(str, inc_dirs))}")
    run.values["TBB_LIB_DIR"] = str(lib)
    run.note(f"# libtbb.so found in {lib}")
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
    run.note(f"# {wheels[0].name} is {name} {version} as expected")
    return StepResult(step.name, step.kind, [], {}, returncode=0)
