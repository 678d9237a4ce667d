"""Provisioning: the environment, the ROCm SDK and torch of one build.

Planning (pure, no I/O): ``sources_for`` says where the SDK and torch come from (matrix data,
overridden by ``Options``); ``provision_steps`` turns that into the steps ``create-env``,
``install-rocm-sdk``, ``rocm-sdk-test`` (only with ``Options.rocm_sdk_test``) and
``install-torch``. Lock files are read by the caller into ``Options.locks``
(``toolkit.plan.locks.read_locks``); a current lock turns the installs into
``--require-hashes -r locks/<name>``, a stale one is refused.

Execution (hooks registered into ``toolkit.run.executor`` at import):

- ``create-env`` before: resolve the interpreter (``toolkit.env.interpreters``: PATH, pyenv,
  /opt/python, uv) and uv; compute the environment digest (``toolkit.env.venvs``); when the
  stamp matches, skip every provisioning step and restore what it learned; otherwise probe
  the package indexes (short timeouts: one line naming the URL, masked), un-mark and remove
  the old environment, and let ``uv venv`` create it.
- ``install-rocm-sdk`` after (pip): learn ROCM_ROOT/ROCM_BIN/ROCM_CMAKE, the SDK version
  and targets only through ``python -m rocm_sdk``; check the version against the session.
  before (system): verify the planned root (``HostFacts.system_rocm``, found by the caller
  with ``toolkit.env.rocm.find_system``: ROCM_PATH, /opt/rocm, /opt/rocm-X.Y.Z, hipcc on PATH;
  else /opt/rocm), read its version (.info/version, hip_version.h, hipconfig --version),
  refuse a major.minor mismatch unless ``--allow-rocm-mismatch``.
- ``install-torch`` after: ``torch.version.hip`` major.minor must equal the release's HIP
  (``RocmRelease.hip``); learn TORCH_LIB; then, and only then, write the stamp (atomically).

Plan values a hook needs but ``Step`` has no field for travel in the step's environment:
``TOOLKIT_ALLOW_ROCM_MISMATCH=1`` (``--allow-rocm-mismatch``), ``PATH={TOOLS_PATH}:{PATH}``
(the interpreter's and uv's folders, filled at execution).
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

from toolkit.core.errors import EnvironmentProblem, UsageError
from toolkit.core.urls import check_index_url, mask
from toolkit.data.matrix import Build, Matrix
from toolkit.env.buildenv import RocmPaths
from toolkit.env.host import HostFacts
from toolkit.plan.layout import Layout
from toolkit.plan.locks import find_lock, inputs_hash, lock_name
from toolkit.plan.planner import Options, Step

PROVISION_STEPS = ("create-env", "install-rocm-sdk", "rocm-sdk-test", "install-torch")
ALLOW_MISMATCH_VAR = "TOOLKIT_ALLOW_ROCM_MISMATCH"
TOOLS_PATH = "{TOOLS_PATH}:{PATH}"
PYPI = "https://pypi.org/simple/"
PROBE_TIMEOUT_S = 10.0
# run.values keys that are bookkeeping, never placeholders and never stored in the stamp
_DIGEST, _REUSED, _PYTHON = "_TOOLKIT_ENV_DIGEST", "_TOOLKIT_ENV_REUSED", "_TOOLKIT_PYTHON"
_NOT_STORED = {"TOOLS_PATH", _DIGEST, _REUSED, _PYTHON}


def sdk_provider(build: Build, options: Options) -> str:
    provider = options.rocm_from or build.rocm.sdk.provider
    if provider not in ("pip", "system"):
        raise UsageError(f"unknown ROCm SDK provider {provider!r}; valid: pip, system")
    return provider


def choose_family(matrix: Matrix, build: Build, targets: Sequence[str], wanted: str | None) -> str:
    """The GPU family whose per-family index serves every requested target."""
    fams = matrix.family_targets
    if wanted:
        if wanted not in fams:
            raise UsageError(f"unknown GPU family {wanted!r}; valid: {', '.join(sorted(fams))}")
        candidates = [wanted]
    else:
        # the release's default, then the narrowest family (gfx90a before the older gfx90X-dcgpu)
        others = sorted(matrix.families.values(), key=lambda f: (len(f.targets), f.name))
        candidates = [build.rocm.default_family, *(f.name for f in others)]
    procs = {t.split(":")[0] for t in targets}
    for name in candidates:
        if procs <= set(fams[name]):
            return name
    raise UsageError(
        f"no single GPU family covers {', '.join(targets)} on a per-family index; "
        "build them separately, or use a multi-arch SDK index"
    )


@dataclass(frozen=True)
class Sources:
    """Where one environment's SDK and torch come from (the inputs of its lock)."""

    provider: str  # "pip" | "system"
    layout: str | None  # "per-family" | "multi-arch" (pip)
    family: str | None  # per-family index: the family (also ROCM_SDK_TARGET_FAMILY)
    sdk_index: str | None
    sdk_spec: str | None  # e.g. rocm[libraries,devel]>1.0,>=7.0.0a0,<7.1
    find_links: tuple[str, ...]
    torch_spec: str
    torch_args: tuple[str, ...]  # --index-url/--extra-index-url/--find-links for torch
    system_version: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "provider": self.provider, "layout": self.layout, "family": self.family,
            "sdk_index": self.sdk_index, "sdk_spec": self.sdk_spec,
            "find_links": list(self.find_links), "torch_spec": self.torch_spec,
            "torch_args": list(self.torch_args), "system_version": self.system_version,
        }

    def index_args(self) -> tuple[str, ...]:
        """Index options covering both the SDK and torch (for installs from a lock)."""
        out: list[str] = []
        urls: list[str] = [self.sdk_index] if self.sdk_index else []
        links = list(self.find_links)
        args = list(self.torch_args)
        for opt, val in zip(args[::2], args[1::2], strict=False):
            if opt == "--find-links":
                links.append(val)
            else:
                urls.append(val)
        for n, url in enumerate(dict.fromkeys(urls)):
            out += ["--index-url" if n == 0 else "--extra-index-url", url]
        for link in dict.fromkeys(links):
            out += ["--find-links", link]
        return tuple(out)


