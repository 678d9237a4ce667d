"""Executing build-wheel, name-wheel and publish.

build-wheel skips when its build key (sources, resolved command and environment, the
environment's stamp, the earlier steps) equals ``wheelhouse/.build-key`` and the wheelhouse
holds one wheel; otherwise it empties the wheelhouse and builds. name-wheel writes the named
wheel into the build's staging folder; publish moves it into ``dist/<build-id>/`` only after
the checks (and smoke) passed, so a failed build never touches an earlier wheel.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
from pathlib import Path

from toolkit.core.errors import CommandStepFailed, StepFailed, ToolkitError
from toolkit.core.files import hash_tree, read_bytes
from toolkit.core.proc import run as run_proc
from toolkit.core.steps import BuildWheel, NameWheel, Publish, Step
from toolkit.env.buildenv import flag_path_problem, prefix_map, quote_flag
from toolkit.run.context import (
    Run,
    StepResult,
    command_environment,
    run_command,
)
from toolkit.run.wheels import is_dirty, local_label, name_wheel

KEY_FILE = ".build-key"
_RPATH_FLAG = re.compile(r"^-Wl,(-rpath[,=]|-R)(/.*)$")


def _skip_build_dirs(folder: str, names: list[str]) -> set[str]:
    """Folders that never change a wheel: VCS data, caches, setuptools' build output."""
    return {n for n in names if n in {".git", "__pycache__", "build"}
            and os.path.isdir(os.path.join(folder, n))}


def build_key(step: Step, action: BuildWheel, run: Run) -> str:
    """What a wheel depends on: sources, the exact command and environment, the env's stamp
    and every step before this one."""
    h = hashlib.sha256()
    h.update(json.dumps([run.resolve(a) for a in action.build.argv]).encode())
    h.update(json.dumps(command_environment(action.build, run, {}), sort_keys=True).encode())
    hash_tree(h, Path(action.worktree), _skip_build_dirs)
    # The environment as defined: its provisioning stamp (not a listing of site-packages:
    # smoke runs add pytest there, which changes no wheel).
    stamp = Path(action.env_dir) / ".toolkit-env.json"
    try:
        h.update(read_bytes(stamp, "stamp"))
    except ToolkitError:  # none yet (or not a regular file): the key says so
        h.update(b"<no stamp>")
    for earlier in run.plan.steps:
        if earlier.name == step.name:
            break
        h.update(json.dumps([earlier.name, earlier.as_json()["action"]], sort_keys=True)
                 .encode())
    return h.hexdigest()


def _strip_rpath(value: str, default: str) -> str:
    kept = [w for w in shlex.split(value) if not _RPATH_FLAG.match(w)]
    return " ".join(quote_flag(w) for w in kept) or default


_PROBE = ("import json, os, sys, sysconfig; v = sysconfig.get_config_var; "
          "print(json.dumps([v('LDSHARED') or '', v('LDCXXSHARED') or '', "
          "sorted({sys.base_prefix, os.path.realpath(sys.base_prefix), sys.prefix, "
          "os.path.realpath(sys.prefix)})]))")


def interpreter_values(python: str) -> dict[str, str]:
    """LDSHARED and LDCXXSHARED of ``python`` without absolute ``-Wl,-rpath`` flags, and
    ``-ffile-prefix-map`` flags that map its prefixes to ``/python``.

    Interpreters built with an rpath in LDFLAGS (pyenv, some distros) stamp that build-machine
    path as RUNPATH into every extension they link (the check rightly fails such wheels); their
    headers' path reaches debug info. Neither may depend on where the interpreter lives.
    """
    res = run_proc([python, "-c", _PROBE], timeout=120, check=False)
    try:
        ldshared, ldcxxshared, prefixes = json.loads(res.stdout) if res.ok else ("", "", [])
    except json.JSONDecodeError:
        ldshared, ldcxxshared, prefixes = "", "", []
    return {
        "LDSHARED": _strip_rpath(ldshared, "gcc -shared"),
        "LDCXXSHARED": _strip_rpath(ldcxxshared, "g++ -shared"),
        # quoted for setuptools, hipcc and CMake alike (a prefix no flag can carry is left
        # out: its path may then reach debug info)
        "PYTHON_PREFIX_MAP": " ".join(prefix_map(p, "/python")
                                      for p in sorted(prefixes, key=len, reverse=True)
                                      if p.startswith("/") and p != "/"
                                      and not flag_path_problem(p)),
    }


