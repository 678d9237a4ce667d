"""Executing the provisioning steps: probe-indexes, create-env, install-rocm-sdk (pip or
system), install-torch, mark-env-ready. Each handler does exactly what its action says
(``toolkit.core.steps``); nothing here is registered anywhere, the executor's table names it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import sys
import urllib.error
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import unquote, urlsplit

from toolkit.core.errors import CommandStepFailed, EnvironmentProblem, SourceUnreachable
from toolkit.core.files import read_text
from toolkit.core.steps import (
    CheckEnv,
    CreateEnv,
    InstallSdk,
    InstallTorch,
    MarkEnvReady,
    ProbeIndexes,
    Step,
    UseSystemRocm,
)
from toolkit.core.text import escape
from toolkit.core.urls import join_path, mask, open_url, redirected
from toolkit.env import venvs
from toolkit.env.interpreters import find, find_uv, probe
from toolkit.env.rocm import check_version, describe_pip_sdk, find_system, major_minor
from toolkit.env.torchprobe import check_torch_hip, torch_info
from toolkit.run.context import Run, StepResult, run_command

# values that are bookkeeping, never stored in the environment's stamp
_NOT_STORED = {"TOOLS_PATH", "INTERPRETER", "SHA", "SHA8", "WHEEL", "LDSHARED",
               "LDCXXSHARED", "PYTHON_PREFIX_MAP", "MANIFEST"}


# ----------------------------------------------------------------------------- probe-indexes
_HEADERS = {"Accept": "text/html", "User-Agent": "rocm-wheel-toolkit"}
FIND_LINKS = "find-links location"
SDK_INDEX = "ROCm SDK index"


def source_hint(what: str, *, sdk: bool, environ: Mapping[str, str] | None = None,
                opt: str = "/opt", want: str | None = None) -> str:
    """What to do when ``what`` (an ``IndexProbe.what``) cannot serve the build: the option
    that replaces it, and ``--rocm-from system`` when it is a source of the ROCm SDK
    (``sdk``) and this machine has a ROCm install (``toolkit.env.rocm.find_system``)."""
    if what == FIND_LINKS:
        hint = "check the path or URL and the network, or pass --find-links PATH"
    elif what == SDK_INDEX:
        hint = ("check the URL and the network, or pass --index-url URL "
                "(or set TOOLKIT_ROCM_INDEX_URL)")
    else:  # the torch index: from the matrix data, no option replaces it
        hint = f"check the URL and the network (toolkit/data/rocm.toml names the {what})"
    if sdk:
        try:
            found = find_system(environ, opt=opt, want=want)
        except EnvironmentProblem:
            return hint
        other = f", not {want}: add --allow-rocm-mismatch" if want and \
            major_minor(found.version) != major_minor(want) else ""
        hint += f", or --rocm-from system (ROCm {found.version} is at {found.root}{other})"
    return hint


def probe_index(url: str, project: str | None, what: str, timeout: float = 10.0, *,
                sdk: bool = False, want: str | None = None,
                allow_insecure: bool = False) -> None:
    """Fail fast (one line, URL masked, ``SourceUnreachable``) when an index or find-links
    location cannot be reached, refuses access or lacks ``project``; the hint is
    ``source_hint`` (``sdk``: the location is a source of the ROCm SDK ``want``). Redirects
    are followed by ``core.urls.open_url``'s rules (a refused one: ``UsageError``, exit 2);
    a failure after a redirect names where it was redirected."""
    def hint() -> str:  # looked for only on the way out (find_system may run hipconfig)
        return source_hint(what, sdk=sdk, want=want)

    parts = urlsplit(url)
    if parts.scheme == "file" or not parts.scheme:
        path = Path(unquote(parts.path) if parts.scheme else url)
        if not path.exists():
            raise SourceUnreachable(f"{what} {mask(url)} does not exist", hint=hint())
        if project and parts.scheme and not (path / project).exists():
            raise SourceUnreachable(f"{what} {mask(url)} has no {project!r} project",
                                    hint=hint())
        return
    target = join_path(url, project) if project else join_path(url)
    hops: list[str] = []
    try:
        with open_url(target, what=what, timeout=timeout, allow_insecure=allow_insecure,
                      headers=_HEADERS, hops=hops) as resp:
            resp.read(1)
    except urllib.error.HTTPError as exc:
        asked = f"{mask(target)}{redirected(hops)}"
        if exc.code == 404 and project:
            raise SourceUnreachable(
                f"{what} {mask(url)} has no {project!r} project (HTTP 404 for {asked})",
                hint="check --index-url/--family: the index must serve this GPU family",
            ) from None
        if exc.code in (401, 403):
            raise SourceUnreachable(f"{what} {mask(url)}{redirected(hops)} refused access "
                                    f"(HTTP {exc.code})",
                                    hint="check the index credentials (netrc/keyring)") from None
        if project:
            raise SourceUnreachable(
                f"{what} {mask(url)} answered HTTP {exc.code} for {asked}",
                hint=hint()) from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise SourceUnreachable(f"cannot reach {what} {mask(url)}{redirected(hops)}: "
                                f"{escape(mask(str(reason)))}", hint=hint()) from None


def probe_indexes(step: Step, run: Run) -> StepResult | str:
    """Each location once per run (``Run.probes``, shared by the builds of a run): a verdict
    found by an earlier build, reachable or not, is reused, and said so in the log."""
    action = step.action
    assert isinstance(action, ProbeIndexes)
    own_links = set(run.plan.options.find_links) if run.plan.options else set()
    for p in action.probes:
        key = (p.url, p.project)
        if key in run.probes:
            verdict = run.probes[key]
            run.note(f"# probe {p.what} {p.url}: "
                     f"{'reachable' if verdict is None else 'unreachable'} (probed earlier in "
                     "this run)")
            if verdict is not None:
                raise SourceUnreachable(str(verdict.message), hint=verdict.hint)
            continue
        run.note(f"# probe {p.what} {p.url}")
        sdk = p.what == SDK_INDEX or (p.what == FIND_LINKS and p.url in own_links)
        try:
            probe_index(p.url, p.project, p.what, action.timeout, sdk=sdk,
                        want=run.plan.build.rocm.version,
                        allow_insecure=bool(run.plan.options and
                                            run.plan.options.allow_insecure_index))
        except SourceUnreachable as err:
            run.probes[key] = err
            raise
        run.probes[key] = None
    return StepResult(step.name, step.kind, [], {}, returncode=0)


# ----------------------------------------------------------------------------- create-env
def _resolve_interpreter(run: Run, action: CheckEnv) -> str:
    interp = action.interpreter
    if not os.path.isabs(interp):
        interp = find(action.python).path
    found = probe(interp)
    if found is None:
        raise EnvironmentProblem(f"the Python {action.python} interpreter {interp} does not run",
                                 hint=f"uv python install {action.python}")
    run.interpreter = f"{interp} {'.'.join(map(str, found.version))}" + (
        "t" if found.free_threaded else "")
    return interp


def _tools_path(interp: str) -> str:
    dirs: list[str] = [os.path.dirname(interp)]
    uv = find_uv()
    if uv:
        dirs.insert(0, os.path.dirname(uv))
    dirs.append(os.path.dirname(sys.executable))
    return ":".join(dict.fromkeys(d for d in dirs if d))


def _lock_text(path: str | None) -> str | None:
    if path is None:
        return None
    try:
        return read_text(path, "lock file", EnvironmentProblem)
    except EnvironmentProblem as exc:
        raise EnvironmentProblem(exc.message, hint="regenerate it, or pass --no-lock") from None


def check_env(step: Step, run: Run) -> StepResult | str:
    action = step.action
    assert isinstance(action, CheckEnv)
    env_dir = Path(action.env_dir)
    interp = _resolve_interpreter(run, action)
    run.values["INTERPRETER"] = interp
    run.values["TOOLS_PATH"] = _tools_path(interp)
    digest = venvs.digest([("definition", [action.definition], {}, [])],
                          interpreter=run.interpreter or interp,
                          lock_text=_lock_text(action.lock))
    run.env_digest = digest
    stamp = venvs.is_ready(env_dir, digest)
    if stamp is None and venvs.take_back(env_dir, digest):
        run.note(f"# {env_dir}: the environment set aside for this definition is back")
        stamp = venvs.is_ready(env_dir, digest)
    if stamp is not None:
        values = {k: str(v) for k, v in dict(stamp.get("values", {})).items()
                  if k not in _NOT_STORED}  # a run's own: never another build's
        root = values.get("ROCM_ROOT")
        if root is None or os.path.isdir(root):
            run.values.update(values)
            run.env_reused = True
            run.note(f"# {env_dir} is up to date (stamp {digest[:12]}): reused")
            return StepResult(step.name, step.kind, [], {}, returncode=0)
    run.note(f"# {env_dir} must be (re)created (stamp {digest[:12]})")
    return StepResult(step.name, step.kind, [], {}, returncode=0)


def create_env(step: Step, run: Run) -> StepResult | str:
    action = step.action
    assert isinstance(action, CreateEnv)
    venvs.set_aside(Path(action.env_dir))  # a ready one waits as <env>.previous
    cmd = action.command()
    if not os.path.isabs(action.uv):  # planned without a located uv: look again now
        uv = find_uv()
        if uv is None:
            raise EnvironmentProblem("uv is needed to create build environments",
                                     hint="pip install uv")
        cmd = dataclasses.replace(cmd, argv=(uv, *cmd.argv[1:]))
    return run_command(step, cmd, run)


# ----------------------------------------------------------------------------- the SDK
def on_stable(err: CommandStepFailed, run: Run) -> CommandStepFailed:
    """A pip install from TheRock's stable channel that failed: the error says so (the stable
    channel is resolved without pre-releases, so a line that published only nightlies or
    release candidates has nothing there) and names the channels that take pre-releases."""
    if run.plan.channel != "stable":
        return err
    rocm = run.plan.build.rocm
    others = [c for c in rocm.sdk.channels if c != "stable"]
    failed = CommandStepFailed(
        f"ROCm {rocm.version} from TheRock's stable channel, which takes releases only "
        f"(pre-releases are not taken on stable): {err.message}", err.returncode, err.tail)
    failed.hint = (f"--channel {' or '.join(others)} takes pre-releases" if others else
                   f"ROCm {rocm.version} has no other channel; --index-url names another index")
    return failed


def install_sdk(step: Step, run: Run) -> StepResult | str:
    action = step.action
    assert isinstance(action, InstallSdk)
    try:
        result = run_command(step, action.install, run)
    except CommandStepFailed as err:
        raise on_stable(err, run) from None
    info = describe_pip_sdk(action.python)
    run.values.update({"ROCM_ROOT": info.root, "ROCM_BIN": info.bin, "ROCM_CMAKE": info.cmake,
                       "ROCM_SDK_VERSION": info.version,
                       "ROCM_SDK_TARGETS": ";".join(info.targets)})
    warning = check_version(what=f"the pip ROCm SDK ({info.root})", found=info.version,
                            session=action.rocm, allow=action.allow_mismatch)
    if warning:
        run.warn(warning.removeprefix("warning: "))
    return result


def use_system_rocm(step: Step, run: Run) -> StepResult | str:
    action = step.action
    assert isinstance(action, UseSystemRocm)
    found = find_system({"ROCM_PATH": action.root, "PATH": ""}, opt="/nonexistent")
    warning = check_version(what=f"the system ROCm at {found.root}", found=found.version,
                            session=action.rocm, allow=action.allow_mismatch)
    if warning:
        run.warn(warning.removeprefix("warning: "))
    run.note(f"# system ROCm {found.version} at {found.root}")
    run.values.update({"ROCM_ROOT": found.root, "ROCM_BIN": f"{found.root}/bin",
                       "ROCM_CMAKE": f"{found.root}/lib/cmake",
                       "ROCM_SDK_VERSION": found.version})
    return StepResult(step.name, step.kind, [], {}, returncode=0)


# ----------------------------------------------------------------------------- torch
def install_torch(step: Step, run: Run) -> StepResult | str:
    action = step.action
    assert isinstance(action, InstallTorch)
    try:
        result = run_command(step, action.install, run)
    except CommandStepFailed as err:  # TheRock's torch comes from the SDK's channel
        raise on_stable(err, run) from None
    info = torch_info(action.python)
    warning = check_torch_hip(str(info["version"]), info.get("hip"), action.hip, action.rocm,
                              action.allow_mismatch)
    if warning:
        run.warn(warning)
    run.values.update({"TORCH_LIB": str(info["lib"]), "TORCH_VERSION": str(info["version"]),
                       "TORCH_HIP": str(info.get("hip"))})
    return result


# ----------------------------------------------------------------------------- mark ready
def mark_env_ready(step: Step, run: Run) -> StepResult | str:
    action = step.action
    assert isinstance(action, MarkEnvReady)
    if run.env_digest is None:
        raise EnvironmentProblem("mark-env-ready ran before create-env computed the "
                                 "environment's digest")
    learned = {k: v for k, v in run.values.items() if k not in _NOT_STORED}
    provisioning = [s for s in run.plan.steps if s.provisions]
    venvs.mark_ready(Path(action.env_dir), run.env_digest, values=learned, described={
        "build": run.plan.build.id, "python": run.interpreter,
        "steps": [{"name": s.name, "argv": list(s.argv)} for s in provisioning],
        "definition": hashlib.sha256(
            json.dumps([s.as_json() for s in provisioning], sort_keys=True).encode()
        ).hexdigest(),
    })
    return StepResult(step.name, step.kind, [], {}, returncode=0)