def sources_for(matrix: Matrix, build: Build, options: Options) -> Sources:
    targets = options.gfx or matrix.family_targets[build.rocm.default_family]
    provider = sdk_provider(build, options)
    sdk = build.rocm.sdk
    for url in [options.index_url, *options.find_links]:
        if url and "://" in url:
            check_index_url(url, allow_insecure=options.allow_insecure_index)
    family: str | None = None
    sdk_index: str | None = None
    spec: str | None = None
    layout: str | None = None
    if provider == "pip":
        index = options.index_url or sdk.index_url
        spec = sdk.spec or "rocm[libraries,devel]>1.0"
        if not index:
            raise UsageError(f"ROCm {build.rocm.version} has no pip SDK index in the matrix; "
                             "give --index-url or use --rocm-from system")
        layout = sdk.layout or "per-family"
        if layout == "multi-arch":
            extras = ",".join(dict.fromkeys(f"device-{t.split(':')[0]}" for t in targets))
            spec = spec.replace("rocm[libraries,devel]", f"rocm[libraries,devel,{extras}]")
            sdk_index = index if index.endswith("/") else index + "/"
        else:
            family = choose_family(matrix, build, targets, options.family)
            sdk_index = f"{index.rstrip('/')}/{family}/"
    if not build.pkg_version.torch:  # a package that needs no torch (the bundled sample)
        return Sources(provider, layout, family, sdk_index, spec, tuple(options.find_links),
                       "", (), sdk.version if provider == "system" else None)
    src = build.torch_source
    torch_args: list[str] = []
    if src.index_url:
        url = src.index_url
        if src.per_family:
            torch_family = family or choose_family(matrix, build, targets, options.family)
            url = f"{url.rstrip('/')}/{torch_family}/"
        torch_args += ["--index-url", url]
        if src.kind != "pytorch":
            torch_args += ["--extra-index-url", PYPI]
    if src.find_links:
        torch_args += ["--find-links", src.find_links]
    return Sources(provider, layout, family, sdk_index, spec, tuple(options.find_links),
                   src.spec, tuple(torch_args),
                   sdk.version if provider == "system" else None)