def build_wheel(step: Step, run: Run) -> StepResult | str:
    action = step.action
    assert isinstance(action, BuildWheel)
    if action.sanitize_ldshared:
        run.values.update(interpreter_values(action.sanitize_ldshared))
    key = build_key(step, action, run)
    house = Path(action.wheelhouse)
    key_file = house / KEY_FILE
    wheels = list(house.glob("*.whl"))
    if (not action.force and len(wheels) == 1 and key_file.exists()
            and key_file.read_text(encoding="utf-8") == key):
        return f"up to date: sources, command and environment unchanged ({key[:12]})"
    shutil.rmtree(house, ignore_errors=True)  # a stale wheel never gets renamed as new
    result = run_command(step, action.build, run)
    house.mkdir(parents=True, exist_ok=True)
    tmp = key_file.with_name(KEY_FILE + ".tmp")
    tmp.write_text(key, encoding="utf-8")
    os.replace(tmp, key_file)
    return result


def install_requirements(step: Step, run: Run) -> StepResult | str:
    """install-requirements: the recipe's ``uv pip install`` of the build's requirements.
    An index that cannot be reached is ``SourceUnreachable`` (exit 8), a requirement no index
    holds ``BuildRequirementsUnavailable`` (exit 11), each one line naming the index
    (``toolkit.env.buildreqs``); any other failure stays a failed step (exit 5)."""
    from toolkit.env.buildreqs import install_failure, installer_indexes

    cmd = step.cmd
    assert cmd is not None
    try:
        return run_command(step, cmd, run)
    except CommandStepFailed as err:
        argv = [run.resolve(a) for a in cmd.argv]
        installer = "uv" if argv[1:3] == ["pip", "install"] else "pip"
        # ``uv pip install --python ENV REQ...`` (``toolkit.plan.model.Context.uv_pip``)
        rest = argv[argv.index("install") + 1:] if "install" in argv else []
        if rest[:1] == ["--python"]:
            rest = rest[2:]
        wanted = [a for a in rest if not a.startswith("-")]
        said = install_failure("\n".join(err.tail), wanted, installer_indexes(installer),
                               f"{run.plan.build.package.dist} (step {step.name})")
        if said is None:
            raise
        raise said from None


def named_wheel(step_name: str, run: Run, wheelhouse: Path, dest: Path, *, rocm: str,
                naming: str) -> Path:
    """The one wheel of ``wheelhouse`` named into ``dest`` from what the run learned: the
    source commit (or, without a git checkout, its tree hash), SOURCE_DATE_EPOCH, uncommitted
    changes (name-wheel and make-variant alike)."""
    sha = run.values.get("SHA")
    if sha == "0" * 40 and run.values.get("TREE"):  # no git checkout: its tree hash
        sha = run.values["TREE"][:40]
    if naming == "toolkit" and not sha:
        raise StepFailed(f"{step_name}: the source commit (SHA) was never learned")
    label = local_label(rocm, sha or "") if naming == "toolkit" else None
    epoch = run.values.get("SOURCE_DATE_EPOCH", "")
    return name_wheel(wheelhouse, dest, label=label,
                      epoch=int(epoch) if epoch.isdigit() else None,
                      dirty=bool(run.values.get("DIFF")))


def name_wheel_step(step: Step, run: Run) -> StepResult | str:
    action = step.action
    assert isinstance(action, NameWheel)
    staging = Path(action.staging)
    shutil.rmtree(staging, ignore_errors=True)
    wheel = named_wheel("name-wheel", run, Path(action.wheelhouse), staging, rocm=action.rocm,
                        naming=action.naming)
    run.values["WHEEL"] = str(wheel)
    run.note(f"# named {wheel}")
    return StepResult(step.name, step.kind, [], {}, returncode=0)


def publish(step: Step, run: Run) -> StepResult | str:
    """Rename the staged wheel into ``dest`` (same file system: atomic), then drop the
    earlier wheels of ``dest`` (a +...dirty wheel: only the earlier dirty ones). Until this
    step, ``dest`` is untouched."""
    action = step.action
    assert isinstance(action, Publish)
    staged = Path(run.resolve(action.wheel))
    dest = Path(action.dest)
    final = dest / staged.name
    tmp = dest / f".{staged.name}.{os.getpid()}.tmp"
    # one run per build and work folder at a time (its lock): a half copy here is a killed
    # earlier publish's, never another run's
    for left in sorted(dest.glob(".*.whl.*.tmp")):
        if left.is_file() and not left.is_symlink():
            left.unlink()
            run.note(f"# removed {left}: a half copy a killed earlier publish left")
    try:
        dest.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(staged, tmp)
        os.replace(tmp, final)
    except OSError:  # a full or read-only disk: the earlier wheel stays, no half copy left
        tmp.unlink(missing_ok=True)
        raise
    # a wheel of uncommitted changes (+...dirty) replaces only earlier such wheels: the
    # clean commit's wheel stays beside it
    dirty = is_dirty(final)
    for other in dest.glob("*.whl"):
        if other.name != final.name and (is_dirty(other) or not dirty):
            other.unlink()
    staged.unlink(missing_ok=True)
    run.values["WHEEL"] = str(final)
    run.note(f"# published {final}")
    return StepResult(step.name, step.kind, [], {}, returncode=0)