def uv_index_args(pip_args: Sequence[str]) -> tuple[str, ...]:
    """pip's index options in uv's terms. pip weighs every index alike; uv prefers
    ``--extra-index-url`` over ``--index-url``, which would let PyPI's CUDA torch win over
    TheRock's. ``--index A --default-index B`` keeps A (the torch source) first."""
    out: list[str] = []
    for opt, val in zip(pip_args[::2], pip_args[1::2], strict=False):
        if opt == "--index-url":
            out += ["--index", val]
        elif opt == "--extra-index-url":
            out += ["--default-index", val] if val == PYPI else ["--index", val]
        else:
            out += [opt, val]
    return tuple(out)


def _lock_for(matrix: Matrix, build: Build, options: Options, sources: Sources) -> str | None:
    """The lock path to install from, None without one; a stale lock is a ``UsageError``."""
    if options.no_lock:
        return None
    name = lock_name(matrix, build)
    ref = find_lock(options.locks, name)
    if ref is None:
        return None
    if ref.inputs != inputs_hash(build, sources):
        why = "has no toolkit header" if ref.inputs is None else "is stale (the matrix or options changed)"
        raise UsageError(
            f"lock {ref.path} {why}",
            hint=f"nox -s lock-{build.python}-rocm{build.rocm.version} to regenerate it, "
                 "or --no-lock",
        )
    return ref.path


def provision_steps(
    matrix: Matrix, build: Build, options: Options, host: HostFacts, layout: Layout
) -> tuple[list[Step], RocmPaths, str | None]:
    """create-env, install-rocm-sdk[, rocm-sdk-test], install-torch; SDK paths; SDK family."""
    src = sources_for(matrix, build, options)
    env_dir = layout.env_dir(build)
    env_python = str(layout.env_python(build))
    interp = host.interpreters.get(build.python, f"python{build.python}")
    lock = _lock_for(matrix, build, options, src)
    allow = {ALLOW_MISMATCH_VAR: "1"} if options.allow_rocm_mismatch else {}
    tools = {"PATH": TOOLS_PATH}
    found_where = ("" if os.path.isabs(interp)
                   else f"; {interp} is looked up at execution (PATH, pyenv, /opt/python, uv)")

    steps: list[Step] = [
        Step("create-env", ("uv", "venv", "--seed", "--python", interp, str(env_dir)),
             f"create the Python {build.python} environment for ROCm {build.rocm.version} "
             f"(reused while its stamp matches){found_where}",
             env={**tools, "UV_PYTHON_DOWNLOADS": "never"}),
    ]
    uv_install = ("uv", "pip", "install", "--python", env_python, "--prerelease=allow")
    locked = ("--require-hashes", "--index-strategy", "unsafe-best-match",
              *src.index_args(), "-r", lock) if lock else ()
    family_env = {"ROCM_SDK_TARGET_FAMILY": src.family} if src.family else {}
    if src.provider == "pip":
        assert src.sdk_index and src.sdk_spec
        links = [a for fl in src.find_links for a in ("--find-links", fl)]
        # `--refresh-package rocm` is TheRock's `pip cache remove rocm`: the rocm sdist
        # picks its GPU family when it is built, so a cached build must never be reused.
        argv = (*uv_install, "--refresh-package", "rocm",
                *(locked or ("--index-url", src.sdk_index, *links, src.sdk_spec)))
        steps.append(Step(
            "install-rocm-sdk", argv,
            f"install the ROCm {build.rocm.version} SDK from TheRock's index"
            + (f" (family {src.family})" if src.family else " (multi-arch)")
            + (f", locked by {lock}" if lock else "")
            + "; then learn its paths from `python -m rocm_sdk path`",
            env={**tools, **family_env, **allow},
        ))
        rocm_paths = RocmPaths.learned()
        if options.rocm_sdk_test:
            steps.append(Step("rocm-sdk-test", (env_python, "-m", "rocm_sdk", "test"),
                              "TheRock's own SDK self-test (`rocm-sdk test`)"))
    else:
        expected = src.system_version or build.rocm.version
        # the root the caller discovered (HostFacts.system_rocm), else the conventional
        # /opt/rocm; execution verifies it is there and that its version matches
        root = host.system_rocm.root if host.system_rocm else "/opt/rocm"
        rocm_paths = RocmPaths.system(root)
        argv = (f"{root}/bin/hipconfig", "--version")
        env = dict(allow)
        steps.append(Step(
            "install-rocm-sdk", argv,
            f"use the system ROCm install at {root} (expected {expected}; "
            "toolkit.env.rocm.find_system looks at ROCM_PATH, /opt/rocm, /opt/rocm-X.Y.Z, hipcc on PATH)",
            env=env,
        ))

    if not build.pkg_version.torch:
        return steps, rocm_paths, src.family
    if lock:
        torch_argv = (*uv_install, *locked)
    else:
        # uv's default (first index that has torch wins) keeps PyPI's CUDA torch out when
        # the torch index is TheRock's; a find-links source is weighed with the index.
        strategy = (("--index-strategy", "unsafe-best-match")
                    if "--find-links" in src.torch_args else ())
        torch_argv = (*uv_install, *strategy, *uv_index_args(src.torch_args), src.torch_spec)
    torch_env = {**tools, **allow}
    steps.append(Step(
        "install-torch", torch_argv,
        f"install torch {build.pkg_version.torch} for ROCm {build.rocm.version} "
        f"({build.torch_source.kind} build"
        + (f"; {build.torch_source.note}" if build.torch_source.note else "") + "); "
        f"torch.version.hip must be {build.rocm.hip}",
        env=torch_env,
    ))
    return steps, rocm_paths, src.family


# ============================================================================ execution hooks
def _arg(argv: Sequence[str], flag: str) -> str | None:
    for i, a in enumerate(argv[:-1]):
        if a == flag:
            return argv[i + 1]
    return None


def _provisioning(run: Any) -> list[Step]:
    return [s for s in run.plan.steps if s.name in PROVISION_STEPS]


def _lock_text(steps: Sequence[Step]) -> str | None:
    for s in steps:
        path = _arg(s.argv, "-r")
        if path:
            try:
                return Path(path).read_text(encoding="utf-8")
            except OSError as exc:
                raise EnvironmentProblem(f"cannot read lock {path}: {exc.strerror}",
                                         hint="regenerate it, or pass --no-lock") from None
    return None


def _request(url: str) -> urllib.request.Request:
    parts = urlsplit(url)
    headers = {"Accept": "text/html", "User-Agent": "rocm-wheel-toolkit"}
    if parts.username or parts.password:
        creds = f"{unquote(parts.username or '')}:{unquote(parts.password or '')}"
        headers["Authorization"] = "Basic " + base64.b64encode(creds.encode()).decode()
        host = parts.hostname or ""
        netloc = f"{host}:{parts.port}" if parts.port else host
        url = urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
    return urllib.request.Request(url, headers=headers)


def probe_index(url: str, project: str | None, what: str,
                timeout: float = PROBE_TIMEOUT_S) -> None:
    """Fail fast (one line, URL masked) when an index is unreachable or lacks ``project``."""
    parts = urlsplit(url)
    if parts.scheme == "file" or not parts.scheme:
        path = Path(unquote(parts.path) if parts.scheme else url)
        if not path.exists():
            raise EnvironmentProblem(f"{what} {mask(url)} does not exist")
        if project and parts.scheme and not (path / project).exists():
            raise EnvironmentProblem(f"{what} {mask(url)} has no {project!r} project")
        return
    target = url.rstrip("/") + "/" + (f"{project}/" if project else "")
    try:
        with urllib.request.urlopen(_request(target), timeout=timeout) as resp:
            resp.read(1)
    except urllib.error.HTTPError as exc:
        if exc.code == 404 and project:
            raise EnvironmentProblem(
                f"{what} {mask(url)} has no {project!r} project (HTTP 404 for {mask(target)})",
                hint="check --index-url/--family: the index must serve this GPU family",
            ) from None
        if exc.code in (401, 403):
            raise EnvironmentProblem(f"{what} {mask(url)} refused access (HTTP {exc.code})",
                                     hint="check the index credentials (netrc/keyring)") from None
        if project:
            raise EnvironmentProblem(
                f"{what} {mask(url)} answered HTTP {exc.code} for {mask(target)}") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise EnvironmentProblem(f"cannot reach {what} {mask(url)}: {mask(str(reason))}",
                                 hint="check the URL and the network, or pass --index-url") from None


def preflight(steps: Sequence[Step]) -> None:
    """Probe every index the provisioning steps will use, before anything is changed."""
    for s in steps:
        if not s.argv or s.argv[0] != "uv" or s.argv[1:3] != ("pip", "install"):
            continue
        locked = "-r" in s.argv
        what = "ROCm SDK index" if s.name == "install-rocm-sdk" else "torch index"
        project = None if locked else ("rocm" if s.name == "install-rocm-sdk" else "torch")
        first = _arg(s.argv, "--index-url") or _arg(s.argv, "--index")
        if first:
            probe_index(first, project, what)
        for i, a in enumerate(s.argv[:-1]):
            if a == "--find-links":
                probe_index(s.argv[i + 1], None, "find-links location")


def _resolve_interpreter(run: Any, step: Step) -> str:
    from toolkit.env.interpreters import find, probe

    build = run.plan.build
    interp = _arg(step.argv, "--python") or f"python{build.python}"
    if not os.path.isabs(interp):
        interp = find(build.python).path
    found = probe(interp)
    if found is None:
        raise EnvironmentProblem(f"the Python {build.python} interpreter {interp} does not run",
                                 hint=f"uv python install {build.python}")
    run.values[_PYTHON] = f"{interp} {'.'.join(map(str, found.version))}" + (
        "t" if found.free_threaded else "")
    return interp


def _tools_path(interp: str) -> str:
    from toolkit.env.interpreters import find_uv

    dirs: list[str] = [os.path.dirname(interp)]
    uv = find_uv()
    if uv:
        dirs.insert(0, os.path.dirname(uv))
    dirs.append(os.path.dirname(sys.executable))
    return ":".join(dict.fromkeys(d for d in dirs if d))


def before_create_env(step: Step, run: Any) -> str | None:
    from toolkit.env import venvs
    from toolkit.env.interpreters import find_uv

    env_dir: Path = run.layout.env_dir(run.plan.build)
    interp = _resolve_interpreter(run, step)
    run.values["TOOLS_PATH"] = _tools_path(interp)
    steps = _provisioning(run)
    digest = venvs.digest(((s.name, s.argv, s.env, s.unset) for s in steps),
                          interpreter=run.values[_PYTHON], lock_text=_lock_text(steps))
    run.values[_DIGEST] = digest
    stamp = venvs.is_ready(env_dir, digest)
    if stamp is not None:
        values = {k: str(v) for k, v in dict(stamp.get("values", {})).items()}
        root = values.get("ROCM_ROOT")
        if root is None or os.path.isdir(root):
            run.values.update(values)
            run.values[_REUSED] = "1"
            return f"environment {env_dir} is up to date (stamp {digest[:12]})"
    preflight(steps)
    venvs.remove(env_dir)
    if find_uv() is None:
        tool = venvs.create_with_virtualenv(interp, env_dir)
        return f"created {env_dir} with {tool} (uv not found)"
    return None


def before_reused(step: Step, run: Any) -> str | None:
    if run.values.get(_REUSED):
        return "environment up to date"
    return None


def _warn(message: str | None) -> None:
    if message:
        print(mask(message), file=sys.stderr)


def before_install_sdk(step: Step, run: Any) -> str | None:
    if run.values.get(_REUSED):
        return "environment up to date"
    if step.argv and step.argv[0] == "uv":
        return None
    from toolkit.env.rocm import check_version, find_system

    build = run.plan.build
    root = str(Path(step.argv[0]).parent.parent)
    found = find_system({"ROCM_PATH": root, "PATH": ""}, opt="/nonexistent")
    _warn(check_version(what=f"the system ROCm at {found.root}", found=found.version,
                        session=build.rocm.version,
                        allow=step.env.get(ALLOW_MISMATCH_VAR) == "1"))
    run.values.update({"ROCM_ROOT": found.root, "ROCM_BIN": f"{found.root}/bin",
                       "ROCM_CMAKE": f"{found.root}/lib/cmake",
                       "ROCM_SDK_VERSION": found.version})
    return None


def after_install_sdk(step: Step, run: Any) -> None:
    if not step.argv or step.argv[0] != "uv":
        return
    from toolkit.env.rocm import check_version, describe_pip_sdk

    build = run.plan.build
    info = describe_pip_sdk(str(run.layout.env_python(build)))
    run.values.update({"ROCM_ROOT": info.root, "ROCM_BIN": info.bin, "ROCM_CMAKE": info.cmake,
                       "ROCM_SDK_VERSION": info.version,
                       "ROCM_SDK_TARGETS": ";".join(info.targets)})
    _warn(check_version(what=f"the pip ROCm SDK ({info.root})", found=info.version,
                        session=build.rocm.version,
                        allow=step.env.get(ALLOW_MISMATCH_VAR) == "1"))


_TORCH_PROBE = (
    "import json, os, torch; "
    "print(json.dumps({'version': torch.__version__, 'hip': torch.version.hip, "
    "'lib': os.path.join(os.path.dirname(torch.__file__), 'lib')}))"
)


def torch_info(python: str) -> dict[str, Any]:
    proc = subprocess.run([python, "-c", _TORCH_PROBE], capture_output=True, text=True,
                          timeout=300, check=False)
    if proc.returncode != 0:
        last = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
        raise EnvironmentProblem(f"torch does not import in {python}: {last[0]}")
    data: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return data


def check_torch_hip(version: str, hip: str | None, session_hip: str, rocm: str,
                    allow: bool) -> str | None:
    """torch.version.hip major.minor must equal the session's HIP (one-line error otherwise)."""
    from toolkit.env.rocm import major_minor

    if hip is None:
        msg = (f"torch {version} is not a ROCm build (torch.version.hip is None, a CPU/CUDA "
               f"build); ROCm {rocm} needs torch built with HIP {session_hip}")
    elif major_minor(hip) != session_hip:
        msg = (f"torch {version} was built with HIP {hip} ({major_minor(hip)}) but ROCm {rocm} "
               f"needs HIP {session_hip}")
    else:
        return None
    if allow:
        return f"warning: {msg}; continuing because of --allow-rocm-mismatch"
    raise EnvironmentProblem(msg, hint="fix the torch source in rocm.toml, or pass "
                                       "--allow-rocm-mismatch")


def after_install_torch(step: Step, run: Any) -> None:
    build = run.plan.build
    info = torch_info(str(run.layout.env_python(build)))
    _warn(check_torch_hip(str(info["version"]), info.get("hip"), build.rocm.hip,
                          build.rocm.version, step.env.get(ALLOW_MISMATCH_VAR) == "1"))
    run.values.update({"TORCH_LIB": str(info["lib"]), "TORCH_VERSION": str(info["version"]),
                       "TORCH_HIP": str(info.get("hip"))})


def mark_ready_after_last(step: Step, run: Any) -> None:
    """The env is marked ready after the plan's last provisioning step (and its checks)."""
    from toolkit.env import venvs

    steps = _provisioning(run)
    if not steps or steps[-1].name != step.name:
        return
    build = run.plan.build
    env_dir: Path = run.layout.env_dir(build)
    digest = run.values.get(_DIGEST)
    if digest:
        learned = {k: v for k, v in run.values.items() if k not in _NOT_STORED}
        venvs.mark_ready(env_dir, digest, values=learned, described={
            "build": build.id, "python": run.values.get(_PYTHON),
            "steps": [{"name": s.name, "argv": list(s.argv)} for s in _provisioning(run)],
        })


def register_hooks() -> None:
    from toolkit.run.executor import register

    register("create-env", before=before_create_env)
    register("install-rocm-sdk", before=before_install_sdk, after=after_install_sdk)
    register("rocm-sdk-test", before=before_reused)
    register("install-torch", before=before_reused, after=after_install_torch)
    for name in PROVISION_STEPS:
        register(name, after=mark_ready_after_last)


register_hooks()
